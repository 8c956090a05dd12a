package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/openai"
)

// The proxy holds completion requests (OpenAI's and llama-server's own
// /completion), serves at most slots at once and
// passes tokenize through at once; summarize reads occupancy and busy from
// the slot intervals.
func TestProxyHoldsCompletionsInSlots(t *testing.T) {
	var inUp, mostUp atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inUp.Add(1)
		defer inUp.Add(-1)
		for m := mostUp.Load(); n > m && !mostUp.CompareAndSwap(m, n); m = mostUp.Load() {
		}
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	p, err := newProxy(up.URL, 50*time.Millisecond, 2)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()

	start := time.Now()
	resp, err := http.Post(srv.URL+"/tokenize", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); took > 40*time.Millisecond {
		t.Errorf("tokenize took %s: held like a completion", took)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		path := []string{"/v1/completions", "/v1/chat/completions", "/completion"}[i%3]
		wg.Go(func() {
			resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	s := summarize(p.done, 2)
	if s.requests != 6 || mostUp.Load() > 2 {
		t.Fatalf("%d requests recorded, %d at once upstream; want 6, at most 2", s.requests, mostUp.Load())
	}
	// Six requests of ≥ 50 ms through 2 slots: three rounds, both slots
	// full all along.
	if s.span < 150*time.Millisecond || s.occupancy < 0.9 || s.occupancy > 1 || s.busyShare < 0.99 {
		t.Errorf("span %s, occupancy %.2f, busy %.2f", s.span, s.occupancy, s.busyShare)
	}
}

func TestSummarizeCountsGaps(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(a, b int) interval {
		return interval{start: t0.Add(time.Duration(a) * time.Second), end: t0.Add(time.Duration(b) * time.Second)}
	}
	// Slot-seconds 2+2+2+1 = 7 over a span of 10 s with 2 slots; busy
	// [0,3) and [7,10): 6 of 10 s.
	s := summarize([]interval{at(8, 10), at(0, 2), at(1, 3), at(7, 8)}, 2)
	if s.span != 10*time.Second || s.occupancy != 0.35 || s.busyShare != 0.6 {
		t.Fatalf("span %s occupancy %v busy %v, want 10s 0.35 0.6", s.span, s.occupancy, s.busyShare)
	}
}

// The fake upstream answers the OpenAI backend as vLLM would: the client
// takes it for vLLM, reads a log-likelihood from the echoed prompt (one
// -0.5 per continuation byte) and a generation, through the proxy.
func TestFakeUpstreamServesTheBackend(t *testing.T) {
	p, err := newProxy("fake", time.Millisecond, 2)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	c, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	ll, err := c.LogLikelihood(ctx, []backends.LLRequest{{ID: "q#A", Context: "Soalan?", Continuation: " A"}})
	if err != nil {
		t.Fatal(err)
	}
	if ll[0].LogProb != -1 {
		t.Errorf("log-likelihood of a two-byte continuation %v, want -1", ll[0].LogProb)
	}
	gens, err := c.Generate(ctx, []backends.GenRequest{
		{ID: "g", Prompt: "Soalan?", MaxTokens: 8},
		{ID: "c", Messages: []backends.Message{{Role: "user", Content: "Hai"}}, MaxTokens: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	if gens[0].Text != "B" || gens[1].Text != "B" {
		t.Errorf("generations %+v, want B and B", gens)
	}
	if n := len(p.done); n != 3 {
		t.Errorf("%d completion requests held, want 3 (the loglik's and the two generations')", n)
	}
}
