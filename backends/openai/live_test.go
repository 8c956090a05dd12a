package openai

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// TestLiveLlamaServer runs against a real llama-server serving
// tiny-llama.gguf when GLOSSOBENCH_LLAMA_SERVER_URL is set. The reference
// values come from /work/shared/models/tiny-llama/SOURCE.txt (torch).
func TestLiveLlamaServer(t *testing.T) {
	url := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_URL")
	if url == "" {
		t.Skip("GLOSSOBENCH_LLAMA_SERVER_URL not set")
	}
	c, err := New(Config{BaseURL: url, Timeout: 30 * time.Second, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if caps := c.Capabilities(); !caps.LogLikelihood || c.flavor != FlavorLlamaServer {
		t.Fatalf("capabilities %+v, flavour %q: auto probe did not find llama-server", caps, c.flavor)
	}
	const q = "Question: What is the capital of France?\nAnswer:"
	got, err := c.LogLikelihood(ctx, []backends.LLRequest{
		{ID: "paris", Context: q, Continuation: " Paris"},
		{ID: "rome", Context: q, Continuation: " Rome"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		logprob float64
		tokens  []int
	}{
		{-0.19980, []int{426, 478, 386, 288}},
		{-4.44266, []int{426, 480, 431, 273}},
	} {
		g := got[i]
		if math.Abs(g.LogProb-want.logprob) > 1e-3 || !equalInts(g.Tokens, want.tokens) {
			t.Errorf("%s: logprob %.5f tokens %v, want %.5f ± 1e-3 tokens %v", g.ID, g.LogProb, g.Tokens, want.logprob, want.tokens)
		}
		sum := 0.0
		for _, v := range g.TokenLogProbs {
			sum += v
		}
		if math.Abs(sum-g.LogProb) > 1e-9 {
			t.Errorf("%s: token logprobs sum %v != %v", g.ID, sum, g.LogProb)
		}
	}
	if !got[0].IsGreedy || got[1].IsGreedy {
		t.Errorf("is_greedy: Paris %v, Rome %v; want true, false", got[0].IsGreedy, got[1].IsGreedy)
	}
	gens, err := c.Generate(ctx, []backends.GenRequest{
		{ID: "raw", Prompt: q, MaxTokens: 8},
		{ID: "chat", Messages: []backends.Message{{Role: "user", Content: "What is the capital of France?"}}, MaxTokens: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gens {
		if g.Text == "" || (g.FinishReason != "stop" && g.FinishReason != "length") {
			t.Errorf("%s: generation %+v", g.ID, g)
		}
		t.Logf("%s: %q (%s)", g.ID, g.Text, g.FinishReason)
	}
}
