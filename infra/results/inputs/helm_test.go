package inputs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// helmSample is shaped like a helm-summarize groups file: a list of
// tables, each with a header and rows of cells (value, description,
// markdown, run_spec_names, ...), one model per row, a cell without value
// where the model has no result.
const helmSample = `[
  {"title": "Accuracy", "header": [
      {"value": "Model/adapter", "markdown": false, "metadata": {}},
      {"value": "Mean win rate", "description": "How many models this model outperforms on average", "lower_is_better": false, "metadata": {}},
      {"value": "MMLU - EM", "description": "exact match", "lower_is_better": false, "metadata": {"metric": "EM", "run_group": "MMLU"}}],
   "rows": [
      [{"value": "GPT-2 (124M)", "description": "", "markdown": false}, {"value": 0.25, "markdown": false}, {"value": 0.231, "description": "min=0.2, mean=0.231", "run_spec_names": ["mmlu:subject=anatomy,model=openai_gpt2"]}],
      [{"value": "Llama 3 (8B)", "markdown": false}, {"value": 0.75}, {"value": 0.66}],
      [{"value": "Model C"}, {"value": 0.5}, {"description": "No matching runs", "markdown": false}]],
   "links": [{"text": "LaTeX", "href": "benchmark_output/runs/v1/groups/latex/core_scenarios_accuracy.tex"}],
   "name": "accuracy"},
  {"title": "Efficiency", "header": [{"value": "Model/adapter"}, {"value": "Mean win rate"},
      {"value": "Observed inference time (s)", "description": "Average observed time to process a request to the model", "lower_is_better": true}],
   "rows": [[{"value": "GPT-2 (124M)"}, {"value": 0.9}, {"value": 0.41}]]}
]`

func TestReadHELMGroups(t *testing.T) {
	p := filepath.Join(t.TempDir(), "core_scenarios.json")
	os.WriteFile(p, []byte(helmSample), 0o644)
	if !IsHELMGroups(p) {
		t.Fatal("IsHELMGroups")
	}
	got, err := ReadHELMGroups(p, "", "")
	if err != nil || len(got) != 3 || got["Llama 3 (8B)"].Score != 0.75 {
		t.Fatalf("mean win rate: %v %v", got, err)
	}
	got, err = ReadHELMGroups(p, "Accuracy", "MMLU - EM")
	if err != nil || len(got) != 2 || got["GPT-2 (124M)"].Score != 0.231 {
		t.Fatalf("MMLU - EM (Model C has no value): %v %v", got, err)
	}
	if got, err := ReadHELMGroups(p, "Efficiency", ""); err != nil || got["GPT-2 (124M)"].Score != 0.9 || got["GPT-2 (124M)"].LowerIsBetter {
		t.Fatalf("efficiency: %v %v", got, err)
	}
	if got, err := ReadHELMGroups(p, "Efficiency", "Observed inference time (s)"); err != nil || !got["GPT-2 (124M)"].LowerIsBetter {
		t.Fatalf("inference time, lower_is_better: %v %v", got, err)
	}
	for _, c := range []struct{ table, col, want string }{
		{"Calibration", "", `no table titled "Calibration" (tables: Accuracy; Efficiency)`},
		{"Accuracy", "F1", `no column "F1" (columns: Model/adapter; Mean win rate; MMLU - EM)`},
	} {
		if _, err := ReadHELMGroups(p, c.table, c.col); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v", c.table, c.col, err)
		}
	}
}
