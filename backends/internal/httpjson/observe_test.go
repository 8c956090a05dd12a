package httpjson

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// recorder is a backends.Observer that keeps what it was told.
type recorder struct {
	mu       sync.Mutex
	requests []string // backend endpoint status
	retries  []string // backend endpoint
}

func (r *recorder) Request(backend, endpoint, status string, took time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, backend+" "+endpoint+" "+status)
}

func (r *recorder) Retry(backend, endpoint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = append(r.retries, backend+" "+endpoint)
}

func (r *recorder) Tokens(string, int, int) {}

// Each attempt is reported with its status and each retry once, labelled by
// the path alone: a whole URL's host and query (which may carry a key) stay
// out of the metrics.
func TestObserverSeesAttemptsAndRetries(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		switch calls {
		case 1:
			http.Error(w, "busy", http.StatusTooManyRequests)
		case 2:
			http.Error(w, "oops", http.StatusBadGateway)
		default:
			w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	rec := &recorder{}
	backends.SetObserver(rec)
	defer backends.SetObserver(nil)

	c := testClient("")
	var out struct{}
	if err := c.Do(context.Background(), http.MethodPost, srv.URL+"/v1/score?key=secret", map[string]int{}, &out); err != nil {
		t.Fatal(err)
	}
	wantReq := []string{"test /v1/score 429", "test /v1/score 502", "test /v1/score 200"}
	if !slices.Equal(rec.requests, wantReq) {
		t.Errorf("requests %q, want %q", rec.requests, wantReq)
	}
	if want := []string{"test /v1/score", "test /v1/score"}; !slices.Equal(rec.retries, want) {
		t.Errorf("retries %q, want %q", rec.retries, want)
	}

	// A refused connection is an attempt without a status.
	srv.Close()
	rec.requests, rec.retries = nil, nil
	if err := testClient(srv.URL).Do(context.Background(), http.MethodGet, "/health", nil, &out); err == nil {
		t.Fatal("no error from a closed server")
	}
	if want := []string{"test /health error", "test /health error", "test /health error"}; !slices.Equal(rec.requests, want) {
		t.Errorf("requests %q, want %q", rec.requests, want)
	}
}
