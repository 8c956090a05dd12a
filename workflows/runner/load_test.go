package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/internal/rss"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// Fault-matrix case 7a: 20 EvalRuns started at once on one worker pool all
// complete, each with the result of a single undisturbed run, and the model
// saw every item exactly once per run.
func TestLoadTwentyRunsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("21 EvalRuns")
	}
	c := serverWithWorkers(t)
	fake := &fakeModel{seen: map[string]int{}}
	hs := httptest.NewServer(fake)
	defer hs.Close()
	storeDir := t.TempDir()
	cfg := mcqConfig(t, hs.URL, storeDir, "generate", "  flavor: vllm\n  concurrency: 8\n")

	ref := readResult(t, runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "load-ref"}).Summary.ResultPath)
	const runs = 20
	start := time.Now()
	results := make([]workflows.EvalRunResult, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Not runEval: t.Fatal must not be called off the test goroutine.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			id := fmt.Sprintf("load-%02d", i)
			we, err := c.ExecuteWorkflow(ctx, startOptions(id), workflows.WorkflowName, workflows.EvalRunInput{Config: cfg, RunID: id})
			if err == nil {
				err = we.Get(ctx, &results[i])
			}
			if err != nil {
				t.Errorf("run %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if t.Failed() {
		t.FailNow()
	}
	completed, lost := 0, 0
	for i, res := range results {
		got := readResult(t, res.Summary.ResultPath)
		same := *got.Summary.MSPublic == *ref.Summary.MSPublic
		for axis, want := range ref.Axes {
			g := got.Axes[axis]
			lost += max(want.N-g.N, 0)
			if g.Score == nil || *g.Score != *want.Score || g.N != want.N || *g.CI95 != *want.CI95 {
				same = false
				t.Errorf("run %d axis %s: %+v, single run %+v", i, axis, g.AxisResult, want.AxisResult)
			}
		}
		if same {
			completed++
		}
	}
	// Every prompt is asked once per run: 21 runs of the same 52 items.
	fake.mu.Lock()
	items, reasked := len(fake.seen), 0
	for p, n := range fake.seen {
		if n != runs+1 {
			reasked += max(n-(runs+1), 0)
			t.Errorf("prompt asked %d times over %d runs: %.60q", n, runs+1, p)
		}
	}
	fake.mu.Unlock()
	if items != 20+20+12 {
		t.Errorf("the model saw %d distinct prompts, want 52", items)
	}
	t.Logf("%d runs at once on one worker pool: %d completed with the single run's result in %s", runs, completed, took.Round(time.Millisecond))
	chaosRow(t, "7 load: 20 runs at once", runs, completed, lost, reasked, 0, took)
}

func startOptions(runID string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: "evalrun-" + runID, TaskQueue: workflows.TaskQueue}
}

// quickModel answers /v1/completions at once with a letter derived from the
// prompt and counts how often it saw each prompt (by hash, to stay small).
type quickModel struct {
	mu   sync.Mutex
	seen map[[16]byte]int32
}

func (q *quickModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt string `json:"prompt"`
	}
	if r.URL.Path != "/v1/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "unsupported", http.StatusNotFound)
		return
	}
	h := sha256.Sum256([]byte(req.Prompt))
	q.mu.Lock()
	q.seen[[16]byte(h[:16])]++
	q.mu.Unlock()
	fmt.Fprintf(w, `{"choices":[{"index":0,"text":" %c","finish_reason":"stop"}],"usage":{"completion_tokens":1}}`, 'A'+rune(h[0])%4)
}

func (q *quickModel) counts() (distinct, repeated int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, n := range q.seen {
		repeated += int(n) - 1
	}
	return len(q.seen), repeated
}

// startQueueWorker starts `glossobench worker --queues QUEUES` against addr,
// its log in a file beside the test's temporary files.
func startQueueWorker(t *testing.T, bin, addr, queues string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "worker", "--queues", queues)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+addr, "TEMPORAL_NAMESPACE=default")
	logf, err := os.Create(filepath.Join(t.TempDir(), queues+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	return cmd
}

// peakRSS returns a live process's peak resident set size (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skipf("no /proc to read the worker's peak RSS: %v", err)
	}
	n, err := rss.Peak(pid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// loadRun is one measured run: peak RSS of the CPU and the inference worker.
type loadRun struct {
	items            int
	cpuPeak, infPeak int64
	took             time.Duration
	repeated         int
	scored           int
}

// runMeasured runs an n-item knowledge run on fresh subprocess workers (one
// per task queue, so each one's peak is its own) and reads their peaks.
func runMeasured(t *testing.T, bin, addr string, c client.Client, n int) loadRun {
	t.Helper()
	cpu := startQueueWorker(t, bin, addr, "cpu")
	inf := startQueueWorker(t, bin, addr, "inference")
	model := &quickModel{seen: map[[16]byte]int32{}}
	hs := httptest.NewServer(model)
	defer hs.Close()
	data := writeSynthetic(t, n)
	cfg := fmt.Sprintf(`model: {spec: %q, id: quick, flavor: vllm, concurrency: 8}
store: {uri: %s}
run: {shard_size: 500, checkpoint_every: 100, parallel_shards: 4, bootstrap_resamples: 200}
axes:
  knowledge:
    scoring_mode: generate
    datasets: [{name: syn, path: %s, format: global_mmlu}]
`, hs.URL, t.TempDir(), data)
	start := time.Now()
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: fmt.Sprintf("load-mem-%d", n)})
	lr := loadRun{items: n, took: time.Since(start)}
	lr.cpuPeak, lr.infPeak = peakRSS(t, cpu.Process.Pid), peakRSS(t, inf.Process.Pid)
	cpu.Process.Kill()
	inf.Process.Kill()
	distinct, repeated := model.counts()
	lr.repeated = repeated
	if distinct != n {
		t.Errorf("%d items: the model saw %d distinct prompts", n, distinct)
	}
	lr.scored = readResult(t, res.Summary.ResultPath).Axes["knowledge"].N
	t.Logf("%d items in %s: peak RSS cpu worker %d MiB, inference worker %d MiB; model calls repeated %d",
		n, lr.took.Round(time.Millisecond), lr.cpuPeak>>20, lr.infPeak>>20, repeated)
	return lr
}

// Fault-matrix case 7b: worker memory stays bounded as a run grows. The
// inference worker holds one shard's items at a time, so its peak RSS must
// not grow with the run. The CPU worker streams an axis too (Prepare,
// Dedup, Score and Aggregate keep a few dozen bytes per item, see
// activities TestStagesStreamAnAxis); what still grows with the axis is the
// leakage audit, which needs every item's rating, label and source at once
// (about 0.5 KiB per row live, twice that in RSS with the collector's
// headroom). Before streaming the CPU worker grew 2.7 KiB per item. The
// always-on variant compares 2,000 with 10,000 items; GLOSSOBENCH_CHAOS_LOAD=1
// makes the large run 100,000 items.
func TestLoadWorkerMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two EvalRuns on subprocess workers")
	}
	large := 10000
	if os.Getenv("GLOSSOBENCH_CHAOS_LOAD") != "" {
		large = 100000
	}
	srv, c := runnertest.StartServer(t)
	bin := buildBinary(t)
	small := runMeasured(t, bin, srv.Address, c, 2000)
	big := runMeasured(t, bin, srv.Address, c, large)
	for _, r := range []loadRun{small, big} {
		if r.scored != r.items || r.repeated != 0 {
			t.Errorf("%d items: %d scored, %d model calls repeated", r.items, r.scored, r.repeated)
		}
	}
	// Streaming: 5× (or 50×) the items may cost the inference worker a
	// little (history caches, connection pools), never in proportion.
	growth := big.infPeak - small.infPeak
	if limit := int64(48 << 20); growth > limit {
		t.Errorf("inference worker peak grew %d MiB from %d to %d items: items are held, not streamed", growth>>20, small.items, big.items)
	}
	// The CPU worker's growth is the audit's rows, never the items.
	perItem := float64(big.cpuPeak-small.cpuPeak) / float64(big.items-small.items)
	if perItem > 1536 {
		t.Errorf("cpu worker peak grows %.0f bytes per item (from %d to %d items); want under 1.5 KiB", perItem, small.items, big.items)
	}
	t.Logf("cpu worker peak grows %.1f KiB per item", perItem/1024)
	t.Logf("inference worker peak: %d MiB at %d items, %d MiB at %d items", small.infPeak>>20, small.items, big.infPeak>>20, big.items)
	t.Logf("cpu worker peak: %d MiB at %d items, %d MiB at %d items", small.cpuPeak>>20, small.items, big.cpuPeak>>20, big.items)
	chaosRow(t, fmt.Sprintf("7 load: %d-item run, peak RSS inf %d MiB cpu %d MiB", big.items, big.infPeak>>20, big.cpuPeak>>20),
		2, boolInt(small.scored == small.items)+boolInt(big.scored == big.items), (small.items-small.scored)+(big.items-big.scored), small.repeated+big.repeated, 0, big.took)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
