package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

const tinyGGUF = "gguf:../../testdata/models/tiny-llama/tiny-llama.gguf"

func TestLoglikCommand(t *testing.T) {
	out, code := captureStdout(t, func() int {
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
	out, code := captureStdout(t, func() int {
		return runGenerate([]string{"--model", tinyGGUF, "--prompt", "Question: What is the capital of France?\nAnswer:", "--max-tokens", "4"})
	})
	if code != 0 || !strings.HasPrefix(out, " Paris") {
		t.Errorf("exit %d, output %q; want \" Paris\"", code, out)
	}
}
