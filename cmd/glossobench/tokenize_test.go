package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command prints llama-server's recorded ids (testdata/gguf/tokenize.jsonl)
// as a JSON list on one line, with and without BOS, from --prompt and --file.
func TestTokenizeCommand(t *testing.T) {
	f, err := os.ReadFile("../../testdata/gguf/tokenize.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Text  string `json:"text"`
		BOS   []int  `json:"bos"`
		NoBOS []int  `json:"nobos"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(string(f), "\n", 2)[0]), &rec); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(file, []byte(rec.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []int
	}{
		{[]string{"--prompt", rec.Text}, rec.BOS},
		{[]string{"--no-bos", "--prompt", rec.Text}, rec.NoBOS},
		{[]string{"--file", file}, rec.BOS},
	} {
		out, code := captureStdout(t, func() int { return runTokenize(append([]string{"--model", tinyGGUF}, c.args...)) })
		want, _ := json.Marshal(c.want)
		if code != 0 || out != strings.ReplaceAll(string(want), ",", ", ")+"\n" {
			t.Errorf("%v: exit %d, printed %q, want %s", c.args, code, out, want)
		}
	}
	if code := runTokenize([]string{"--model", "gguf:no/such.gguf", "--prompt", "x"}); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
	if code := runTokenize([]string{"--prompt", "x"}); code != 2 {
		t.Errorf("no --model: exit %d, want 2", code)
	}
}
