package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// tokenTally is a backends.Observer that sums the tokens it is told of.
type tokenTally struct {
	mu       sync.Mutex
	in, out  int
	requests int
}

func (o *tokenTally) Request(string, string, string, time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests++
}
func (o *tokenTally) Retry(string, string) {}
func (o *tokenTally) Tokens(backend string, in, out int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if backend == "openai" {
		o.in, o.out = o.in+in, o.out+out
	}
}

// A generation's tokens are the server's usage: prompt_tokens in,
// completion_tokens out.
func TestReportsUsageTokens(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"choices": []any{map[string]any{"text": " Paris", "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": 2},
		})
	}))
	defer srv.Close()
	o := &tokenTally{}
	backends.SetObserver(o)
	defer backends.SetObserver(nil)
	c := newTestClient(t, srv, Config{Model: "m1", Flavor: FlavorVLLM})
	if _, err := c.Generate(context.Background(), []backends.GenRequest{{Prompt: "a"}, {Prompt: "b"}, {Prompt: "c"}}); err != nil {
		t.Fatal(err)
	}
	// Three completions and the one GET /v1/models that learns the window.
	if o.in != 33 || o.out != 6 || o.requests != 4 {
		t.Fatalf("tokens in %d out %d over %d requests; want 33, 6 over 4", o.in, o.out, o.requests)
	}
}
