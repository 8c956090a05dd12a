package backends

import (
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
