package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers/ifeval"
)

var ifevalData = filepath.Join("..", "..", "testdata", "ifeval")

func TestIFEvalCommandReport(t *testing.T) {
	res, err := ifeval.ScoreFiles(filepath.Join(ifevalData, "input_data.jsonl"), filepath.Join(ifevalData, "responses_gpt4_aligned.jsonl"), "ifeval", "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	printIFEvalReport(&buf, res)
	out := buf.String()
	for _, want := range []string{"prompt-level strict:      0.7689", "instruction-level strict: 0.8357", "punctuation:no_comma", "keywords  "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc"} {
		if v, ok := m[k].(float64); !ok || v <= 0 || v > 1 {
			t.Errorf("--json %s = %v", k, m[k])
		}
	}
}

func TestIFEvalCommandErrors(t *testing.T) {
	dir := t.TempDir()
	prompts := filepath.Join(dir, "p.jsonl")
	resp := filepath.Join(dir, "r.jsonl")
	os.WriteFile(prompts, []byte(`{"key": 9, "prompt": "hi", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}`+"\n"), 0o644)
	os.WriteFile(resp, []byte(`{"prompt": "other", "response": "x"}`+"\n"), 0o644)
	if code := runIFEval([]string{"--input", prompts, "--responses", resp}); code != 1 {
		t.Errorf("mismatched keys: exit %d, want 1", code)
	}
	if code := runIFEval([]string{"--input", prompts}); code != 2 {
		t.Errorf("missing --responses: exit %d, want 2", code)
	}
	_, err := ifeval.ScoreFiles(prompts, resp, "ifeval", "")
	if err == nil || !strings.Contains(err.Error(), "key 9") {
		t.Errorf("error %v does not name the key", err)
	}
}
