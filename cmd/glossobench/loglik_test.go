package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

const tinyGGUF = "gguf:../../testdata/models/tiny-llama/tiny-llama.gguf"

// modelCmdOutput runs f with os.Stdout redirected and returns what it printed.
func modelCmdOutput(t *testing.T, f func() int) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	code := f()
	w.Close()
	os.Stdout = old
	return <-done, code
}

func TestLoglikCommand(t *testing.T) {
	out, code := modelCmdOutput(t, func() int {
		return runLoglik([]string{"--model", tinyGGUF, "--json", "--context", "Question: What is the capital of France?\nAnswer:", "--continuation", " Paris"})
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var res struct {
		LogProb       float64   `json:"logprob"`
		TokenLogProbs []float64 `json:"token_logprobs"`
		IsGreedy      bool      `json:"is_greedy"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if math.Abs(res.LogProb+0.19980) > 1e-3 || len(res.TokenLogProbs) != 4 || !res.IsGreedy {
		t.Errorf("got %+v, want logprob -0.19980 over 4 greedy tokens", res)
	}
	if code := runLoglik([]string{"--model", "gguf:no/such.gguf", "--continuation", "x"}); code != 1 {
		t.Errorf("missing model: exit %d, want 1", code)
	}
	if code := runLoglik([]string{"--model", tinyGGUF}); code != 2 {
		t.Errorf("no continuation: exit %d, want 2", code)
	}
}

func TestGenerateCommand(t *testing.T) {
	out, code := modelCmdOutput(t, func() int {
		return runGenerate([]string{"--model", tinyGGUF, "--prompt", "Question: What is the capital of France?\nAnswer:", "--max-tokens", "4"})
	})
	if code != 0 || !strings.HasPrefix(out, " Paris") {
		t.Errorf("exit %d, output %q; want \" Paris\"", code, out)
	}
}
