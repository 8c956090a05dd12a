package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/export"
	"github.com/glossobench/glossobench/infra/results/inputs"
)

// TestExportLMEvalReadsBack exports a run as lm-eval results and reads it
// with the lm-eval reader correlate and concord use: every scored axis's
// headline comes back for the run's model.
func TestExportLMEvalReadsBack(t *testing.T) {
	run := filepath.Join("..", "..", "testdata", "release", "store", "runs", "fake-run")
	runs, err := inputs.FindRuns(run)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out", "model-folder")
	os.MkdirAll(dir, 0o755)
	out := filepath.Join(dir, "results_2026-01-01T00-00-00.json")
	var stderr bytes.Buffer
	if code := exportMain([]string{"--format", "lm-eval", "--out", out, run}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	res := runs[0].Result
	if len(res.Axes) == 0 {
		t.Fatal("the fixture run has no axes")
	}
	for axis, ax := range res.Axes {
		if ax.Score == nil {
			continue
		}
		metric := ax.Metric
		for _, path := range []string{out, filepath.Dir(dir)} { // the file, and lm-eval's output folder
			got, err := inputs.ReadLMEval(path, export.LMEvalTaskPrefix+axis, metric)
			if err != nil {
				t.Fatalf("%s %s: %v", path, axis, err)
			}
			if s := got[runs[0].ModelID]; s.Score != *ax.Score || len(got) != 1 {
				t.Fatalf("%s %s: read %v, want %s: %v", path, axis, got, runs[0].ModelID, *ax.Score)
			}
		}
	}
	if code := exportMain([]string{"--format", "helm", run}, &bytes.Buffer{}, &stderr); code == 0 || !strings.Contains(stderr.String(), "known: lm-eval") {
		t.Fatalf("unknown format accepted: %d %s", code, stderr.String())
	}
}

// TestConcordAndCorrelateReadLMEval ranks our scores against an lm-eval
// output folder (one sub-folder per model): the same order is rho 1.
func TestConcordAndCorrelateReadLMEval(t *testing.T) {
	dir := t.TempDir()
	ext := filepath.Join(dir, "lmeval")
	for i, m := range []string{"m1", "m2", "m3", "m4"} {
		p := filepath.Join(ext, m, "results_2024-06-01T00-00-00.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		body := `{"results": {"belebele_zsm_Latn": {"alias": "belebele_zsm_Latn", "acc,none": 0.` + string(rune('2'+i)) + `}}, "config": {"model": "hf", "model_args": "pretrained=` + m + `"}}`
		os.WriteFile(p, []byte(body), 0o644)
	}
	ours := filepath.Join(dir, "ours.csv")
	os.WriteFile(ours, []byte("model_id,score\nm1,0.1\nm2,0.2\nm3,0.3\nm4,0.4\n"), 0o644)
	var o, e bytes.Buffer
	if code := concordMain([]string{"--scores", ours, "--external", ext, "--task", "belebele_zsm_Latn", "--name", "lm-eval"}, &o, &e); code != 0 {
		t.Fatalf("concord exit %d: %s", code, e.String())
	}
	if !strings.Contains(o.String(), "m4") {
		t.Fatalf("concord output lacks the models:\n%s", o.String())
	}
	oursJSON := filepath.Join(dir, "ours.json")
	os.WriteFile(oursJSON, []byte(`{"m1": 0.1, "m2": 0.2, "m3": 0.3, "m4": 0.4}`), 0o644)
	o.Reset()
	e.Reset()
	if code := correlateMain([]string{"--ours", oursJSON, "--external", ext, "--task", "belebele_zsm_Latn"}, &o, &e); code != 0 || !strings.Contains(o.String(), "4 shared models") || !strings.Contains(o.String(), "converged") {
		t.Fatalf("correlate exit %d:\n%s\n%s", code, o.String(), e.String())
	}
}

// TestConcordReadsSEAHELM ranks our scores against a folder of SEA-HELM
// results files (the model from each file's name).
func TestConcordReadsSEAHELM(t *testing.T) {
	dir := t.TempDir()
	for i, m := range []string{"m1", "m2", "m3"} {
		p := filepath.Join(dir, "seahelm", m+"-run", m+inputs.SEAHELMSuffix)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`{"ms": {"nlu": {"total": `+string(rune('1'+i))+`0.5}, "total": 1}, "total": 2}`), 0o644)
	}
	ours := filepath.Join(dir, "ours.csv")
	os.WriteFile(ours, []byte("m1,0.1\nm2,0.2\nm3,0.3\n"), 0o644)
	var o, e bytes.Buffer
	if code := concordMain([]string{"--scores", ours, "--external", filepath.Join(dir, "seahelm"), "--task", "ms.nlu.total", "--name", "sea-helm"}, &o, &e); code != 0 {
		t.Fatalf("concord exit %d: %s", code, e.String())
	}
	if !strings.Contains(o.String(), "m3") {
		t.Fatalf("output:\n%s", o.String())
	}
}

// TestExportEveryEvalEver checks the record against what eval.schema.json
// (Every Eval Ever 0.2.1) requires: the top-level required keys and no
// others, the enums, and per result the required keys, a continuous
// metric's bounds and string-valued details.
func TestExportEveryEvalEver(t *testing.T) {
	run := filepath.Join("..", "..", "testdata", "release", "store", "runs", "fake-run")
	var o, e bytes.Buffer
	if code := exportMain([]string{"--format", "every-eval-ever", "--timestamp", "1767225600", run}, &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(o.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"schema_version": true, "evaluation_id": true, "dedupe_identity": true, "evaluation_timestamp": true,
		"retrieved_timestamp": true, "source_metadata": true, "eval_library": true, "model_info": true, "evaluation_results": true, "detailed_evaluation_results": true}
	for k := range doc {
		if !allowed[k] {
			t.Errorf("key %s is not in the schema (additionalProperties: false)", k)
		}
	}
	for _, k := range []string{"schema_version", "evaluation_id", "retrieved_timestamp", "source_metadata", "model_info", "eval_library", "evaluation_results"} {
		if doc[k] == nil {
			t.Errorf("required key %s missing", k)
		}
	}
	sm := doc["source_metadata"].(map[string]any)
	if sm["source_type"] != "evaluation_run" || sm["evaluator_relationship"] != "third_party" || sm["source_organization_name"] == nil {
		t.Errorf("source_metadata %v", sm)
	}
	for _, v := range sm["additional_details"].(map[string]any) {
		if _, ok := v.(string); !ok {
			t.Errorf("additional_details value %v is not a string", v)
		}
	}
	if mi := doc["model_info"].(map[string]any); mi["name"] == "" || mi["id"] == "" {
		t.Errorf("model_info %v", mi)
	}
	if lib := doc["eval_library"].(map[string]any); lib["name"] == nil || lib["version"] == nil {
		t.Errorf("eval_library %v", lib)
	}
	res := doc["evaluation_results"].([]any)
	if len(res) == 0 {
		t.Fatal("no evaluation_results")
	}
	for _, x := range res {
		r := x.(map[string]any)
		for _, k := range []string{"evaluation_name", "source_data", "metric_config", "score_details"} {
			if r[k] == nil {
				t.Errorf("result %v lacks %s", r["evaluation_name"], k)
			}
		}
		mc := r["metric_config"].(map[string]any)
		if _, ok := mc["lower_is_better"].(bool); !ok || mc["score_type"] != "continuous" || mc["min_score"] == nil || mc["max_score"] == nil {
			t.Errorf("metric_config %v", mc)
		}
		sd := r["score_details"].(map[string]any)
		if s, ok := sd["score"].(float64); !ok || s < 0 || s > 1 {
			t.Errorf("score %v", sd["score"])
		}
		if src := r["source_data"].(map[string]any); src["source_type"] != "other" || src["dataset_name"] == nil {
			t.Errorf("source_data %v", src)
		}
	}
	if doc["retrieved_timestamp"] != "1767225600" {
		t.Errorf("retrieved_timestamp %v", doc["retrieved_timestamp"])
	}
}

// TestCorrelateReadsHELMSummary correlates with a helm-summarize groups
// table (its model names as model ids).
func TestCorrelateReadsHELMSummary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "core_scenarios.json")
	os.WriteFile(p, []byte(`[{"title": "Accuracy", "header": [{"value": "Model/adapter"}, {"value": "Mean win rate"}],
  "rows": [[{"value": "a"}, {"value": 0.1}], [{"value": "b"}, {"value": 0.2}], [{"value": "c"}, {"value": 0.3}], [{"value": "d"}, {"value": 0.4}]]}]`), 0o644)
	ours := filepath.Join(dir, "ours.json")
	os.WriteFile(ours, []byte(`{"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}`), 0o644)
	var o, e bytes.Buffer
	code := correlateMain([]string{"--ours", ours, "--external", p, "--task", "Accuracy", "--metric", "Mean win rate"}, &o, &e)
	if code != correlateExitDivergent || !strings.Contains(o.String(), "4 shared models") || !strings.Contains(o.String(), "divergent") {
		t.Fatalf("exit %d:\n%s\n%s", code, o.String(), e.String())
	}
}
