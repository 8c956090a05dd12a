package activities

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/testsuite"
)

// TestWorkerRSS prints the resident set of a worker serving 20 runs of 20
// different GGUF models in a row, run by run. It runs only when
// GLOSSOBENCH_WORKER_RSS names a mode, one process per mode so the figures
// do not mix (Taskfile task worker-rss runs all three):
//
//	unbounded  every model stays open, as before the caches were bounded
//	inference  the bounded caches on a worker that never sees a run end
//	whole      a worker serving whole runs: each run's model closes at Aggregate
func TestWorkerRSS(t *testing.T) {
	mode := os.Getenv("GLOSSOBENCH_WORKER_RSS")
	if mode == "" {
		t.Skip("set GLOSSOBENCH_WORKER_RSS=unbounded|inference|whole")
	}
	models := modelCopies(t, 20)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts := New(zerolog.Nop())
	var count openCounter
	acts.OpenBackend = count.opener
	if mode == "unbounded" {
		acts.backends.keep, acts.manifests.keep, acts.pools.keep, acts.corpora.keep = 1<<30, 1<<30, 1<<30, 1<<30
	}
	acts.RegisterCPU(env)
	acts.RegisterInference(env)
	store := t.TempDir()
	start := rssKiB(t)
	for i, m := range models {
		servedRun(t, env, acts, fmt.Sprintf("run-%02d", i), m, store, mode == "whole")
		debug.FreeOSMemory()
		t.Logf("mode %-9s run %2d: %2d models open, VmRSS %6d KiB (%+6d KiB since start)", mode, i+1, count.open.Load(), rssKiB(t), rssKiB(t)-start)
	}
}

// rssKiB is this process's resident set in KiB (Linux).
func rssKiB(t *testing.T) int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.Fields(v)[0])
			if err != nil {
				t.Fatalf("/proc/self/status: VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	t.Skip("VmRSS not in /proc/self/status")
	return 0
}
