package gguf

import (
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// tally is a backends.Observer that sums what it is told.
type tally struct {
	mu       sync.Mutex
	requests map[string]int // endpoint status → count
	in, out  int
}

func (o *tally) Request(backend, endpoint, status string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[backend+" "+endpoint+" "+status]++
}
func (o *tally) Retry(string, string) {}
func (o *tally) Tokens(backend string, in, out int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.in, o.out = o.in+in, o.out+out
}

// The embedded model reports each request and its tokens to the observer:
// a generation's prompt and generated tokens, a log-likelihood's whole
// sequence.
func TestReportsRequestsAndTokens(t *testing.T) {
	m := openTiny(t, Options{})
	o := &tally{requests: map[string]int{}}
	backends.SetObserver(o)
	defer backends.SetObserver(nil)

	g, err := m.Generate(bg, []backends.GenRequest{{Prompt: france, MaxTokens: 5}})
	if err != nil {
		t.Fatal(err)
	}
	prompt := len(m.tok.Encode(france, true))
	if o.requests["gguf generate ok"] != 1 || o.in != prompt || o.out != g[0].Tokens || o.out != 5 {
		t.Fatalf("after one generation: requests %v, tokens in %d out %d; want 1, %d, %d", o.requests, o.in, o.out, prompt, g[0].Tokens)
	}
	o.in, o.out = 0, 0
	r, err := m.LogLikelihood(bg, []backends.LLRequest{{Context: france, Continuation: " Paris"}, {Context: france, Continuation: " Rome"}})
	if err != nil {
		t.Fatal(err)
	}
	if o.requests["gguf loglikelihood ok"] != 2 || o.out != 0 || o.in <= 2*prompt || o.in != 2*prompt+len(r[0].Tokens)+len(r[1].Tokens) {
		t.Fatalf("after two log-likelihoods: requests %v, tokens in %d out %d", o.requests, o.in, o.out)
	}
}
