package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends/gguf"
	"github.com/glossobench/glossobench/infra/runfiles"
)

// brokenRun runs `glossobench run` on cfg into out and checks that it
// failed fast: exit 1 within a minute, every configured axis failed with the
// cause as its note (in the output and in result.json), and the cause reads
// want. flags are more flags of run.
func brokenRun(t *testing.T, cfg, out, runID, want string, axes []string, flags ...string) {
	t.Helper()
	srv := testCluster(t)
	start := time.Now()
	code, log := runWithWorker(t, srv, append([]string{"--config", cfg, "--run-id", runID, "--out", out}, flags...)...)
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

// TestNaNModelFailsFast: a GGUF whose logits are NaN (nanModel) opens; a
// run that skips preflight (which refuses it, TestCheckRefusesNaNModel) ends
// each axis on its first Infer attempt with the cause as its note, and
// exits 1, within a minute (it used to retry every 30 s for the whole
// budget and exit 0).
func TestNaNModelFailsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a model and runs an evaluation")
	}
	nan := nanModel(t)
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
	brokenRun(t, cfg, t.TempDir(), "nan-model", "the model computed NaN or infinite values", []string{"knowledge", "if"}, "--skip-preflight")
}

// nanModel writes the tiny model with its final norm's weights NaN (as the
// gguf package's own tests make it) and returns its path: the file opens,
// tokenizes and runs, and every logit it computes is NaN, as from broken
// weights or an overflow.
func nanModel(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../testdata/models/tiny-llama/tiny-llama.gguf")
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(data) // tensor data points into data
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ti := range f.Tensors {
		if ti.Name == "output_norm.weight" && ti.Type == gguf.TypeF32 {
			for i := 0; i+4 <= len(ti.Data); i += 4 {
				binary.LittleEndian.PutUint32(ti.Data[i:], math.Float32bits(float32(math.NaN())))
			}
			found = true
		}
	}
	if !found {
		t.Fatal("the tiny model has no F32 output_norm.weight")
	}
	path := filepath.Join(t.TempDir(), "nan.gguf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
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
	brokenRun(t, cfg, t.TempDir(), "http-400", "HTTP 400: 'seed' is not a supported parameter", []string{"if"})
	// One attempt: the first chunk's 400s end the axis (checkpoint_every,
	// 10, items are asked at most), where each of the 20 items was asked.
	if n := calls.Load() - 1; n > 10 {
		t.Errorf("%d requests after preflight, want at most one chunk of 10", n)
	}
}

// TestCheckRefusesNaNModel: check probes a GGUF with one short forward and
// refuses a model file that computes NaN, naming the file: as the evaluated
// model of axes that send no chat message (check used to pass it, and the
// run then failed every request), and as a judge. The intact tiny model
// passes the same probes.
func TestCheckRefusesNaNModel(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "")
	nan := nanModel(t)
	tiny, err := filepath.Abs("../../testdata/models/tiny-llama/tiny-llama.gguf")
	if err != nil {
		t.Fatal(err)
	}
	const cloze = `model:
  spec: gguf:MODEL
store:
  uri: STORE
axes:
  knowledge:
    scoring_mode: cloze
    datasets:
      - {name: global_mmlu_ms, path: TESTDATA/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 4}
  if:
    datasets:
      - {name: ifeval, path: TESTDATA/ifeval/input_data.jsonl, format: ifeval, limit: 2}
`
	const judged = `model:
  spec: gguf:MODEL
  chat_format: qa
store:
  uri: STORE
axes:
  mt:
    datasets:
      - {name: mt_bench, path: TESTDATA/mt/question.jsonl, format: mt_bench, limit: 2}
judges:
  - {name: j, family: j, spec: "gguf:JUDGE", chat_format: qa}
`
	check := func(body, model, judge string) (int, string) {
		r := strings.NewReplacer("MODEL", model, "JUDGE", judge, "STORE", t.TempDir())
		cfg := writeConfig(t, r.Replace(body))
		return captured(t, func() int { return mainCode([]string{"check", "--config", cfg}) })
	}
	for _, c := range []struct {
		name, body, model, judge, field string
	}{
		{"model", cloze, nan, "", "model.spec"},
		{"judge", judged, tiny, nan, "judges[0].spec"},
	} {
		code, out := check(c.body, c.model, c.judge)
		want := c.field + ": the model file " + nan + " computes NaN or infinite values on a one-token probe"
		if code != 1 || !strings.Contains(out, want) || strings.Count(out, "one-token probe") != 1 {
			t.Errorf("%s NaN: exit %d, output:\n%s\nwant exit 1 and one sentence with %q", c.name, code, out, want)
		}
		if code, out := check(c.body, tiny, tiny); code != 0 {
			t.Errorf("%s, the tiny model: exit %d\n%s", c.name, code, out)
		}
	}
}

// TestBrokenJudgeFailsFast: a judge that fails every request alike ends the
// judged axis with its cause as the note, and run exits 1, within a minute:
// a GGUF judge computing NaN (it would pass preflight on an older check,
// so preflight is skipped here), and a judge server that answers preflight
// and then refuses every request with HTTP 400. Each used to be asked every
// request three times, its ratings dropped, and the run to exit 0 with the
// axis scored on nothing.
func TestBrokenJudgeFailsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two evaluations")
	}
	const body = `model:
  spec: gguf:TESTDATA/models/tiny-llama/tiny-llama.gguf
  chat_format: qa
store:
  uri: STORE
axes:
  mt:
    max_tokens: 4
    datasets:
      - {name: mt_bench, path: TESTDATA/mt/question.jsonl, format: mt_bench, limit: 3}
judges:
  - JUDGE
`
	cfg := func(judge string) string {
		return writeConfig(t, strings.NewReplacer("STORE", t.TempDir(), "JUDGE", judge).Replace(body))
	}
	t.Run("NaN", func(t *testing.T) {
		nan := nanModel(t)
		brokenRun(t, cfg(`{name: nan-judge, family: j, spec: "gguf:`+nan+`", chat_format: qa}`), t.TempDir(), "nan-judge",
			"judge nan-judge (gguf:"+nan+"): ", []string{"mt"}, "--skip-preflight")
	})
	t.Run("HTTP 400", func(t *testing.T) {
		var calls atomic.Int64
		judge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				http.NotFound(w, r)
				return
			}
			if calls.Add(1) == 1 { // preflight
				json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"content": "[[5]]"}, "finish_reason": "stop"}}})
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"'json_schema' is not a supported response_format","type":"invalid_request_error"}}`))
		}))
		defer judge.Close()
		brokenRun(t, cfg(`{name: api-judge, family: j, spec: "`+judge.URL+`"}`), t.TempDir(), "http-400-judge",
			"HTTP 400: 'json_schema' is not a supported response_format", []string{"mt"})
		// The first 400 ends the stage: the judge's four slots were in
		// flight at most, never every request three times (3 items × 2 turns).
		if n := calls.Load() - 1; n > 4 {
			t.Errorf("%d judge requests after preflight, want at most 4", n)
		}
	})
}
