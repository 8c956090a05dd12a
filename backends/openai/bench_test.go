package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// BenchmarkSaturation measures how close the client comes to the ideal
// throughput concurrency ÷ latency against a server with a fixed 20 ms
// latency. The target is ≥ 90% ("pct_of_ideal").
func BenchmarkSaturation(b *testing.B) {
	const latency = 20 * time.Millisecond
	var served, slept atomic.Int64 // requests and nanoseconds actually slept
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		time.Sleep(latency)
		slept.Add(int64(time.Since(t0)))
		served.Add(1)
		okCompletion(w)
	}))
	defer srv.Close()
	for _, conc := range []int{8, 32} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			c := newTestClient(b, srv, Config{Flavor: FlavorVLLM, Concurrency: conc})
			// Each iteration is one batch of 4×conc requests, so every
			// slot is busy for several round trips.
			reqs := make([]backends.GenRequest, 4*conc)
			for i := range reqs {
				reqs[i] = backends.GenRequest{ID: fmt.Sprint(i), Prompt: "x", MaxTokens: 1}
			}
			served.Store(0)
			slept.Store(0)
			start := time.Now()
			for b.Loop() {
				if _, err := c.Generate(context.Background(), reqs); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			perSec := float64(b.N*len(reqs)) / elapsed.Seconds()
			ideal := float64(conc) / latency.Seconds()
			b.ReportMetric(perSec, "req/s")
			b.ReportMetric(100*perSec/ideal, "pct_of_ideal")
			// On a loaded machine sleeps overrun; this shows how much of a
			// shortfall is the server's rather than the client's.
			if n := served.Load(); n > 0 {
				perReq := time.Duration(slept.Load() / n)
				b.ReportMetric(float64(perReq)/1e6, "server_ms/req")
				b.ReportMetric(100*perSec/(float64(conc)/perReq.Seconds()), "pct_of_measured")
			}
		})
	}
}
