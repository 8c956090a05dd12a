package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// brokenRun runs `glossobench run` on cfg into out and checks that it
// failed fast: exit 1 within a minute, every configured axis failed with the
// cause as its note (in the output and in result.json), and the cause reads
// want.
func brokenRun(t *testing.T, cfg, out, runID, want string, axes ...string) {
	t.Helper()
	srv := testCluster(t)
	start := time.Now()
	code, log := runWithWorker(t, srv, "--config", cfg, "--run-id", runID, "--out", out)
	took := time.Since(start)
	t.Logf("took %v; output:\n%s", took, log)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if took > time.Minute {
		t.Errorf("took %v, want under a minute", took)
	}
	var res runfiles.Result
	if err := runfiles.DecodeJSON("result.json", []byte(readFile(t, filepath.Join(out, "result.json"))), &res); err != nil {
		t.Fatal(err)
	}
	for _, axis := range axes {
		if !strings.Contains(log, "axis "+axis+" failed: ") || !strings.Contains(log, want) {
			t.Errorf("the output does not say axis %s failed with %q", axis, want)
		}
		found := false
		for _, sk := range res.Summary.SkippedAxes {
			found = found || sk.Axis == axis && sk.Failed && strings.Contains(sk.Reason, want)
		}
		noted := false
		for _, n := range res.Summary.Notes {
			noted = noted || strings.HasPrefix(n, "axis "+axis+" failed: ") && strings.Contains(n, want)
		}
		if !found || !noted {
			t.Errorf("result.json: axis %s failed %v, noted %v; skipped %+v, notes %q", axis, found, noted, res.Summary.SkippedAxes, res.Summary.Notes)
		}
		if _, scored := res.Axes[axis]; scored {
			t.Errorf("result.json scores the failed axis %s", axis)
		}
	}
}

// TestNaNModelFailsFast: a GGUF whose logits are NaN (the tiny model with
// its final norm NaN, written by the gguf package's TestWriteNaNModel) opens
// and passes preflight; the run then ends each axis on its first Infer
// attempt with the cause as its note, and exits 1, within a minute (it used
// to retry every 30 s for the whole budget and exit 0).
func TestNaNModelFailsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a model and runs an evaluation")
	}
	nan := filepath.Join(t.TempDir(), "nan.gguf")
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestWriteNaNModel$", "-v", "../../backends/gguf/")
	cmd.Env = append(os.Environ(), "GLOSSOBENCH_WRITE_NAN_MODEL="+nan)
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("writing the model: %v\n%s", err, out)
	}
	cfg := writeConfig(t, `model:
  spec: gguf:`+nan+`
store:
  uri: `+t.TempDir()+`
axes:
  knowledge:
    scoring_mode: cloze
    datasets:
      - {name: global_mmlu_ms, path: TESTDATA/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 4}
  if:
    datasets:
      - {name: ifeval, path: TESTDATA/ifeval/input_data.jsonl, format: ifeval, limit: 2}
`)
	brokenRun(t, cfg, t.TempDir(), "nan-model", "the model computed NaN or infinite values", "knowledge", "if")
}

// TestClientErrorFailsFast: a server that answers preflight and then refuses
// every request with HTTP 400 ends the axis at once with the server's
// message, and the run exits 1 (each item used to be recorded as failed and
// the run to exit 0); the model is not asked again and again.
func TestClientErrorFailsFast(t *testing.T) {
	var calls atomic.Int64
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/completions" {
			http.NotFound(w, r)
			return
		}
		if calls.Add(1) == 1 { // preflight
			json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"text": "Baik.", "finish_reason": "stop"}}})
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"message":"'seed' is not a supported parameter","type":"invalid_request_error"}}`))
	}))
	defer model.Close()
	cfg := writeConfig(t, `model:
  spec: `+model.URL+`
  flavor: vllm
  concurrency: 1
store:
  uri: `+t.TempDir()+`
axes:
  if:
    datasets:
      - {name: ifeval, path: TESTDATA/ifeval/input_data.jsonl, format: ifeval, limit: 20}
`)
	brokenRun(t, cfg, t.TempDir(), "http-400", "HTTP 400: 'seed' is not a supported parameter", "if")
	// One attempt: the first chunk's 400s end the axis (checkpoint_every,
	// 10, items are asked at most), where each of the 20 items was asked.
	if n := calls.Load() - 1; n > 10 {
		t.Errorf("%d requests after preflight, want at most one chunk of 10", n)
	}
}
