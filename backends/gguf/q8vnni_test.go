package gguf

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ8MatmulMatchesPortable checks matmulQ on Q8_0 weights, whatever
// kernels it picks (the VNNI tiles from sixteen tokens on, the AVX2
// kernels, the portable loops), against q8BlocksGo bit for bit: block
// counts with every remainder mod 4 and mod 8, row counts that leave
// partial groups of four, token counts that leave partial groups of
// sixteen, one and two threads.
func TestQ8MatmulMatchesPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 16))
	for _, cols := range []int{32, 64, 96, 128, 160, 192, 224, 288, 1024, 2816} {
		for _, tc := range []struct{ rows, n int }{{4, 16}, {7, 17}, {33, 31}, {70, 40}, {5, 3}, {2, 20}, {12, 1}, {9, 6}} {
			x := randomActs(rng, tc.n, cols)
			x[5] = 40 // an outlier, so a block's scale is set by it
			w := &matrix{typ: TypeQ8_0, rows: tc.rows, cols: cols, act: actQ8_0}
			for r := 0; r < w.rows; r++ {
				w.raw = append(w.raw, randomRow(rng, TypeQ8_0, cols)...)
			}
			w.rowBytes = len(w.raw) / w.rows
			// A block of extreme quants, -128 included.
			for i := 2; i < 34; i++ {
				w.raw[i] = byte([]int8{127, -128, -127}[i%3])
			}
			a := quantActs(actQ8_0, x, tc.n, cols)
			for _, threads := range []int{1, 2} {
				out := make([]float32, tc.n*tc.rows)
				(&pool{threads: threads}).matmulQ(out, w, x, tc.n)
				for tok := 0; tok < tc.n; tok++ {
					for r := 0; r < tc.rows; r++ {
						var acc [4]float32
						q8BlocksGo(&acc, w.raw[r*w.rowBytes:(r+1)*w.rowBytes], a.q[tok*cols:(tok+1)*cols], a.d[tok:], tc.n, 0, cols/32)
						want := sum4(&acc)
						if got := out[tok*tc.rows+r]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("cols %d rows %d tokens %d threads %d: row %d token %d is %v, portable %v", cols, tc.rows, tc.n, threads, r, tok, got, want)
						}
					}
				}
			}
		}
	}
}
