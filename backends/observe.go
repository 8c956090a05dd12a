package backends

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Observer is told what the backends do, for a worker's metrics: each request
// to a model (an HTTP request to a server, or a call into the embedded
// model), each retry of one, and the tokens that went in and came out. The
// backends import nothing above them, so the worker's metrics package
// (infra/metrics) implements Observer and installs it with SetObserver.
// Implementations must be safe for concurrent use and fast.
type Observer interface {
	// Request reports one attempt: backend is the client's name ("openai",
	// "metricx", "gguf"), endpoint its path or operation, status the HTTP
	// status ("200", "429"), "error" for a failure without one, or "ok".
	Request(backend, endpoint, status string, took time.Duration)
	// Retry reports that a failed attempt is about to be tried again.
	Retry(backend, endpoint string)
	// Tokens reports tokens sent to the model (in) and generated (out).
	Tokens(backend string, in, out int)
}

var observer atomic.Pointer[Observer]

// SetObserver installs o for every backend in the process; nil removes it.
func SetObserver(o Observer) {
	if o == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&o)
}

// Observe returns the installed Observer, or one that does nothing.
func Observe() Observer {
	if o := observer.Load(); o != nil {
		return *o
	}
	return nopObserver{}
}

type nopObserver struct{}

func (nopObserver) Request(string, string, string, time.Duration) {}
func (nopObserver) Retry(string, string)                          {}
func (nopObserver) Tokens(string, int, int)                       {}

// Usage is what the model requests made for one piece of work (an item)
// cost: the tokens that went in and came out, the request attempts, the
// attempts that failed and the retries among them, and the wall time the
// work took (LatencyMS, which the caller measures and sets).
type Usage struct {
	PromptTokens     int   `json:"prompt_tokens"`
	CompletionTokens int   `json:"completion_tokens"`
	Requests         int   `json:"requests"`
	FailedRequests   int   `json:"failed_requests,omitempty"`
	Retries          int   `json:"retries,omitempty"`
	LatencyMS        int64 `json:"latency_ms"`
}

// Add adds o into u.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.Requests += o.Requests
	u.FailedRequests += o.FailedRequests
	u.Retries += o.Retries
	u.LatencyMS += o.LatencyMS
}

type usageKey struct{}

// usageTally is a Usage being counted, by requests that may run at once.
type usageTally struct {
	mu sync.Mutex
	u  *Usage
}

// CountUsage returns a context under which every backend request (its
// attempts, retries and tokens) is also counted into u; read u once the
// work is done.
func CountUsage(ctx context.Context, u *Usage) context.Context {
	return context.WithValue(ctx, usageKey{}, &usageTally{u: u})
}

// ObserveCtx is Observe, also counting into the Usage of ctx
// (CountUsage) when it has one.
func ObserveCtx(ctx context.Context) Observer {
	t, _ := ctx.Value(usageKey{}).(*usageTally)
	if t == nil {
		return Observe()
	}
	return usageObserver{Observe(), t}
}

type usageObserver struct {
	next Observer
	t    *usageTally
}

func (o usageObserver) Request(backend, endpoint, status string, took time.Duration) {
	o.next.Request(backend, endpoint, status, took)
	o.t.mu.Lock()
	o.t.u.Requests++
	if status != "ok" && !strings.HasPrefix(status, "2") {
		o.t.u.FailedRequests++
	}
	o.t.mu.Unlock()
}

func (o usageObserver) Retry(backend, endpoint string) {
	o.next.Retry(backend, endpoint)
	o.t.mu.Lock()
	o.t.u.Retries++
	o.t.mu.Unlock()
}

func (o usageObserver) Tokens(backend string, in, out int) {
	o.next.Tokens(backend, in, out)
	o.t.mu.Lock()
	o.t.u.PromptTokens += in
	o.t.u.CompletionTokens += out
	o.t.mu.Unlock()
}
