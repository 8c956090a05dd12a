package openai

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// Once the client's own retries are spent, an outage still reads as one: the
// error is a net.Error, which the Infer activity retries later instead of
// recording it as the item's answer. A client error stays permanent.
func TestSpentRetriesStayTransient(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()
	cases := []struct {
		name      string
		handler   http.HandlerFunc // nil: nothing listens
		transient bool
		timeout   bool
	}{
		{"connection refused", nil, true, false},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, true, false},
		{"429", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) }, true, false},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}, true, true},
		{"400", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400) }, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := refusedURL
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				defer srv.Close()
				url = srv.URL
			}
			c, err := New(Config{BaseURL: url, Flavor: FlavorVLLM, MaxRetries: 1, Timeout: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.api.BackoffBase, c.api.BackoffMax = time.Millisecond, time.Millisecond
			_, err = c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}})
			if err == nil {
				t.Fatal("no error")
			}
			var ne net.Error
			if got := errors.As(err, &ne); got != tc.transient {
				t.Fatalf("net.Error = %v, want %v: %v", got, tc.transient, err)
			}
			if tc.transient && ne.Timeout() != tc.timeout {
				t.Fatalf("Timeout() = %v, want %v: %v", ne.Timeout(), tc.timeout, err)
			}
		})
	}
}

// Retry-After is honoured as a floor and jitter is added on top, so clients
// told the same delay do not all return at once.
func TestRetryAfterIsAFloorWithJitter(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		at = append(at, time.Now())
		n := len(at)
		mu.Unlock()
		if n <= 3 {
			w.Header().Set("Retry-After", "0.1")
			w.WriteHeader(429)
			return
		}
		okCompletion(w)
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM})
	c.api.BackoffBase, c.api.BackoffMax = 50*time.Millisecond, 50*time.Millisecond
	if _, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}}); err != nil {
		t.Fatal(err)
	}
	if len(at) != 4 {
		t.Fatalf("%d requests, want 4", len(at))
	}
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gap := at[i].Sub(at[i-1])
		if gap < 100*time.Millisecond || gap > 400*time.Millisecond {
			t.Fatalf("retry %d came %v after a Retry-After of 100ms (want 100ms plus under 50ms of jitter)", i, gap)
		}
		gaps = append(gaps, gap)
	}
	t.Logf("gaps %v", gaps)
}
