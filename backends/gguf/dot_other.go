//go:build !amd64 || purego

package gguf

const hasAVX2 = false

func dot(a, b []float32) float32 { return dotGo(a, b) }

func dot4(w, x0, x1, x2, x3 []float32) (float32, float32, float32, float32) {
	return dot4Go(w, x0, x1, x2, x3)
}

func dotQ8(raw []byte, x []float32) float32 { return dotQ8Go(raw, x) }

func dot2x4(w0, w1, x0, x1, x2, x3 []float32, out *[8]float32) { dot2x4Go(w0, w1, x0, x1, x2, x3, out) }

func dequantQ8(raw []byte, out []float32) { dequantQ8Go(raw, out) }
