package inputs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seahelmSample is shaped like SEA-HELM's <model>_seahelm_results.json:
// language → competency → task → metrics, "total" at each level, failed
// tasks with an error and zeroed metrics.
const seahelmSample = `{
  "id": {
    "nlu": {"qa": {"inference_time_taken": [], "is_cached": false, "normalized_f1": 0, "error": "Failed to run evaluation for task"}, "total": 0.0},
    "total": 6.08
  },
  "ms": {
    "knowledge": {
      "global_mmlu_lite_virology": {"inference_time_taken": [], "is_cached": true, "accuracy": 62.5, "normalized_accuracy": 50.0, "null_count": 0, "errors": {}},
      "global_mmlu_lite": %s,
      "total": %s
    },
    "total": %s
  },
  "total": %s
}`

func TestReadSEAHELM(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []struct{ name, v string }{{"gemma-x", "42.5"}, {"llama-y", "51.25"}} {
		body := strings.ReplaceAll(seahelmSample, "%s", m.v)
		p := filepath.Join(dir, m.name+"-baseline", m.name+SEAHELMSuffix)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	for _, key := range []string{"", "ms.total", "ms.knowledge.global_mmlu_lite"} {
		got, err := ReadSEAHELM(dir, key)
		if err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		if len(got) != 2 || got["gemma-x"].Score != 42.5 || got["llama-y"].Score != 51.25 {
			t.Fatalf("%q: %v", key, got)
		}
	}
	if g, err := ReadSEAHELM(dir, "ms.knowledge.global_mmlu_lite_virology.accuracy"); err != nil || g["gemma-x"].Score != 62.5 {
		t.Fatalf("task metric: %v %v", g, err)
	}
	if !IsSEAHELMResults(dir) || IsSEAHELMResults(t.TempDir()) {
		t.Error("IsSEAHELMResults")
	}
	for key, want := range map[string]string{
		"ms.nlg.total":    "field ms.nlg: missing (there: knowledge, total)",
		"ms.knowledge":    "field ms.knowledge: not a number",
		"total.x":         "field total: not an object",
		"id.nlu.qa.error": "not a number",
	} {
		if _, err := ReadSEAHELM(dir, key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", key, err, want)
		}
	}
}
