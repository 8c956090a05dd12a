package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// Tokenize and settings requests do not take a concurrency slot: with
// Concurrency 1 (the server's one slot) a second item's /tokenize goes out
// while the first item's completion is in flight. Before, it waited for
// the slot, so every tokenize round trip left the server's slot empty; here
// the completion waits for that tokenize and would time out.
func TestTokenizeTakesNoConcurrencySlot(t *testing.T) {
	var tokenizes atomic.Int32
	second := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			writeJSON(w, map[string]any{"data": []any{map[string]any{"id": "m", "max_model_len": 4096}}})
		case "/tokenize":
			var req struct {
				Prompt string `json:"prompt"`
			}
			decodeBody(t, r, &req)
			if tokenizes.Add(1) > 2 { // the first item's two, then the second's
				once.Do(func() { close(second) })
			}
			writeJSON(w, map[string]any{"count": 1 + len(req.Prompt), "tokens": make([]int, 1+len(req.Prompt))})
		case "/v1/completions":
			select {
			case <-second:
			case <-time.After(3 * time.Second):
				w.WriteHeader(http.StatusBadRequest)
				writeJSON(w, map[string]any{"message": "no tokenize arrived while this completion was in flight"})
				return
			}
			var req struct {
				Prompt string `json:"prompt"`
			}
			decodeBody(t, r, &req)
			n := 1 + len(req.Prompt)
			toks, lps := make([]string, n+1), make([]any, n+1)
			for i := 1; i <= n; i++ {
				toks[i], lps[i] = "x", -0.5
			}
			writeJSON(w, map[string]any{"choices": []any{map[string]any{"text": "", "logprobs": map[string]any{"tokens": toks, "token_logprobs": lps}}},
				"usage": map[string]any{"prompt_tokens": n}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Concurrency: 1, MaxRetries: -1})
	var wg sync.WaitGroup
	for _, id := range []string{"a", "b"} {
		wg.Go(func() {
			if id == "b" {
				time.Sleep(100 * time.Millisecond) // a's completion is in flight
			}
			_, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: id, Context: "Soalan " + id, Continuation: " A"}})
			if err != nil {
				t.Errorf("%s: %v", id, err)
			}
		})
	}
	wg.Wait()
}
