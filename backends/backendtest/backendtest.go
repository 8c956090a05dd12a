// Package backendtest holds the stand-in backends other packages' tests
// drive their axes and judges with.
package backendtest

import (
	"context"
	"sync"

	"github.com/glossobench/glossobench/backends"
)

// Fixed answers every generation request with Text (finish reason stop)
// and records the requests it was sent; it has no log-likelihoods.
type Fixed struct {
	Text string
	Caps backends.Capabilities

	mu       sync.Mutex
	Requests []backends.GenRequest
}

func (f *Fixed) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	f.mu.Lock()
	f.Requests = append(f.Requests, reqs...)
	f.mu.Unlock()
	out := make([]backends.Generation, len(reqs))
	for i, r := range reqs {
		out[i] = backends.Generation{ID: r.ID, Text: f.Text, FinishReason: "stop"}
	}
	return out, nil
}

func (f *Fixed) LogLikelihood(context.Context, []backends.LLRequest) ([]backends.LLResult, error) {
	return nil, backends.ErrUnsupported
}

func (f *Fixed) Capabilities() backends.Capabilities { return f.Caps }

func (f *Fixed) Close() error { return nil }
