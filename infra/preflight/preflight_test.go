package preflight

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/config"
)

// check writes yaml as run.yaml in a temporary folder (beside a copy of
// files), loads it and returns the preflight's sentences.
func check(t *testing.T, yaml string, files map[string]string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "run.yaml")
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	yaml = strings.ReplaceAll(strings.ReplaceAll(yaml, "TESTDATA", testdata), "DIR", dir)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, config.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range Check(context.Background(), cfg, Options{ConfigPath: path}) {
		out = append(out, e.Error())
	}
	return path, out
}

func TestPreflightSentences(t *testing.T) {
	completions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"message": map[string]any{"content": "2"}, "finish_reason": "stop"}}})
	}))
	defer completions.Close()

	t.Run("cloze on a chat-only server", func(t *testing.T) {
		path, got := check(t, `model:
  spec: `+completions.URL+`
  flavor: chat-only
store:
  uri: DIR/store
axes:
  knowledge:
    datasets:
      - {name: m, path: TESTDATA/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu}
`, nil)
		want := path + " line 2, model.spec: " + completions.URL + " gives no log-likelihoods, which cloze scoring of knowledge needs; set scoring_mode: generate on those axes or use a server that returns prompt logprobs (vLLM, llama-server)."
		if len(got) != 1 || got[0] != want {
			t.Errorf("got %q\nwant %q", got, want)
		}
	})
	t.Run("raw prompts to a server without /v1/completions", func(t *testing.T) {
		path, got := check(t, `model:
  spec: `+completions.URL+`
  flavor: vllm
store:
  uri: DIR/store
axes:
  if:
    datasets:
      - {name: i, path: TESTDATA/ifeval/input_data.jsonl, format: ifeval}
`, nil)
		want := path + " line 2, model.spec: " + completions.URL + " has no /v1/completions (HTTP 404); point the spec at an OpenAI-compatible server (the URL without /v1/... paths) or check model.name."
		if len(got) != 1 || got[0] != want {
			t.Errorf("got %q\nwant %q", got, want)
		}
	})
	t.Run("a bad row, an unwritable store", func(t *testing.T) {
		path, got := check(t, `model:
  spec: `+completions.URL+`
  flavor: vllm
store:
  uri: /dev/null/store
axes:
  knowledge:
    scoring_mode: generate
    datasets:
      - {name: m, path: m.jsonl, format: global_mmlu}
`, map[string]string{"m.jsonl": "{not json\n"})
		if len(got) != 3 {
			t.Fatalf("got %d sentences, want 3 (dataset, model, store): %q", len(got), got)
		}
		if !strings.HasPrefix(got[0], path+" line 10, axes.knowledge.datasets[0]: the first 5 rows do not read as format global_mmlu: ") || !strings.HasSuffix(got[0], "; fix the file or the format.") {
			t.Errorf("dataset: %q", got[0])
		}
		if !strings.HasPrefix(got[2], path+" line 5, store.uri: cannot create the store folder /dev/null/store") {
			t.Errorf("store: %q", got[2])
		}
	})
	t.Run("malformed text in the rows check reads", func(t *testing.T) {
		for _, c := range []struct{ row, want string }{
			{"{\"question\":\"Apa\xff?\",\"A\":\"x\",\"B\":\"y\",\"C\":\"z\",\"D\":\"w\",\"answer\":\"A\"}", "m.jsonl:2: field question: invalid UTF-8 at byte 16 of the record"},
			{`{"question":"Apa?","A":null,"B":"y","C":"z","D":"w","answer":"B"}`, "m.jsonl:2: field A: option A is empty or null"},
		} {
			good := `{"question":"Apa?","A":"x","B":"y","C":"z","D":"w","answer":"A"}`
			_, got := check(t, `model:
  spec: `+completions.URL+`
  flavor: vllm
store:
  uri: DIR/store
axes:
  knowledge:
    scoring_mode: generate
    datasets:
      - {name: m, path: m.jsonl, format: global_mmlu}
`, map[string]string{"m.jsonl": good + "\n" + c.row + "\n"})
			if len(got) == 0 || !strings.Contains(got[0], "axes.knowledge.datasets[0]: the first 5 rows do not read as format global_mmlu: ") || !strings.Contains(got[0], c.want) {
				t.Errorf("got %q, want a sentence with %q", got, c.want)
			}
		}
	})
	t.Run("chat messages to a GGUF without a chat template", func(t *testing.T) {
		path, got := check(t, `model:
  spec: gguf:TESTDATA/models/tiny-llama/tiny-llama.gguf
store:
  uri: DIR/store
axes:
  safety:
    scorer: rules
    datasets:
      - {name: ms_general, path: TESTDATA/safety/ms_general_sample.jsonl, format: seahelm_safeguard, lang: ms, limit: 2}
`, nil)
		if len(got) != 1 || !strings.HasPrefix(got[0], path+" line 2, model.spec: gguf:") ||
			!strings.HasSuffix(got[0], "tiny-llama.gguf: cannot format chat messages: the model has no tokenizer.chat_template; name a chat format (qa, chatml, llama3, gemma): chat_format in the config, or ?chat= in the gguf spec (safety sends chat messages).") {
			t.Errorf("got %q", got)
		}
	})
	t.Run("an axis the run skips asks nothing of the model", func(t *testing.T) {
		// MT without judges is skipped (skipped_no_judge): the run sends no
		// chat message, so the model's lack of a chat template is no problem.
		_, got := check(t, `model:
  spec: gguf:TESTDATA/models/tiny-llama/tiny-llama.gguf
store:
  uri: DIR/store
axes:
  mt:
    datasets:
      - {name: mt_bench, path: TESTDATA/mt/question.jsonl, format: mt_bench, limit: 2}
`, nil)
		if len(got) != 0 {
			t.Errorf("got %q, want no problem", got)
		}
	})
}

// TestPreflightReadsAnAxisAsTheRunDoes: check accepts what the run accepts.
// MT's reference answers are a dataset of their own that only reads beside
// a question file (the Malay suite's layout); read alone, as preflight read
// every dataset, it failed with "no question file configured" although the
// run reads the pair. A reference file that does not parse is still caught.
func TestPreflightReadsAnAxisAsTheRunDoes(t *testing.T) {
	const mt = `model:
  spec: gguf:TESTDATA/models/tiny-llama/tiny-llama.gguf
  chat_format: qa
store:
  uri: DIR/store
axes:
  mt:
    datasets:
      - {name: mt_bench, path: TESTDATA/mt/question.jsonl, format: mt_bench, limit: 2}
      - {name: mt_bench_reference, path: REFS, format: mt_bench_reference}
judges:
  - {name: j, family: j, spec: "gguf:TESTDATA/models/tiny-llama/tiny-llama.gguf", chat_format: qa}
`
	if _, got := check(t, strings.Replace(mt, "REFS", "TESTDATA/mt/reference_answer_gpt-4.jsonl", 1), nil); len(got) != 0 {
		t.Errorf("the suite's MT layout: got %q, want no problem", got)
	}
	path, got := check(t, strings.Replace(mt, "REFS", "DIR/refs.jsonl", 1), map[string]string{"refs.jsonl": "{not json\n"})
	if len(got) != 1 || !strings.HasPrefix(got[0], path+" line 10, axes.mt.datasets[1]: the first 5 rows do not read as format mt_bench_reference: ") {
		t.Errorf("a broken reference file: got %q", got)
	}
}
