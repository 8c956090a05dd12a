package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/glossobench/glossobench/infra/runner"
)

// TestReproduceCommand: a run compared with a copy of itself reproduces
// (exit 0); a rerun whose headline left the earlier CI is non-determinism
// (exit 2), named per axis.
func TestReproduceCommand(t *testing.T) {
	earlier := filepath.Join("..", "..", "testdata", "runs", "quickstart-tiny-llama")
	if code, out, errs := runCmd(reproduceMain, earlier, earlier); code != 0 || !strings.Contains(out, "ms_public") || strings.Contains(out, "NON-DETERMINISM") {
		t.Fatalf("itself: exit %d\n%s%s", code, out, errs)
	}
	data, err := os.ReadFile(filepath.Join(earlier, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The rerun: the same pins, ms_public far outside the earlier interval.
	rerun := t.TempDir()
	s := string(data)
	i := strings.Index(s, `"ms_public":`)
	j := i + strings.IndexAny(s[i:], ",}")
	os.WriteFile(filepath.Join(rerun, "result.json"), []byte(s[:i]+`"ms_public": 0.999`+s[j:]), 0o644)
	code, out, errs := runCmd(reproduceMain, earlier, rerun)
	if code != 2 || !strings.Contains(out, "ms_public") || !strings.Contains(out, "NON-DETERMINISM") {
		t.Fatalf("drifted rerun: exit %d\n%s%s", code, out, errs)
	}
}

// TestReproduceRerunsTheRunsPins: `reproduce RUN_DIR --config FILE` reruns
// the finished run on its model with its pins and prints the verdict per
// axis; a rerun that left the earlier CI is non-determinism (exit 2), kept
// as a note beside the run's leaderboard row, which `leaderboard show`
// prints. A config that is not the run's is refused before anything runs.
func TestReproduceRerunsTheRunsPins(t *testing.T) {
	srv := testCluster(t)
	var answer atomic.Value
	answer.Store("Baik.") // no comma: every item keeps its instruction
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/completions" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"text": answer.Load().(string), "finish_reason": "stop"}}})
	}))
	defer model.Close()
	var data strings.Builder
	for i := range 4 {
		fmt.Fprintf(&data, `{"key": %d, "prompt": "Write line %d. Do not use any commas.", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}`+"\n", i, i)
	}
	dataset := writeTemp(t, "nocomma.jsonl", data.String())
	root := t.TempDir()
	cfg := writeConfig(t, `model:
  spec: `+model.URL+`
  flavor: vllm
  concurrency: 1
store:
  uri: `+root+`
axes:
  if:
    datasets:
      - {name: nocomma, path: `+dataset+`, format: ifeval}
`)
	if code, out := runWithWorker(t, srv, "--config", cfg, "--run-id", "first"); code != 0 {
		t.Fatalf("the run: exit %d\n%s", code, out)
	}
	runDir := filepath.Join(root, "runs", "first")
	runOK(t, leaderboardMain, "append", runDir)

	other := writeConfig(t, readFile(t, cfg)+"run:\n  seed: 99\n")
	if code, out, errs := runCmd(reproduceMain, runDir, "--config", other); code != 1 || !strings.Contains(errs, "not the run's pins") {
		t.Errorf("another config: exit %d\n%s%s", code, out, errs)
	}

	answer.Store("Baik, ya.") // a comma: every item now fails
	code, out := captured(t, func() int {
		c, w, err := connectAndServe(srv.Address, srv.Namespace, newLogger(), runner.All)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		defer w.Stop()
		return mainCode([]string{"reproduce", runDir, "--config", cfg, "--run-id", "second"})
	})
	if code != 2 || !regexp.MustCompile(`(?m)^if\s+earlier 1\.0000\s+rerun 0\.0000\s+CI \[1\.0000, 1\.0000\]\s+NON-DETERMINISM`).MatchString(out) ||
		!strings.Contains(out, "noted on leaderboard/ms/v1 row 0") {
		t.Fatalf("drifted rerun: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(root, "runs", "second", "result.json")); err != nil {
		t.Errorf("the rerun left no result: %v", err)
	}
	show := runOK(t, leaderboardMain, "show", "--store", root)
	wantOutput(t, show, "note on row 0 (", "non-determinism: rerun second with identical pins did not reproduce run first: if 0.0000")
}
