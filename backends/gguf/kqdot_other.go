//go:build !amd64 || purego

package gguf

// q4KRows, q6KRows and qKRows2x4 have no multi-row kernel here: the
// callers' loops do every row.
func q4KRows(out []float32, raw []byte, rb int, q []int8, d []float32, dstride int, bs []int16) int {
	return 0
}

func q6KRows(out []float32, raw []byte, rb int, q []int8, d []float32, dstride int, bs []int16) int {
	return 0
}

func qKRows2x4(out []float32, w *matrix, a *qacts, r0, r1, t int) int { return r0 }
