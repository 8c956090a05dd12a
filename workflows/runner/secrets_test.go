package runner_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/results/release"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// An API key planted in the environment reaches the model server and nowhere
// else: not the workflow history (exported with the SDK), not the logs, not
// result.json nor any other object in the store, not a release bundle built
// from the run (with and without raw outputs).
func TestAPIKeyStaysOutOfHistoryLogsAndStore(t *testing.T) {
	const key = "sk-glossobench-planted-3b1f9c"
	t.Setenv("GLOSSOBENCH_TEST_API_KEY", key)
	fake := &fakeModel{seen: map[string]int{}}
	authorized := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		authorized++
		fake.ServeHTTP(w, r)
	}))
	defer hs.Close()

	_, c := runnertest.StartServer(t)
	var logs bytes.Buffer
	acts := activities.New(zerolog.New(&logs))
	defer acts.Close()
	w, err := runner.StartWorkers(c, acts, runner.All)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	storeDir := t.TempDir()
	cfg := mcqConfig(t, hs.URL, storeDir, "generate", "  flavor: vllm\n  api_key_env: GLOSSOBENCH_TEST_API_KEY\n")
	runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "secrets"})
	if authorized == 0 {
		t.Fatal("the model server never saw the key: the test proves nothing")
	}

	// EvalRun's history and its children's (each axis's InferAxis).
	var data []byte
	for i, id := range append([]string{"evalrun-secrets"}, childWorkflows(t, c, "evalrun-secrets")...) {
		hist := filepath.Join(t.TempDir(), fmt.Sprintf("history-%d.json", i))
		historyEvents(t, c, id, hist)
		raw, err := os.ReadFile(hist)
		if err != nil {
			t.Fatal(err)
		}
		// Payloads are base64 in the exported JSON: scan them decoded too.
		data = append(append(data, raw...), decodedStrings(t, raw)...)
	}
	if bytes.Contains(data, []byte(key)) {
		t.Fatal("the API key is in the workflow history")
	}
	if !bytes.Contains(data, []byte("GLOSSOBENCH_TEST_API_KEY")) {
		t.Fatal("history does not even name the key's variable: the scan looked at the wrong thing")
	}
	if strings.Contains(logs.String(), key) {
		t.Fatal("the API key is in the logs")
	}
	if n := filesWith(t, storeDir, key); n > 0 {
		t.Errorf("the API key is in %d store objects", n)
	}

	// The release bundle, as `glossobench release RUNDIR --out DIR [--include-raw]` writes it.
	run, err := release.LoadRun(filepath.Join(storeDir, "runs", "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []bool{false, true} {
		out := t.TempDir()
		if _, err := release.Write(run, out, release.Options{IncludeRaw: raw}); err != nil {
			t.Fatal(err)
		}
		if n := filesWith(t, out, key); n > 0 {
			t.Errorf("the API key is in %d files of the release bundle (include_raw %v)", n, raw)
		}
		// The scan must have read the bundle: its items name the run's items,
		// and with raw outputs they carry the model's stored predictions.
		if filesWith(t, out, `"item_id":"global_mmlu_ms/`) == 0 {
			t.Errorf("the bundle (include_raw %v) holds no knowledge item: the scan looked at the wrong thing", raw)
		}
		if raw && filesWith(t, out, `"raw":{"item_id"`) == 0 {
			t.Error("the --include-raw bundle holds no raw prediction")
		}
	}
}

// filesWith counts the files under dir whose bytes contain s, naming each.
func filesWith(t *testing.T, dir, s string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(s)) {
			t.Logf("match in %s", p)
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// decodedStrings base64-decodes every string in a JSON document that decodes.
func decodedStrings(t *testing.T, doc []byte) []byte {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var out []byte
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				out = append(append(out, b...), '\n')
			}
		}
	}
	walk(v)
	return out
}
