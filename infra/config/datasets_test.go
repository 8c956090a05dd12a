package config

import (
	"path/filepath"
	"strings"
	"testing"
)

const mappingBase = `model: {spec: "gguf:m.gguf"}
axes:
  knowledge:
    datasets:
      - name: malaymmlu
        path: MalayMMLU.csv
        format: mcq
        fields:
`

// TestMalformedMappingsNameLineAndField: a mapping is checked when the
// config loads, and each error names the config file, the line and the key.
func TestMalformedMappingsNameLineAndField(t *testing.T) {
	cases := []struct{ fields, want string }{
		{"          questoin: prompt\n          answer: key\n          choices: [A, B]\n", "line 9: fields.questoin: unknown field"},
		{"          question: '{{.prompt'\n          answer: key\n          choices: [A, B]\n", "line 9: fields.question: template"},
		{"          question: prompt\n          answer: key\n          choices: [A, B]\n          answer_as: letters\n", "line 12: fields.answer_as: must be auto, letter, index, text or label"},
		{"          question: prompt\n          choices: [A, B]\n", "fields.answer: required"},
		{"          question: prompt\n          answer: key\n          choices: [A, B]\n          turns: t\n", "line 12: fields.turns: not read by the mcq axes"},
		{"          question: prompt\n          answer: key\n          choices: {a: b}\n", "line 11: fields.choices"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(mappingBase+c.fields), "suite.yaml", "", Overrides{})
		if err == nil || !strings.Contains(err.Error(), "suite.yaml") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fields\n%s: error %v, want one naming suite.yaml and %q", c.fields, err, c.want)
		}
	}
	good := mappingBase + "          question: prompt\n          answer: key\n          choices: [A, B, C, D, E]\n          source: subject\n"
	if _, err := Parse([]byte(good), "suite.yaml", "", Overrides{}); err != nil {
		t.Fatalf("a good mapping is refused: %v", err)
	}
}

func TestHFPathsArePinned(t *testing.T) {
	base := "model: {spec: \"gguf:m.gguf\"}\naxes:\n  knowledge:\n    datasets:\n      - name: g\n        format: global_mmlu\n"
	if _, err := Parse([]byte(base+"        path: hf://datasets/CohereForAI/Global-MMLU@main/ms/test.parquet\n"), "c.yaml", "", Overrides{}); err == nil || !strings.Contains(err.Error(), "sha256: required") {
		t.Errorf("unpinned hf:// path: %v", err)
	}
	if _, err := Parse([]byte(base+"        path: hf://datasets/CohereForAI/Global-MMLU/ms/test.parquet\n        sha256: "+strings.Repeat("a", 64)+"\n"), "c.yaml", "", Overrides{}); err == nil || !strings.Contains(err.Error(), "revision is required") {
		t.Errorf("hf:// path without a revision: %v", err)
	}
	if _, err := Parse([]byte(base+"        path: hf://datasets/CohereForAI/Global-MMLU@abc/ms/test.parquet\n        sha256: "+strings.Repeat("a", 64)+"\n"), "c.yaml", "", Overrides{}); err != nil {
		t.Errorf("pinned hf:// path refused: %v", err)
	}
}

// TestGenerativeAxesTakeMappings: the NLG, IF and MT axes read datasets
// declared by fields alone, and their presets (and Safety's) take fields
// (a per-row register); a key the axis does not read, a missing required one and a
// template that does not parse are errors naming the line and the key.
func TestGenerativeAxesTakeMappings(t *testing.T) {
	base := func(axis, format, fields string) string {
		return "model: {spec: \"gguf:m.gguf\"}\naxes:\n  " + axis + ":\n    datasets:\n      - name: d\n        path: d.csv\n        format: " + format + "\n        fields: " + fields + "\n"
	}
	for _, good := range []string{
		base("nlg", "nlg", "{prompt: \"{{.en}}\", references: ms, direction: \"{{\\\"en-ms\\\"}}\"}"),
		base("nlg", "flores_passages", "{register: laras}"),
		base("if", "if", "{prompt: p, instruction_ids: ids, kwargs: kw}"),
		base("if", "ifeval", "{register: laras}"),
		base("mt", "mt", "{id: no, turns: giliran, category: jenis}"),
		base("mt", "mt_bench", "{register: laras}"),
		base("safety", "seahelm_safeguard", "{register: laras}"),
	} {
		if _, err := Parse([]byte(good), "c.yaml", "", Overrides{}); err != nil {
			t.Errorf("refused:\n%s%v", good, err)
		}
	}
	for _, c := range []struct{ cfg, want string }{
		{base("nlg", "nlg", "{prompt: p, references: r, answer: a}"), "line 8: fields.answer: not read by the nlg axes"},
		{base("nlg", "nlg", "{prompt: p}"), "fields.references: required by the nlg axes"},
		{base("if", "if", "{prompt: \"{{.p\", instruction_ids: ids}"), "line 8: fields.prompt: template"},
		{base("mt", "mt", "{id: no, turns: t}"), "fields.category: required by the mt axes"},
		{base("mt", "mt_bench", "{choices: [A, B]}"), "line 8: fields.choices: not read by the mt axes"},
	} {
		if _, err := Parse([]byte(c.cfg), "c.yaml", "", Overrides{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestLMEvalTaskEntries: format lm-eval-task reads lm-eval's own task YAML
// (testdata/lmeval-tasks, relative to the config's folder) into the
// entry's fields; a task the entry cannot fully express is refused with
// the reasons, and so is a task of another axis kind.
func TestLMEvalTaskEntries(t *testing.T) {
	dir, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(axis, task string) string {
		return "model:\n  spec: gguf:x.gguf\naxes:\n  " + axis + ":\n    datasets:\n      - path: split.jsonl\n        format: lm-eval-task\n        lm_eval_task: " + task + "\n"
	}
	c, err := Parse([]byte(cfg("nlu", "lmeval-tasks/belebele/belebele_zsm_Latn.yaml")), "c.yaml", dir, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Axes["nlu"].Datasets[0]
	if d.Name != "belebele_zsm_Latn" || d.Format != "mcq" || d.Fields == nil || d.Fields.AnswerAs != "index" || !strings.Contains(string(d.Fields.Prompt), "{{trim .question}}") {
		t.Errorf("converted entry %+v fields %+v", d, d.Fields)
	}
	for _, c := range []struct{ axis, task, want string }{
		{"knowledge", "lmeval-tasks/global_mmlu_id/global_mmlu_id_business.yaml", "the entry would not do what the task does: process_docs is Python"},
		{"nlg", "lmeval-tasks/flores_eu/flores_en-eu.yaml", `target_delimiter ""`},
		{"nlg", "lmeval-tasks/belebele/belebele_zsm_Latn.yaml", "a mcq task (multiple_choice), not one for the nlg axis"},
		{"nlu", "lmeval-tasks/nope.yaml", "axes.nlu.datasets[0].lm_eval_task: open"},
	} {
		if _, err := Parse([]byte(cfg(c.axis, c.task)), "c.yaml", dir, Overrides{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.axis, c.task, err, c.want)
		}
	}
	if _, err := Parse([]byte("model:\n  spec: gguf:x.gguf\naxes:\n  nlu:\n    datasets:\n      - {path: a.jsonl, format: belebele, lm_eval_task: t.yaml}\n"), "c.yaml", dir, Overrides{}); err == nil || !strings.Contains(err.Error(), "lm_eval_task: only with format lm-eval-task") {
		t.Errorf("lm_eval_task without the format: %v", err)
	}
}

// TestLMEvalTaskAsConfigSaysWhatItIs: given an lm-eval task YAML as the
// config, the error says what the file is and how to use it, before the
// keys it does not know.
func TestLMEvalTaskAsConfigSaysWhatItIs(t *testing.T) {
	_, err := Load("../../testdata/lmeval-tasks/belebele/belebele_zsm_Latn.yaml", Overrides{})
	if err == nil || !strings.Contains(err.Error(), "this is an lm-evaluation-harness task YAML") || !strings.Contains(err.Error(), "format: lm-eval-task") {
		t.Errorf("%v", err)
	}
}

// TestHubDatasetEntries: config and split name a Hub dataset's table with
// a repository path; either alone, a file path with them, or a repository
// path without them is refused naming the key. The pin may be left out
// here: reading the set refuses with the value to paste.
func TestHubDatasetEntries(t *testing.T) {
	base := "model: {spec: \"gguf:m.gguf\"}\naxes:\n  knowledge:\n    datasets:\n      - name: g\n        format: global_mmlu\n"
	for _, c := range []struct{ entry, want string }{
		{"        path: hf://datasets/CohereForAI/Global-MMLU@~parquet\n        config: ms\n        split: test\n", ""},
		{"        path: hf://datasets/CohereForAI/Global-MMLU@~parquet\n        config: ms\n        split: test\n        sha256: " + strings.Repeat("a", 64) + "\n", ""},
		{"        path: hf://datasets/CohereForAI/Global-MMLU@~parquet\n        config: ms\n", "axes.knowledge.datasets[0]: config and split name a Hub dataset's table together"},
		{"        path: hf://datasets/CohereForAI/Global-MMLU@~parquet\n", "axes.knowledge.datasets[0].path: hf://datasets/CohereForAI/Global-MMLU@~parquet names a repository: give config and split"},
		{"        path: hf://datasets/CohereForAI/Global-MMLU@main/ms/test.parquet\n        config: ms\n        split: test\n", "axes.knowledge.datasets[0].path: with config and split"},
		{"        path: data.parquet\n        config: ms\n        split: test\n", "axes.knowledge.datasets[0].path: with config and split"},
		{"        path: hf://datasets/CohereForAI/Global-MMLU@~parquet\n        config: ms\n        split: test\n        file_format: csv\n", "a dataset named by config and split is the Hub's Parquet files"},
	} {
		c2, err := Parse([]byte(base+c.entry), "c.yaml", "", Overrides{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.entry, err)
			} else if d := c2.Axes["knowledge"].Datasets[0]; d.Config != "ms" || d.Split != "test" {
				t.Errorf("%s: config %q split %q", c.entry, d.Config, d.Split)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.entry, err, c.want)
		}
	}
}

// TestLMEvalTaskOnTheHub: an lm-eval-task entry whose path names the
// task's repository takes config and split from the task (dataset_name,
// test_split); another repository, or a config or split other than the
// task's, is refused naming the key.
func TestLMEvalTaskOnTheHub(t *testing.T) {
	dir, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(path, extra string) string {
		return "model:\n  spec: gguf:x.gguf\naxes:\n  nlu:\n    datasets:\n      - path: " + path + "\n        format: lm-eval-task\n        lm_eval_task: lmeval-tasks/belebele/belebele_zsm_Latn.yaml\n" + extra
	}
	c, err := Parse([]byte(cfg("hf://datasets/facebook/belebele@~parquet", "")), "c.yaml", dir, Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Axes["nlu"].Datasets[0]; d.Config != "zsm_Latn" || d.Split != "test" || d.Format != "mcq" {
		t.Errorf("entry %+v", d)
	}
	for _, x := range []struct{ path, extra, want string }{
		{"hf://datasets/facebook/flores@~parquet", "", "datasets[0]: path: hf://datasets/facebook/flores@~parquet is the repository facebook/flores; the task " + filepath.Join(dir, "lmeval-tasks/belebele/belebele_zsm_Latn.yaml") + " reads dataset_path facebook/belebele"},
		{"hf://datasets/facebook/belebele@~parquet", "        config: ind_Latn\n", `datasets[0]: config: "ind_Latn", but the task`},
		{"hf://datasets/facebook/belebele@~parquet", "        split: validation\n", `datasets[0]: split: "validation", but the task`},
	} {
		if _, err := Parse([]byte(cfg(x.path, x.extra)), "c.yaml", dir, Overrides{}); err == nil || !strings.Contains(err.Error(), x.want) {
			t.Errorf("%s %s: %v, want %q", x.path, x.extra, err, x.want)
		}
	}
}
