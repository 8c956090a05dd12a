package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/inputs"
	"github.com/glossobench/glossobench/internal/jsonschema"
)

// TestExportLMEvalReadsBack exports a run as lm-eval results and reads it
// with the lm-eval reader correlate and concord use: every scored axis's
// headline comes back for the run's model.
func TestExportLMEvalReadsBack(t *testing.T) {
	run := filepath.Join("..", "..", "testdata", "release", "store", "runs", "fake-run")
	runs, err := findRunResults(run)
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
			got, err := inputs.ReadLMEval(path, LMEvalTaskPrefix+axis, metric)
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

// TestExportEveryEvalEver validates the record with Every Eval Ever's
// schema (0.3.0): always against testdata/export's restatement of its
// constraints, and against the upstream eval.schema.json when
// GLOSSOBENCH_EEE_SCHEMA names a copy (with Python's jsonschema too when
// /usr/bin/python3 has it). A record without model_info.additional_details
// (what 0.2.1 wrote) is rejected, so the check can fail.
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
	if doc["retrieved_timestamp"] != "1767225600" || len(doc["evaluation_results"].([]any)) == 0 {
		t.Fatalf("record %s", o.String())
	}
	old := map[string]any{}
	json.Unmarshal(o.Bytes(), &old)
	delete(old["model_info"].(map[string]any), "additional_details")
	oldDoc, _ := json.Marshal(old)

	schemas := []string{filepath.Join("..", "..", "testdata", "export", "eee_eval_subset.schema.json")}
	if p := os.Getenv("GLOSSOBENCH_EEE_SCHEMA"); p != "" {
		schemas = append(schemas, p)
	} else {
		t.Log("GLOSSOBENCH_EEE_SCHEMA not set: validating against the restated constraints only")
	}
	for _, p := range schemas {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, err := jsonschema.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if errs, err := s.Validate(o.Bytes()); err != nil || len(errs) > 0 {
			t.Errorf("%s: the export is invalid:\n%s%v", p, strings.Join(errs, "\n"), err)
		}
		if errs, _ := s.Validate(oldDoc); !strings.Contains(strings.Join(errs, "\n"), "/model_info: required: additional_details is missing") {
			t.Errorf("%s: a record without model_info.additional_details passes: %v", p, errs)
		}
		pythonValidate(t, p, o.Bytes(), oldDoc)
	}
}

// pythonValidate checks good against schema with Python's jsonschema (and
// bad not), when /usr/bin/python3 has it: a second, independent validator.
func pythonValidate(t *testing.T, schema string, good, bad []byte) {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import jsonschema").Run() != nil {
		t.Log("python3 jsonschema not available: the Go validator only")
		return
	}
	dir := t.TempDir()
	for name, doc := range map[string][]byte{"good.json": good, "bad.json": bad} {
		os.WriteFile(filepath.Join(dir, name), doc, 0o644)
	}
	script := `import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator(s).validate(json.load(open(sys.argv[2])))
errs = list(jsonschema.Draft7Validator(s).iter_errors(json.load(open(sys.argv[3]))))
sys.exit(0 if errs else 3)`
	out, err := exec.Command("/usr/bin/python3", "-c", script, schema, filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")).CombinedOutput()
	if err != nil {
		t.Errorf("%s: python jsonschema: %v\n%s", schema, err, out)
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
