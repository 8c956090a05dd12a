package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/workflows/runner"
)

var (
	clusterOnce sync.Once
	cluster     *devserver.Server
	clusterErr  error
)

// testCluster is one embedded Temporal server (any free port, no UI) shared
// by the tests that run `glossobench run` end to end; TEMPORAL_ADDRESS points
// at it, so run starts no server and no worker of its own.
func testCluster(t *testing.T) *devserver.Server {
	t.Helper()
	clusterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gb-cmd-temporal-")
		if err != nil {
			clusterErr = err
			return
		}
		cluster, clusterErr = runner.Embedded(dir, "", -1, -1)
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	t.Setenv("TEMPORAL_ADDRESS", cluster.Address)
	t.Setenv("TEMPORAL_NAMESPACE", cluster.Namespace)
	return cluster
}

// runWithWorker runs `glossobench run args...` beside a worker of this
// process, both logging to the captured stderr as `glossobench run` would.
func runWithWorker(t *testing.T, srv *devserver.Server, args ...string) (int, string) {
	t.Helper()
	return captured(t, func() int {
		log := newLogger()
		c, w, err := connectAndServe(srv.Address, srv.Namespace, log, runner.All)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		defer w.Stop()
		return mainCode(append([]string{"run"}, args...))
	})
}

// writeConfig writes a config beside the repository's test data (so its
// relative dataset paths resolve) and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	abs, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "run.yaml")
	yaml = strings.ReplaceAll(yaml, "TESTDATA", abs)
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// noJSONLines fails when the console output holds a JSON log line.
func noJSONLines(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			t.Errorf("a JSON line in the console output: %s", l)
		}
	}
}

// TestUnreachableModelFailsInSeconds: a model URL with nothing behind it
// fails before any workflow starts, within 15 seconds, with one sentence.
func TestUnreachableModelFailsInSeconds(t *testing.T) {
	// An address with nothing behind it too: had preflight let the run
	// through, it would fail on Temporal with another message.
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	store := t.TempDir()
	cfg := writeConfig(t, `model:
  spec: http://127.0.0.1:1
store:
  uri: `+store+`
axes:
  if:
    datasets:
      - {name: ifeval, path: TESTDATA/ifeval/input_data.jsonl, format: ifeval, limit: 3}
`)
	start := time.Now()
	code, out := captured(t, func() int { return mainCode([]string{"run", "--config", cfg}) })
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %v, want under 15 s", took)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := cfg + " line 2, model.spec: nothing answers at http://127.0.0.1:1 (connection refused); start the model server or correct the URL.\nnothing was started.\n"
	if out != want {
		t.Errorf("output\n%s\nwant\n%s", out, want)
	}
}

// missingDatasetConfig is a run config whose one dataset file is missing
// (axes.knowledge.datasets[0].path, line 9).
func missingDatasetConfig(t *testing.T) string {
	t.Helper()
	return writeConfig(t, `model:
  spec: gguf:TESTDATA/models/tiny-llama/tiny-llama.gguf
store:
  uri: `+t.TempDir()+`
axes:
  knowledge:
    datasets:
      - name: global_mmlu_ms
        path: data/missing.jsonl
        format: global_mmlu
`)
}

// TestMissingDatasetSentence: preflight names the file, line and field.
func TestMissingDatasetSentence(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	cfg := missingDatasetConfig(t)
	code, out := captured(t, func() int { return mainCode([]string{"check", "--config", cfg}) })
	want := cfg + " line 9, axes.knowledge.datasets[0].path: no file at " + filepath.Join(filepath.Dir(cfg), "data/missing.jsonl") +
		"; correct the path (a relative path is read from the config file's folder).\n"
	if code != 1 || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d, output\n%s\nwant it to start\n%s", code, out, want)
	}
}

// TestRunFailureIsOneSentence: a run that fails inside the workflow (preflight
// skipped, the dataset missing) ends with the activity's own message and the
// workflow id, not Temporal's error chain, and logs no JSON.
func TestRunFailureIsOneSentence(t *testing.T) {
	srv := testCluster(t)
	cfg := missingDatasetConfig(t)
	code, out := runWithWorker(t, srv, "--config", cfg, "--skip-preflight", "--run-id", "missing-dataset")
	t.Logf("output:\n%s", out)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	missing := filepath.Join(filepath.Dir(cfg), "data/missing.jsonl")
	want := "run failed: config: axes.knowledge.datasets[0].path: open " + missing + ": no such file or directory\n" +
		"Temporal UI: workflow id evalrun-missing-dataset (namespace " + srv.Namespace + ")\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("output ends\n%s\nwant\n%s", out, want)
	}
	for _, chain := range []string{"workflow execution error", "activity error", "scheduledEventID"} {
		if strings.Contains(out, chain) {
			t.Errorf("output shows Temporal's error chain (%q):\n%s", chain, out)
		}
	}
	noJSONLines(t, out)
}

// TestMidRunOutageIsRetried: a model that answered at the start and then goes
// away for a while is waited for (the Infer activity retried), and the run
// finishes; the retry is one readable line, and no JSON is logged.
func TestMidRunOutageIsRetried(t *testing.T) {
	srv := testCluster(t)
	var calls, failed atomic.Int64
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/completions" {
			http.NotFound(w, r)
			return
		}
		// The first call (preflight) is answered; the next 4 are an outage
		// longer than one attempt's retries; then the server is back.
		if n := calls.Add(1); n > 1 && n <= 5 {
			failed.Add(1)
			http.Error(w, "model is reloading", http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"text": "Baik.", "finish_reason": "stop"}}})
	}))
	defer model.Close()
	cfg := writeConfig(t, `model:
  spec: `+model.URL+`
  flavor: vllm
  max_retries: 1
  concurrency: 1
store:
  uri: `+t.TempDir()+`
run:
  shard_size: 3
axes:
  if:
    datasets:
      - {name: ifeval, path: TESTDATA/ifeval/input_data.jsonl, format: ifeval, limit: 3}
`)
	code, out := runWithWorker(t, srv, "--config", cfg, "--run-id", "outage")
	t.Logf("output:\n%s", out)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	if failed.Load() != 4 {
		t.Errorf("%d requests met the outage, want 4", failed.Load())
	}
	if !strings.Contains(out, "Infer failed on attempt 1; Temporal retries it: ") {
		t.Errorf("no retry line in the output:\n%s", out)
	}
	noJSONLines(t, out)
}

// TestQuickStartLog runs the quick start as a newcomer would, output into a
// file: the log holds no JSON line and one progress line per stage an axis
// enters, not a redrawn table per refresh.
func TestQuickStartLog(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole quick start")
	}
	srv := testCluster(t)
	src, err := os.ReadFile("../../testdata/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("../../testdata")
	cfg := strings.ReplaceAll(string(src), "path: ", "path: "+abs+"/")
	cfg = strings.ReplaceAll(cfg, "gguf:models/", "gguf:"+abs+"/models/")
	cfg += "store:\n  uri: " + t.TempDir() + "\n"
	path := filepath.Join(t.TempDir(), "quickstart.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runWithWorker(t, srv, "--config", path, "--run-id", "quickstart-log")
	t.Logf("output:\n%s", out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	noJSONLines(t, out)
	// 7 axes, each through at most pending, inference, judging, probes, scoring, audit, done.
	if n := strings.Count(out, " ETA "); n > 7*7 {
		t.Errorf("%d progress lines, want at most one per axis and stage (49)", n)
	}
	if strings.Contains(out, "\033") {
		t.Error("terminal escapes in a file's log")
	}
	// Issue 26 item 6: all seven axes have a number (the tiny judge's
	// replies are constrained to the rating schema), in a table a newcomer
	// reads as a success, with the warnings after it.
	if !strings.Contains(out, "finished: 7 of 7 axes scored") {
		t.Error("the summary does not say that all 7 axes were scored")
	}
	for _, axis := range []string{"knowledge", "nlu", "if", "nlg", "mt", "safety", "cultural"} {
		row := regexp.MustCompile(`(?m)^  ` + axis + `\s+\d+\s+\d\.\d{4}\s+\[\d\.\d{4}, \d\.\d{4}\]\s+\S+`)
		if !row.MatchString(out) {
			t.Errorf("no table row with n, score and CI for %s", axis)
		}
	}
	if w, table := strings.Index(out, "\nwarnings:\n"), strings.Index(out, "  ms_ranking "); w >= 0 && w < table {
		t.Error("warnings printed before the table")
	}
}

// TestRunIDRefusedBeforeStart: a run id that would name another folder of
// the store (a/b writes into run a's folder) is refused in one sentence
// before anything starts (TEMPORAL_ADDRESS has nothing behind it: a run that
// got as far as Temporal would fail with another message).
func TestRunIDRefusedBeforeStart(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	cfg := writeConfig(t, `model:
  spec: http://127.0.0.1:1
store:
  uri: `+t.TempDir()+`
axes:
  if:
    datasets:
      - {name: ifeval, path: TESTDATA/ifeval/input_data.jsonl, format: ifeval, limit: 3}
`)
	for id, want := range map[string]string{
		"a/b":    `run: --run-id "a/b" has "/" at byte 1; a run id is 1 to 128 of A-Z a-z 0-9 . _ - : starting with a letter or digit, without ".."` + "\n",
		"..":     `run: --run-id ".." starts with "."; a run id is 1 to 128 of A-Z a-z 0-9 . _ - : starting with a letter or digit, without ".."` + "\n",
		"/abs":   `run: --run-id "/abs" starts with "/"; a run id is 1 to 128 of A-Z a-z 0-9 . _ - : starting with a letter or digit, without ".."` + "\n",
		"x/../y": `run: --run-id "x/../y" contains ".."; a run id is 1 to 128 of A-Z a-z 0-9 . _ - : starting with a letter or digit, without ".."` + "\n",
	} {
		code, out := captured(t, func() int { return mainCode([]string{"run", "--config", cfg, "--run-id", id}) })
		if code != 2 || out != want {
			t.Errorf("--run-id %q: exit %d, output\n%s\nwant exit 2 and\n%s", id, code, out, want)
		}
	}
}
