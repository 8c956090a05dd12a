package inputs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lmEvalSample is shaped like a file lm_eval --output_path writes (v0.4:
// results keyed "metric,filter" beside "alias" and "*_stderr", groups,
// configs, the model in model_name and config.model_args).
const lmEvalSample = `{
  "results": {
    "belebele_zsm_Latn": {"alias": "belebele_zsm_Latn", "acc,none": %s, "acc_stderr,none": 0.0166, "acc_norm,none": 0.41, "acc_norm_stderr,none": 0.0164},
    "gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.25, "exact_match_stderr,strict-match": 0.01, "exact_match,flexible-extract": 0.3}
  },
  "group_subtasks": {"belebele_zsm_Latn": [], "gsm8k": []},
  "configs": {"belebele_zsm_Latn": {"task": "belebele_zsm_Latn", "dataset_path": "facebook/belebele"}},
  "versions": {"belebele_zsm_Latn": 0.0, "gsm8k": 3.0},
  "n-shot": {"belebele_zsm_Latn": 0, "gsm8k": 5},
  "higher_is_better": {"belebele_zsm_Latn": {"acc": true, "acc_norm": true}},
  "n-samples": {"belebele_zsm_Latn": {"original": 900, "effective": 900}},
  "config": {"model": "hf", "model_args": %s, "batch_size": "auto", "device": "cuda:0"},
  "git_hash": "abc1234",
  "date": 1718000000.0,
  %s
  "total_evaluation_time_seconds": "123.4"
}
`

func writeLMEval(t *testing.T, path, acc, modelArgs, modelName string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	name := ""
	if modelName != "" {
		name = `"model_name": "` + modelName + `", "model_name_sanitized": "x",`
	}
	body := strings.Replace(strings.Replace(strings.Replace(lmEvalSample, "%s", acc, 1), "%s", modelArgs, 1), "%s", name, 1)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadLMEval(t *testing.T) {
	dir := t.TempDir()
	// One sub-folder per model, as lm-eval lays out --output_path; the
	// first model was run twice (the newer file counts), the second has no
	// model_name (older versions) and is named by model_args.
	writeLMEval(t, filepath.Join(dir, "org__model-a", "results_2024-06-01T10-00-00.json"), "0.40", `"pretrained=org/model-a,dtype=bfloat16"`, "org/model-a")
	writeLMEval(t, filepath.Join(dir, "org__model-a", "results_2024-06-02T10-00-00.json"), "0.45", `"pretrained=org/model-a,dtype=bfloat16"`, "org/model-a")
	writeLMEval(t, filepath.Join(dir, "org__model-b", "results_2024-06-01T11-00-00.json"), "0.61", `"pretrained=org/model-b"`, "")
	writeLMEval(t, filepath.Join(dir, "api", "results_2024-06-01T12-00-00.json"), "0.7", `{"model": "gpt-x", "base_url": "http://h"}`, "")
	got, err := ReadLMEval(dir, "belebele_zsm_Latn", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"org/model-a": 0.45, "org/model-b": 0.61, "gpt-x": 0.7}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for m, v := range want {
		if got[m].Score != v {
			t.Errorf("%s: %v, want %v", m, got[m].Score, v)
		}
	}
	if !IsLMEvalResults(dir) || IsLMEvalResults(filepath.Join(dir, "nothing")) {
		t.Error("IsLMEvalResults")
	}
	one := filepath.Join(dir, "org__model-b", "results_2024-06-01T11-00-00.json")
	if g, err := ReadLMEval(one, "gsm8k", "exact_match,flexible-extract"); err != nil || g["org/model-b"].Score != 0.3 {
		t.Fatalf("gsm8k flexible-extract: %v %v", g, err)
	}
	for _, c := range []struct{ task, metric, want string }{
		{"", "", "need the task"},
		{"mmlu", "", "results.mmlu: no such task (tasks: belebele_zsm_Latn, gsm8k)"},
		{"gsm8k", "", `results.gsm8k["acc,none"]: missing or not a number (metrics: exact_match,flexible-extract, exact_match,strict-match)`},
	} {
		if _, err := ReadLMEval(one, c.task, c.metric); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("task %q metric %q: %v, want %q", c.task, c.metric, err, c.want)
		}
	}
	bad := filepath.Join(dir, "bad", "results_x.json")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("{\n\"results\": {,}\n}"), 0o644)
	if _, err := ReadLMEval(bad, "t", ""); err == nil || !strings.Contains(err.Error(), bad+":2: invalid JSON") {
		t.Errorf("bad JSON: %v", err)
	}
}

// TestReadLMEvalBeforeV04 reads lm-eval's own pre-0.4 results fixtures
// (testdata/lmeval-v0/SOURCE.txt): metrics keyed "acc", read by --metric
// acc and by the default acc,none alike; a filter they do not have is an
// error listing what is there. The model comes from the folder.
func TestReadLMEvalBeforeV04(t *testing.T) {
	for _, c := range []struct {
		file, task   string
		acc, accNorm float64
	}{
		{"arc_easy-v0-res.json", "arc_easy", 0.2474747474747475, 0.24074074074074073},
		{"arc_challenge-v2.0-res.json", "arc_challenge", 0.26621160409556316, 0.28242320819112626},
	} {
		path := filepath.Join("testdata", "lmeval-v0", "model-a", c.file)
		for metric, want := range map[string]float64{"": c.acc, "acc": c.acc, "acc,none": c.acc, "acc_norm": c.accNorm} {
			got, err := ReadLMEval(path, c.task, metric)
			if err != nil || len(got) != 1 || got["model-a"].Score != want {
				t.Errorf("%s --metric %q: %v %v, want model-a %v", c.file, metric, got, err, want)
			}
		}
		if _, err := ReadLMEval(path, c.task, "acc,strict-match"); err == nil || !strings.Contains(err.Error(), "metrics: acc, acc_norm") {
			t.Errorf("%s with a filter it lacks: %v", c.file, err)
		}
	}
}

// TestReadLMEvalPublishedV04 reads lm-eval 0.4 output as lm-eval wrote and
// its contributors published it (testdata/lmeval-v04/SOURCE.txt): a folder
// per model, some holding several runs. Values checked by hand with
// python3's json against the files. Each model's newest run that has the
// task counts: mamba2-130m's newest file is an MMLU-only run and its older
// one the lambada_openai run; mamba2-1.3b and -370m ran lambada_openai
// twice, with perplexities differing in the sixth digit. The file's
// higher_is_better says perplexity is better lower, so the scores say so.
func TestReadLMEvalPublishedV04(t *testing.T) {
	dir := filepath.Join("testdata", "lmeval-v04")
	if !IsLMEvalResults(dir) {
		t.Fatal("IsLMEvalResults: false")
	}
	for _, c := range []struct {
		task, metric string
		lower        bool
		want         map[string]float64
	}{
		{"lambada_openai", "perplexity", true, map[string]float64{
			"state-spaces/mamba2-130m": 16.828895401520434,
			"state-spaces/mamba2-370m": 7.994818742780401, // 2025-03-05T23-46-04, not 7.994806427824196
			"state-spaces/mamba2-780m": 5.862306243111779,
			"state-spaces/mamba2-1.3b": 5.0239414585166156, // 2025-03-03T19-09-21, not 5.023956988284279
			"state-spaces/mamba2-2.7b": 4.097492285251355,
		}},
		{"lambada_openai", "", false, map[string]float64{
			"state-spaces/mamba2-130m": 0.43916165340578306,
			"state-spaces/mamba2-370m": 0.558897729477974,
			"state-spaces/mamba2-780m": 0.6167281195420143,
			"state-spaces/mamba2-1.3b": 0.6561226470017466,
			"state-spaces/mamba2-2.7b": 0.6962934213079759,
		}},
		{"arc_easy", "acc_norm,none", false, map[string]float64{
			"state-spaces/mamba2-130m": 0.42045454545454547,
			"state-spaces/mamba2-370m": 0.4877946127946128, // the newer run; the older has 0.48737373737373735
			"state-spaces/mamba2-780m": 0.5433501683501684,
			"state-spaces/mamba2-1.3b": 0.6035353535353535,
			"state-spaces/mamba2-2.7b": 0.6477272727272727,
		}},
		{"mmlu", "", false, map[string]float64{"state-spaces/mamba2-130m": 0.260361771827375}},
	} {
		got, err := ReadLMEval(filepath.Join(dir, ifElse(c.task == "mmlu", "state-spaces__mamba2-130m", "")), c.task, c.metric)
		if err != nil {
			t.Errorf("%s %s: %v", c.task, c.metric, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s %s: %d models %v, want %d", c.task, c.metric, len(got), got, len(c.want))
		}
		for m, v := range c.want {
			if got[m].Score != v || got[m].LowerIsBetter != c.lower {
				t.Errorf("%s %s: %s = %+v, want %v (lower is better: %v)", c.task, c.metric, m, got[m], v, c.lower)
			}
		}
	}
	// The whole folder has MMLU only for some models: the others are named.
	if _, err := ReadLMEval(dir, "mmlu", ""); err == nil || !strings.Contains(err.Error(), "model state-spaces/mamba2-1.3b: no results file has task mmlu") {
		t.Errorf("mmlu over the folder: %v", err)
	}
}

func ifElse(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}

// TestReadLMEvalDirectionConflict: two files that mark one metric in
// opposite directions cannot be ranked together.
func TestReadLMEvalDirectionConflict(t *testing.T) {
	dir := t.TempDir()
	for m, hib := range map[string]string{"a": "false", "b": "true"} {
		p := filepath.Join(dir, m, "results_2025-01-01T00-00-00.json")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`{"results": {"lambada_openai": {"perplexity,none": 5}}, "higher_is_better": {"lambada_openai": {"perplexity": `+hib+`}}, "model_name": "`+m+`"}`), 0o644)
	}
	_, err := ReadLMEval(dir, "lambada_openai", "perplexity")
	if err == nil || !strings.Contains(err.Error(), "disagree on whether perplexity of lambada_openai is better higher (field higher_is_better.lambada_openai.perplexity)") {
		t.Errorf("got %v", err)
	}
}
