//go:build amd64 && !purego

package gguf

//go:noescape
func dotL16x2x4AVX512(w0, w1, x0, x1, x2, x3 *float32, n int, out *[8]float32)

//go:noescape
func bf16L16x2x4AVX512(w0, w1, x0, x1, x2, x3 *uint16, n int, out *[8]float32)

// hasAVX512 reports AVX-512F with the OS saving the opmask and ZMM state;
// the kernels are then the 16-lane orders in one register per accumulator.
var hasAVX512 = func() bool {
	if !hasAVX2 {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&0xe6 != 0xe6 {
		return false
	}
	_, b, _, _ := cpuid(7, 0)
	return b&(1<<16) != 0
}()

// hasAVX512BF16 reports AVX512_BF16 (VDPBF16PS) beside AVX-512F: with both,
// llama.cpp built with -march=native on this CPU sums F32, F16 and BF16
// products in exactly ggmldot.go's orders.
var hasAVX512BF16 = func() bool {
	if !hasAVX512 {
		return false
	}
	eax, _, _, _ := cpuid(7, 1)
	return eax&(1<<5) != 0
}()

// dotL16x2x4 sets out[4*r+t] to dotL16(w_r, x_t) for two rows and four
// activations; it reports false (computing nothing) without AVX-512.
func dotL16x2x4(w0, w1, x0, x1, x2, x3 []float32, out *[8]float32) bool {
	n := len(w0)
	if !hasAVX512 || n == 0 {
		return false
	}
	w1, x0, x1, x2, x3 = w1[:n], x0[:n], x1[:n], x2[:n], x3[:n]
	dotL16x2x4AVX512(&w0[0], &w1[0], &x0[0], &x1[0], &x2[0], &x3[0], n, out)
	return true
}

// bf16L16x2x4 is dotL16x2x4 for BF16 rows and activations.
func bf16L16x2x4(w0, w1, x0, x1, x2, x3 []uint16, out *[8]float32) bool {
	n := len(w0)
	if !hasAVX512 || n == 0 {
		return false
	}
	w1, x0, x1, x2, x3 = w1[:n], x0[:n], x1[:n], x2[:n], x3[:n]
	bf16L16x2x4AVX512(&w0[0], &w1[0], &x0[0], &x1[0], &x2[0], &x3[0], n, out)
	return true
}

//go:noescape
func dotL16x4AVX2(w, x0, x1, x2, x3 *float32, n int, out *[4]float32)

//go:noescape
func dotL16AVX2(w, x *float32, n int) float32

//go:noescape
func dotL64AVX2(w, x *float32, n int) float32

//go:noescape
func f16ToF32AVX2(src *uint16, dst *float32, n int)

//go:noescape
func bf16L16x4AVX2(w, x0, x1, x2, x3 *uint16, n int, out *[4]float32)

//go:noescape
func bf16L16AVX2(w, x *uint16, n int) float32

//go:noescape
func bf16VecAVX2(w, x *uint16, n int, out *[2]float32)

// dotL16 is the 16-lane dot product (ggmldot.go); len(w) is a multiple of 16.
func dotL16(w, x []float32) float32 {
	if !hasAVX2 || len(w) == 0 {
		return dotL16Go(w, x)
	}
	x = x[:len(w)]
	return dotL16AVX2(&w[0], &x[0], len(w))
}

// dotL16x4 is dotL16 of one weight row with four activations.
func dotL16x4(w, x0, x1, x2, x3 []float32, out *[4]float32) {
	n := len(w)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	if !hasAVX2 || n == 0 {
		out[0], out[1], out[2], out[3] = dotL16Go(w, x0), dotL16Go(w, x1), dotL16Go(w, x2), dotL16Go(w, x3)
		return
	}
	dotL16x4AVX2(&w[0], &x0[0], &x1[0], &x2[0], &x3[0], n, out)
}

// dotL64 is the 64-lane dot product; len(w) is a multiple of 64.
func dotL64(w, x []float32) float32 {
	if !hasAVX2 || len(w) == 0 {
		return dotL64Go(w, x)
	}
	x = x[:len(w)]
	return dotL64AVX2(&w[0], &x[0], len(w))
}

// f16ToF32Row expands F16 values.
func f16ToF32Row(src []uint16, dst []float32) {
	m := len(src) &^ 7
	dst = dst[:len(src)]
	if hasAVX2 && m > 0 {
		f16ToF32AVX2(&src[0], &dst[0], m)
	}
	f16ToF32Go(src[m:], dst[m:])
}

// bf16L16 is the BF16 16-lane dot product; len(w) is a multiple of 32.
func bf16L16(w, x []uint16) float32 {
	if !hasAVX2 || len(w) == 0 {
		return bf16L16Go(w, x)
	}
	x = x[:len(w)]
	return bf16L16AVX2(&w[0], &x[0], len(w))
}

// bf16L16x4 is bf16L16 of one weight row with four activations.
func bf16L16x4(w, x0, x1, x2, x3 []uint16, out *[4]float32) {
	n := len(w)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	if !hasAVX2 || n == 0 {
		out[0], out[1], out[2], out[3] = bf16L16Go(w, x0), bf16L16Go(w, x1), bf16L16Go(w, x2), bf16L16Go(w, x3)
		return
	}
	bf16L16x4AVX2(&w[0], &x0[0], &x1[0], &x2[0], &x3[0], n, out)
}

// bf16Vec is bf16VecGo; len(w) is a multiple of 64.
func bf16Vec(w, x []uint16, out *[2]float32) {
	if !hasAVX2 || len(w) == 0 {
		bf16VecGo(w, x, out)
		return
	}
	x = x[:len(w)]
	bf16VecAVX2(&w[0], &x[0], len(w), out)
}
