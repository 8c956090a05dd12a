package backends

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Requests made under CountUsage are counted into its Usage (attempts,
// failed attempts, retries, tokens), from any number of goroutines, and
// still reach the process's observer; requests outside it count nowhere.
func TestCountUsage(t *testing.T) {
	var global countObserver
	SetObserver(&global)
	defer SetObserver(nil)
	var u Usage
	ctx := CountUsage(context.Background(), &u)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			ObserveCtx(ctx).Request("openai", "/v1/chat/completions", "200", time.Millisecond)
			ObserveCtx(ctx).Request("openai", "/v1/chat/completions", "503", time.Millisecond)
			ObserveCtx(ctx).Retry("openai", "/v1/chat/completions")
			ObserveCtx(ctx).Tokens("openai", 7, 3)
		})
	}
	wg.Wait()
	ObserveCtx(context.Background()).Tokens("openai", 100, 100)
	want := Usage{PromptTokens: 70, CompletionTokens: 30, Requests: 20, FailedRequests: 10, Retries: 10}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	if global.requests != 20 || global.in != 170 {
		t.Errorf("the process's observer saw %d requests and %d tokens in, want 20 and 170", global.requests, global.in)
	}
}

type countObserver struct {
	mu           sync.Mutex
	requests, in int
}

func (o *countObserver) Request(string, string, string, time.Duration) {
	o.mu.Lock()
	o.requests++
	o.mu.Unlock()
}
func (o *countObserver) Retry(string, string) {}
func (o *countObserver) Tokens(_ string, in, _ int) {
	o.mu.Lock()
	o.in += in
	o.mu.Unlock()
}
