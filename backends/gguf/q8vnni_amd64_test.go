//go:build amd64 && !purego

package gguf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkQ8Matmul is one thread's Q8_0 product of the bench model's
// shapes (2816 rows × 1024 columns, 1024 × 2816) with 128 tokens, with and
// without the VNNI kernels, and with one token (the AVX2 row kernel, for
// the memory's speed); the weights cycle through 48 copies (144 MiB, as
// the bench model's layers) so they come from memory, not the cache.
func BenchmarkQ8Matmul(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range []struct{ rows, cols, n int }{{2816, 1024, 128}, {1024, 2816, 128}, {2816, 1024, 1}, {1024, 2816, 1}} {
		var ws []*matrix
		w0 := randomRow(rng, TypeQ8_0, sh.rows*sh.cols)
		for range 48 {
			ws = append(ws, &matrix{typ: TypeQ8_0, rows: sh.rows, cols: sh.cols, act: actQ8_0, raw: append([]byte(nil), w0...), rowBytes: len(w0) / sh.rows})
		}
		x := randomActs(rng, sh.n, sh.cols)
		out := make([]float32, sh.n*sh.rows)
		for _, vnni := range []bool{false, true} {
			if vnni && (!hasVNNI || sh.n < 16) {
				continue
			}
			b.Run(fmt.Sprintf("%dx%d/n%d/vnni=%v", sh.rows, sh.cols, sh.n, vnni), func(b *testing.B) {
				defer func(v bool) { hasVNNI = v }(hasVNNI)
				hasVNNI = vnni
				p := &pool{threads: 1}
				// The thread's CPU time as well: the machine is shared.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0 := threadCPU()
				i, fastest := 0, time.Duration(math.MaxInt64)
				for b.Loop() {
					t0 := time.Now()
					p.matmulQ(out, ws[i%len(ws)], x, sh.n)
					fastest = min(fastest, time.Since(t0))
					i++
				}
				b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
				// The fastest product, the least disturbed by other processes.
				b.ReportMetric(float64(fastest.Nanoseconds()), "min-ns/op")
			})
		}
	}
}
