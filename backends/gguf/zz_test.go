package gguf

import (
	"math"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

func TestZZMaxDiff(t *testing.T) {
	m := openTiny(t, Options{})
	worst := 0.0
	for _, c := range readJSONL[llCase](t, "loglik.jsonl") {
		r, _ := m.LogLikelihood(bg, []backends.LLRequest{{Context: c.Context, Continuation: c.Continuation}})
		for j := range c.TokenLogProbs {
			d := math.Abs(r[0].TokenLogProbs[j] - c.TokenLogProbs[j])
			if d > 1e-4 {
				t.Logf("%q %q %d %.3g lp %.4f", c.Context, c.Continuation, j, d, c.TokenLogProbs[j])
			}
			worst = math.Max(worst, d)
		}
	}
	t.Logf("max per-token diff %.2g", worst)
}
