//go:build !amd64 || purego

package gguf

// qKRows and qKRows2x4 have no multi-row kernel here: the callers' loops
// do every row.
func qKRows(typ TensorType, out []float32, raw []byte, rb int, q []int8, d []float32, dstride int, bs []int16) int {
	return 0
}

func qKRows2x4(out []float32, w *matrix, a *qacts, r0, r1, t int) int { return r0 }
