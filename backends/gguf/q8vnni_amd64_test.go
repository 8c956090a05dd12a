//go:build amd64 && !purego

package gguf

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkQ8Matmul is one thread's Q8_0 product of the bench model's
// shapes (2816 rows × 1024 columns, 1024 × 2816) with 128 tokens and with
// one, with and without the VNNI kernels.
func BenchmarkQ8Matmul(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range []struct{ rows, cols, n int }{{2816, 1024, 128}, {1024, 2816, 128}, {2816, 1024, 1}, {1024, 2816, 1}} {
		w := &matrix{typ: TypeQ8_0, rows: sh.rows, cols: sh.cols, act: actQ8_0}
		for r := 0; r < w.rows; r++ {
			w.raw = append(w.raw, randomRow(rng, TypeQ8_0, sh.cols)...)
		}
		w.rowBytes = len(w.raw) / w.rows
		x := randomActs(rng, sh.n, sh.cols)
		out := make([]float32, sh.n*sh.rows)
		for _, vnni := range []bool{false, true} {
			if vnni && !hasVNNI {
				continue
			}
			b.Run(fmt.Sprintf("%dx%d/n%d/vnni=%v", sh.rows, sh.cols, sh.n, vnni), func(b *testing.B) {
				defer func(v bool) { hasVNNI = v }(hasVNNI)
				hasVNNI = vnni
				p := &pool{threads: 1}
				for b.Loop() {
					p.matmulQ(out, w, x, sh.n)
				}
				b.ReportMetric(float64(sh.rows*sh.cols*sh.n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}
