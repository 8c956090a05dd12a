//go:build !amd64 || purego

package gguf

// hasAVX512 and hasAVX512BF16: see ggmldot_amd64.go.
const hasAVX512, hasAVX512BF16 = false, false

func dotL16(w, x []float32) float32 { return dotL16Go(w, x) }

func dotL16x4(w, x0, x1, x2, x3 []float32, out *[4]float32) {
	out[0], out[1], out[2], out[3] = dotL16Go(w, x0), dotL16Go(w, x1), dotL16Go(w, x2), dotL16Go(w, x3)
}

func dotL64(w, x []float32) float32 { return dotL64Go(w, x) }

func f16ToF32Row(src []uint16, dst []float32) { f16ToF32Go(src, dst) }

func bf16L16(w, x []uint16) float32 { return bf16L16Go(w, x) }

func bf16L16x4(w, x0, x1, x2, x3 []uint16, out *[4]float32) {
	out[0], out[1], out[2], out[3] = bf16L16Go(w, x0), bf16L16Go(w, x1), bf16L16Go(w, x2), bf16L16Go(w, x3)
}

func bf16Vec(w, x []uint16, out *[2]float32) { bf16VecGo(w, x, out) }

func dotL16x2x4(w0, w1, x0, x1, x2, x3 []float32, out *[8]float32) bool { return false }

func bf16L16x2x4(w0, w1, x0, x1, x2, x3 []uint16, out *[8]float32) bool { return false }
