package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/export"
	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/internal/jsonschema"
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

// lmEvalTable reads an lm-eval results file as lm-eval's own results
// table does (lm_eval/utils.py make_table, also what its W&B logger calls
// on a results file's results, versions and n-shot): every task is looked
// up in versions and n-shot (n-shot missing fails there), the alias
// replaces the task name, and each "metric,filter" entry but the stderr
// ones is a row, its value printed to 4 places when a float and its
// stderr, when present, "N/A" or a number. It fails where make_table
// would raise.
func lmEvalTable(data []byte) ([][]string, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	results, ok := doc["results"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`KeyError: "results" (or not a mapping)`)
	}
	versions, ok := doc["versions"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`"versions": want a mapping (result_dict["versions"].get)`)
	}
	nshot, ok := doc["n-shot"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`"n-shot": want a mapping (result_dict.get("n-shot", " ").get)`)
	}
	str := func(v any) string {
		switch x := v.(type) {
		case nil:
			return "None"
		case string:
			return x
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	var rows [][]string
	tasks := make([]string, 0, len(results))
	for k := range results {
		tasks = append(tasks, k)
	}
	sort.Strings(tasks)
	for _, k := range tasks {
		dic, ok := results[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("results[%q]: want a mapping", k)
		}
		version := "    N/A"
		if v, ok := versions[k]; ok {
			version = str(v)
		}
		n := " "
		if v, ok := nshot[k]; ok {
			n = str(v)
		}
		name := k
		if a, ok := dic["alias"]; ok {
			name = str(a)
		}
		keys := make([]string, 0, len(dic))
		for mf := range dic {
			if mf != "alias" {
				keys = append(keys, mf)
			}
		}
		sort.Strings(keys)
		for _, mf := range keys {
			m, f, _ := strings.Cut(mf, ",")
			if strings.HasSuffix(m, "_stderr") {
				continue
			}
			v := str(dic[mf])
			if x, ok := dic[mf].(float64); ok {
				v = strconv.FormatFloat(x, 'f', 4, 64)
			}
			se := ""
			if s, ok := dic[m+"_stderr,"+f]; ok {
				switch x := s.(type) {
				case string:
					if x != "N/A" {
						return nil, fmt.Errorf("results[%q][%q]: %q is neither \"N/A\" nor a number (f\"{se:.4f}\")", k, m+"_stderr,"+f, x)
					}
					se = "   N/A"
				case float64:
					se = strconv.FormatFloat(x, 'f', 4, 64)
				default:
					return nil, fmt.Errorf("results[%q][%q]: %v is neither \"N/A\" nor a number", k, m+"_stderr,"+f, s)
				}
			}
			rows = append(rows, []string{name, version, f, n, m, v, se})
			name, version = "", ""
		}
	}
	return rows, nil
}

// lmEvalSample is a results file in the shape lm-eval 0.4 writes (tasks
// with aliases, "metric,filter" keys, float and "N/A" stderrs, a group),
// written for this test.
const lmEvalSample = `{
  "results": {
    "belebele_zsm_Latn": {"alias": "belebele_zsm_Latn", "acc,none": 0.4411, "acc_stderr,none": 0.0166, "acc_norm,none": 0.4411, "acc_norm_stderr,none": 0.0166},
    "global_mmlu_full_ms": {"alias": "global_mmlu_full_ms", "acc,none": 0.52, "acc_stderr,none": "N/A"}
  },
  "groups": {"global_mmlu_full_ms": {"alias": "global_mmlu_full_ms", "acc,none": 0.52, "acc_stderr,none": "N/A"}},
  "group_subtasks": {"global_mmlu_full_ms": [], "belebele_zsm_Latn": []},
  "configs": {"belebele_zsm_Latn": {"task": "belebele_zsm_Latn", "output_type": "multiple_choice", "num_fewshot": 0, "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": true}]}},
  "versions": {"belebele_zsm_Latn": 0.0, "global_mmlu_full_ms": 0.0},
  "n-shot": {"belebele_zsm_Latn": 0, "global_mmlu_full_ms": 0},
  "higher_is_better": {"belebele_zsm_Latn": {"acc": true, "acc_norm": true}, "global_mmlu_full_ms": {"acc": true}},
  "n-samples": {"belebele_zsm_Latn": {"original": 900, "effective": 900}},
  "config": {"model": "hf", "model_args": "pretrained=mesolitica/malaysian-llama-3-8b", "batch_size": "8"},
  "model_name": "mesolitica/malaysian-llama-3-8b",
  "date": 1767225600.0
}`

// TestExportLMEvalMatchesLMEvalReaders: lm-eval's results table reads the
// export (one row per axis headline, its value and the "N/A" stderr, the
// axis's version, n-shot "N/A") as it reads lm-eval's own files; the file
// name lm-eval's folder readers look for (results_<date>.json) finds it;
// without n-shot (what the export wrote before) the table fails.
func TestExportLMEvalMatchesLMEvalReaders(t *testing.T) {
	rows, err := lmEvalTable([]byte(lmEvalSample))
	if err != nil || len(rows) != 3 || rows[0][0] != "belebele_zsm_Latn" || rows[0][4] != "acc" || rows[0][5] != "0.4411" || rows[0][6] != "0.0166" || rows[2][6] != "   N/A" {
		t.Fatalf("the sample: %v %v", rows, err)
	}
	run := filepath.Join("..", "..", "testdata", "release", "store", "runs", "fake-run")
	out := filepath.Join(t.TempDir(), "fake-model", "results_2026-01-01T00-00-00.000000.json")
	os.MkdirAll(filepath.Dir(out), 0o755)
	var stderr bytes.Buffer
	if code := exportMain([]string{"--format", "lm-eval", "--out", out, run}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, _ := os.ReadFile(out)
	rows, err = lmEvalTable(data)
	if err != nil {
		t.Fatalf("lm-eval's table refuses the export: %v", err)
	}
	runs, err := inputs.FindRuns(run)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for axis, ax := range runs[0].Result.Axes {
		if ax.Score == nil {
			continue
		}
		want++
		found := false
		for _, r := range rows {
			if r[0] == export.LMEvalTaskPrefix+axis && r[4] == ax.Metric && r[5] == strconv.FormatFloat(*ax.Score, 'f', 4, 64) && r[6] == "   N/A" && r[1] == ax.Version && r[3] == "N/A" {
				found = true
			}
		}
		if !found {
			t.Errorf("no row for %s %s in %v", axis, ax.Metric, rows)
		}
	}
	if want == 0 {
		t.Fatal("the fixture run has no scored axis")
	}
	// lm_eval.utils.get_results_filenames: "/results_" and ".json" in the path.
	if !strings.Contains(out, "/results_") || !strings.Contains(out, ".json") {
		t.Errorf("%s is not a name lm-eval's readers find", out)
	}
	var doc map[string]any
	json.Unmarshal(data, &doc)
	if cfg, _ := doc["config"].(map[string]any); cfg["model_args"] == nil {
		t.Errorf("config.model_args missing (lm-eval's readers and zeno_visualize read it): %v", doc["config"])
	}
	delete(doc, "n-shot")
	old, _ := json.Marshal(doc)
	if _, err := lmEvalTable(old); err == nil || !strings.Contains(err.Error(), "n-shot") {
		t.Errorf("a file without n-shot reads: %v", err)
	}
}
