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

// TestReadHELMPublishedGroups reads helm-summarize's own output
// (testdata/helm-safety/SOURCE.txt: the HELM repository's safety suite,
// nine models): the default is the first table's first column after the
// model (HELM's mean win rate); a column by its header; the tables HELM
// left without numbers are refused by name. Values checked by hand with
// python3's json against the file.
func TestReadHELMPublishedGroups(t *testing.T) {
	p := filepath.Join("testdata", "helm-safety", "safety_scenarios.json")
	if !IsHELMGroups(p) {
		t.Fatal("IsHELMGroups: false")
	}
	got, err := ReadHELMGroups(p, "", "")
	if err != nil || len(got) != 9 || got["GPT-4 Turbo (2024-04-09)"].Score != 0.90625 || got["Llama 3 (70B)"].Score != 0 || got["Claude 3.5 Sonnet (20240620)"].Score != 0.71875 {
		t.Errorf("mean win rate: %v %v", got, err)
	}
	got, err = ReadHELMGroups(p, "Accuracy", "SimpleSafetyTests - SimpleSafetyTests - Model Evaluated Safety score")
	if err != nil || len(got) != 9 || got["Llama 3 (8B)"].Score != 0.375 || got["GPT-4o (2024-05-13)"].Score != 0.75 || got["Mixtral (8x22B)"].Score != 0 {
		t.Errorf("SimpleSafetyTests: %v %v", got, err)
	}
	for _, m := range got {
		if m.LowerIsBetter {
			t.Errorf("SimpleSafetyTests read as lower is better: %v", got)
			break
		}
	}
	if got, err := ReadHELMGroups(p, "General information", "BBQ - # prompt tokens"); err != nil || got["Claude 3 Opus (20240229)"].Score != 81 || got["Gemini 1.5 Pro (001)"].Score != 67.5 {
		t.Errorf("BBQ prompt tokens: %v %v", got, err)
	}
	if _, err := ReadHELMGroups(p, "Efficiency", ""); err == nil || !strings.Contains(err.Error(), `table "Efficiency" column "Mean win rate": no model has a number`) {
		t.Errorf("Efficiency (no numbers in the file): %v", err)
	}
}

// TestReadHELMPublishedLowerIsBetter reads a column HELM marks
// lower_is_better from a published run (testdata/helm-mmlu-llama3/
// SOURCE.txt: MMLU through five Llama 3 deployments): the observed
// inference time reads LowerIsBetter, its neighbour (HELM's mean win rate
// over that table) does not.
func TestReadHELMPublishedLowerIsBetter(t *testing.T) {
	p := filepath.Join("testdata", "helm-mmlu-llama3", "targeted_evaluations.json")
	secs, err := ReadHELMGroups(p, "Efficiency (Detailed)", "MMLU - Observed inference time (s)")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"Together AI Llama 3 (8B)":            0.8968552043934309,
		"Together AI Llama 3 (70B)":           0.9152035797913505,
		"Groq LLaMA 3 (8B)":                   3.0843004897548245,
		"Groq LLaMA 3 (70B)":                  14.847715817846877,
		"Hugging face LLaMA 3 (8B)(original)": 25.47382867102776,
	}
	if len(secs) != len(want) {
		t.Errorf("%d models: %v", len(secs), secs)
	}
	for m, v := range want {
		if secs[m].Score != v || !secs[m].LowerIsBetter {
			t.Errorf("%s: %+v, want %v seconds, lower is better", m, secs[m], v)
		}
	}
	if wr, err := ReadHELMGroups(p, "Efficiency (Detailed)", ""); err != nil || wr["Together AI Llama 3 (8B)"].Score != 1 || wr["Together AI Llama 3 (8B)"].LowerIsBetter {
		t.Errorf("mean win rate: %v %v", wr, err)
	}
	if em, err := ReadHELMGroups(p, "Accuracy", "MMLU - EM"); err != nil || em["Together AI Llama 3 (70B)"].Score != 0.7306329549363606 || em["Groq LLaMA 3 (8B)"].Score != 0.38060987091050635 {
		t.Errorf("MMLU - EM: %v %v", em, err)
	}
}

// TestReadHELMPublishedSingleTable: helm-summarize also writes each table
// alone, groups/json/<group>_<table>.json (the groups file links it as
// "JSON"): one table object, not a list. The HELM repository's
// safety_scenarios_accuracy.json (testdata/helm-safety/SOURCE.txt) is
// that file's Accuracy table and reads the same.
func TestReadHELMPublishedSingleTable(t *testing.T) {
	one := filepath.Join("testdata", "helm-safety", "json", "safety_scenarios_accuracy.json")
	if !IsHELMGroups(one) {
		t.Fatal("IsHELMGroups: false for a single table")
	}
	all := filepath.Join("testdata", "helm-safety", "safety_scenarios.json")
	for _, col := range []string{"", "BBQ - BBQ accuracy"} {
		got, err := ReadHELMGroups(one, "", col)
		if err != nil {
			t.Fatalf("%q: %v", col, err)
		}
		want, err := ReadHELMGroups(all, "Accuracy", col)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 9 || len(got) != len(want) {
			t.Fatalf("%q: %v, want %v", col, got, want)
		}
		for m, s := range want {
			if got[m].Score != s.Score {
				t.Errorf("%q: %s = %v, want %v", col, m, got[m].Score, s.Score)
			}
		}
	}
	if _, err := ReadHELMGroups(one, "Efficiency", ""); err == nil || !strings.Contains(err.Error(), `no table titled "Efficiency" (tables: Accuracy)`) {
		t.Errorf("another table: %v", err)
	}
}
