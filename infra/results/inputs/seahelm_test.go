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
	for _, key := range []string{"ms.total", "ms.knowledge.global_mmlu_lite"} {
		got, err := ReadSEAHELM(dir, key, "")
		if err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		if len(got) != 2 || got["gemma-x"].Score != 42.5 || got["llama-y"].Score != 51.25 {
			t.Fatalf("%q: %v", key, got)
		}
	}
	if g, err := ReadSEAHELM(dir, "ms.knowledge.global_mmlu_lite_virology.accuracy", ""); err != nil || g["gemma-x"].Score != 62.5 {
		t.Fatalf("task metric: %v %v", g, err)
	}
	if !IsSEAHELMResults(dir) || IsSEAHELMResults(t.TempDir()) {
		t.Error("IsSEAHELMResults")
	}
	for key, want := range map[string]string{
		"ms.nlg.total":            "field ms.nlg: missing (there: knowledge, total)",
		"ms.knowledge":            "field ms.knowledge: not a number",
		"total.x":                 "field total: not an object",
		"id.nlu.qa.error":         "field id.nlu.qa: the task failed in this run",
		"id.nlu.qa.normalized_f1": "field id.nlu.qa: the task failed in this run",
		// the overall total counts the failed id.nlu.qa as 0
		"":         "field total: 1 task under it failed in this run (the first: id.nlu.qa, Failed to run evaluation for task)",
		"id.total": "field id.total: 1 task under it failed",
	} {
		if _, err := ReadSEAHELM(dir, key, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", key, err, want)
		}
	}
}

// TestReadSEAHELMTimestampedRuns: a SEA-HELM run writes
// <model>_seahelm_results_<datetime.isoformat()>.json (since its v1,
// ec25490; at 6844e6c the name is built in src/seahelm_evaluation.py,
// get_results_json_filepath, its docstring's example
// Llama-3-8B_seahelm_results_2025-12-04T10:30:45.123456.json). A folder
// with several runs of one model reads each model's newest, --run picks
// one, and a single such file is recognised (it was read as lm-eval).
func TestReadSEAHELMTimestampedRuns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(seahelmSample, "%s", v)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("Llama-3-8B_seahelm_results_2025-12-04T10:30:45.123456.json", "40")
	newest := write("Llama-3-8B_seahelm_results_2026-02-10T08:00:00.000001.json", "41")
	write("Llama-3-8B_seahelm_results.json", "39") // the undated name: older than any dated run
	write("gemma_2_9b_seahelm_results_2026-01-01T00:00:00.json", "50")
	got, err := ReadSEAHELM(dir, "ms.total", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["Llama-3-8B"].Score != 41 || got["gemma_2_9b"].Score != 50 {
		t.Errorf("newest runs: %v", got)
	}
	got, err = ReadSEAHELM(dir, "ms.total", "2025-12-04T10:30:45.123456")
	if err != nil || len(got) != 1 || got["Llama-3-8B"].Score != 40 {
		t.Errorf("--run 2025-12-04T10:30:45.123456: %v %v", got, err)
	}
	if _, err := ReadSEAHELM(dir, "", "2024-01-01T00:00:00"); err == nil || !strings.Contains(err.Error(), "runs there: (undated), 2025-12-04T10:30:45.123456") {
		t.Errorf("unknown run: %v", err)
	}
	if !IsSEAHELMResults(newest) {
		t.Errorf("%s not recognised as SEA-HELM results", newest)
	}
	if got, err := ReadSEAHELM(newest, "ms.total", ""); err != nil || got["Llama-3-8B"].Score != 41 {
		t.Errorf("one timestamped file: %v %v", got, err)
	}
}

// TestReadSEAHELMPublishedRuns reads SEA-HELM's own output as published
// (testdata/seahelm-aimldl/SOURCE.txt): two dated runs of each of two
// models. Each model's newest run is the one read (--run picks another),
// and a metric of a task that failed in that run ("error": "Failed to run
// evaluation for task", the metric left 0) is refused by name, not read
// as a score of 0.
func TestReadSEAHELMPublishedRuns(t *testing.T) {
	dir := filepath.Join("testdata", "seahelm-aimldl")
	if !IsSEAHELMResults(dir) {
		t.Fatal("IsSEAHELMResults: false")
	}
	newest := filepath.Join(dir, "gemini-2.5-pro", "gemini-2.5-pro_seahelm_results_2025-08-21T05:32:12.515441.json")
	_, err := ReadSEAHELM(dir, "id.nlu.sentiment.normalized_accuracy", "")
	if err == nil || !strings.Contains(err.Error(), "-2.5-pro_seahelm_results_2025-08-21T05:32:12.515441.json") && !strings.Contains(err.Error(), "2025-08-22T19:58:46.256589.json") {
		t.Fatalf("newest runs: %v, want an error naming a newest run's file", err)
	}
	if !strings.Contains(err.Error(), "field id.nlu.sentiment: the task failed in this run (Failed to run evaluation for task)") {
		t.Errorf("failed task: %v", err)
	}
	// One file, named: the same refusal; the overall score it lacks.
	if _, err := ReadSEAHELM(newest, "id.nlu.sentiment.normalized_accuracy", ""); err == nil || !strings.Contains(err.Error(), newest+": field id.nlu.sentiment: the task failed") {
		t.Errorf("%s: %v", newest, err)
	}
	if _, err := ReadSEAHELM(newest, "", ""); err == nil || !strings.Contains(err.Error(), newest+": field total: missing (there: id)") {
		t.Errorf("total: %v", err)
	}
	// --run picks a run of its own; a run no file has lists those there.
	if _, err := ReadSEAHELM(dir, "vi.nlu.qa.normalized_f1", "2025-08-20T15:45:48.461390"); err == nil || !strings.Contains(err.Error(), "Llama-3-2-3B-Instruct_seahelm_results_2025-08-20T15:45:48.461390.json: field vi.nlu.qa: the task failed") {
		t.Errorf("--run: %v", err)
	}
	if _, err := ReadSEAHELM(dir, "", "2024-01-01T00:00:00"); err == nil || !strings.Contains(err.Error(), "runs there: 2025-08-20T15:45:48.461390, 2025-08-20T15:55:31.544426, 2025-08-21T05:32:12.515441, 2025-08-22T19:58:46.256589") {
		t.Errorf("unknown run: %v", err)
	}
}

// TestReadSEAHELMPublishedUndated reads SEA-HELM results files published
// under the undated name <model>_seahelm_results.json
// (testdata/seahelm-gemma4/SOURCE.txt: four models, one folder each, only
// the knowledge competency ran; every other task failed). Values checked
// by hand with python3's json; they are the publisher's README figures
// (Indonesian knowledge 59.77, 72.82, 78.77, 70.74). A total over failed
// tasks is refused: SEA-HELM counts each failed task as 0 in it (E4B's
// overall 6.15 and Indonesian 7.47 are its knowledge score diluted by
// the failures), which is not a score.
func TestReadSEAHELMPublishedUndated(t *testing.T) {
	dir := filepath.Join("testdata", "seahelm-gemma4")
	if !IsSEAHELMResults(dir) {
		t.Fatal("IsSEAHELMResults: false")
	}
	for key, want := range map[string]map[string]float64{
		"id.knowledge.total": {
			"gemma-4-E4B-it": 59.76616161616162, "gemma-4-26B-A4B-it": 72.81792929292929,
			"gemma-4-31B-it": 78.77348484848484, "gpt-oss-20b": 70.73585858585858,
		},
		"th.knowledge.thai_exam": {
			"gemma-4-E4B-it": 43.281063761230165, "gemma-4-26B-A4B-it": 49.61089405950087,
			"gemma-4-31B-it": 56.98477554007739, "gpt-oss-20b": 60.1115019268657,
		},
		"id.knowledge.global_mmlu_lite_virology.accuracy": {
			"gemma-4-E4B-it": 62.5, "gemma-4-26B-A4B-it": 50, "gemma-4-31B-it": 50, "gpt-oss-20b": 62.5,
		},
	} {
		got, err := ReadSEAHELM(dir, key, "")
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v", key, got)
		}
		for m, v := range want {
			if got[m].Score != v {
				t.Errorf("%s: %s = %v, want %v", key, m, got[m].Score, v)
			}
		}
	}
	e4b := filepath.Join(dir, "gemma4-E4B-baseline", "gemma-4-E4B-it_seahelm_results.json")
	for key, want := range map[string]string{
		"":         e4b + ": field total: 74 tasks under it failed in this run (the first: id.instruction-following.if-eval, Failed to run evaluation for task); SEA-HELM counts them as 0",
		"id.total": e4b + ": field id.total: 14 tasks under it failed in this run (the first: id.instruction-following.if-eval",
	} {
		if _, err := ReadSEAHELM(e4b, key, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", key, err, want)
		}
	}
	if _, err := ReadSEAHELM(dir, "", "2026-04-15T00:00:00"); err == nil || !strings.Contains(err.Error(), "runs there: (undated)") {
		t.Errorf("--run on undated files: %v", err)
	}
}
