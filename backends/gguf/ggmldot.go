package gguf

import (
	"math"
	"unsafe"
)

// The dot products below add their products in exactly the order
// llama.cpp's CPU backend does when built with -march=native on an x86 CPU
// with AVX-512F and AVX512_BF16 (as .ci/build-llama-server.sh builds
// llama-server here). Float32 addition is not associative, and a sum that
// differs in its last bit can round to a different F16 or BF16 activation
// further on, which moves log-probabilities by up to a few 1e-3; summed in
// the same order the bits are the same. The orders:
//
//   - "16 lanes" (llamafile's tinyBLAS<16, __m512> for F32 and F16 weights,
//     batches of two or more tokens): lane l of a 16-wide accumulator takes
//     the fused multiply-add of elements l, l+16, l+32, ... in turn, and the
//     lanes are reduced as gcc's _mm512_reduce_add_ps does (fold16).
//   - "64 lanes" (ggml_vec_dot_f16 and ggml_vec_dot_f32, one token): four
//     such accumulators over consecutive 16-element groups of each 64, added
//     0+2 and 1+3, then those two, then fold16; the elements past the last
//     multiple of 64 are added one by one afterwards.
//   - BF16 (tinyBLAS<32, __m512, __m512bh> and ggml_vec_dot_bf16 with
//     _mm512_dpbf16_ps): lane l takes the pair of elements 2l, 2l+1 of each
//     32, adding the odd element's product before the even one's, as
//     VDPBF16PS does (measured on this CPU). ggml_vec_dot_bf16 keeps two such
//     accumulators for the two halves of each 64 elements and adds their
//     reductions in float64.
//
// Products of two F16 or two BF16 values are exact in float32, so for them
// a fused multiply-add rounds as a multiply followed by an add does.
// VDPBF16PS also flushes denormal inputs and results to zero, which the
// kernels here do not; activations and weights of 1e-38 do not occur.
//
// The kernels have AVX2 versions (ggmldot_amd64.s) whose bits equal these
// portable ones (TestGGMLDotKernels).

// fold16 is gcc's _mm512_reduce_add_ps.
func fold16(v *[16]float32) float32 {
	var t [8]float32
	for i := range t {
		t[i] = v[i] + v[i+8]
	}
	u0, u1, u2, u3 := t[0]+t[4], t[1]+t[5], t[2]+t[6], t[3]+t[7]
	return (u0 + u2) + (u1 + u3)
}

// fma32 is a float32 fused multiply-add, a·b+c rounded once. The product is
// exact in float64; the sum, rounded to float64 and then to float32, could
// round twice only when it lands on a float32 midpoint, which the exact
// error of the float64 sum then resolves (up to the overflow threshold
// 0x1.ffffffp127: beyond it the result is an infinity, as a fused
// multiply-add gives it).
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b))
	cd := float64(c)
	s := float64(p + cd)
	r := float32(s)
	if bits := math.Float64bits(s); bits&(1<<29-1) == 1<<28 && math.Abs(s) <= 0x1.ffffffp127 {
		bp := float64(s - p)
		e := float64(p-float64(s-bp)) + float64(cd-bp) // s + e = p + c exactly
		switch {
		case e > 0 && float64(r) < s:
			r = math.Nextafter32(r, float32(math.Inf(1)))
		case e < 0 && float64(r) > s:
			r = math.Nextafter32(r, float32(math.Inf(-1)))
		}
	}
	return r
}

// dotL16Go is the 16-lane dot product; len(w) is a multiple of 16.
func dotL16Go(w, x []float32) float32 {
	x = x[:len(w)]
	var acc [16]float32
	for i := 0; i < len(w); i += 16 {
		for l := range acc {
			acc[l] = fma32(w[i+l], x[i+l], acc[l])
		}
	}
	return fold16(&acc)
}

// dotL64Go is the 64-lane dot product; len(w) is a multiple of 64.
func dotL64Go(w, x []float32) float32 {
	x = x[:len(w)]
	var acc [4][16]float32
	for i := 0; i < len(w); i += 64 {
		for j := range acc {
			for l := range acc[j] {
				acc[j][l] = fma32(w[i+16*j+l], x[i+16*j+l], acc[j][l])
			}
		}
	}
	for l := range acc[0] {
		acc[0][l] += acc[2][l]
		acc[1][l] += acc[3][l]
		acc[0][l] += acc[1][l]
	}
	return fold16(&acc[0])
}

func bf16f(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// bf16L16Go is the BF16 16-lane dot product; len(w) is a multiple of 32.
func bf16L16Go(w, x []uint16) float32 {
	x = x[:len(w)]
	var acc [16]float32
	for i := 0; i < len(w); i += 32 {
		bf16Pairs(&acc, w[i:i+32], x[i:i+32])
	}
	return fold16(&acc)
}

// bf16Pairs adds 32 elements to the 16 lanes, odd element first.
func bf16Pairs(acc *[16]float32, w, x []uint16) {
	w, x = w[:32], x[:32]
	for l := range acc {
		acc[l] = float32(acc[l] + bf16f(w[2*l+1])*bf16f(x[2*l+1]))
		acc[l] = float32(acc[l] + bf16f(w[2*l])*bf16f(x[2*l]))
	}
}

// bf16VecGo is the vector part of ggml_vec_dot_bf16: the reductions of
// the two accumulators; len(w) is a multiple of 64.
func bf16VecGo(w, x []uint16, out *[2]float32) {
	x = x[:len(w)]
	var c1, c2 [16]float32
	for i := 0; i < len(w); i += 64 {
		bf16Pairs(&c1, w[i:i+32], x[i:i+32])
		bf16Pairs(&c2, w[i+32:i+64], x[i+32:i+64])
	}
	out[0], out[1] = fold16(&c1), fold16(&c2)
}

// ggmlDotF16 is ggml_vec_dot_f16 of two vectors of F16 values held as
// float32 (the 64-lane order, the rest added in float64).
func ggmlDotF16(w, x []float32) float32 {
	x = x[:len(w)]
	np := len(w) &^ 63
	var s float64
	if np > 0 {
		s = float64(dotL64(w[:np], x[:np]))
	}
	for i := np; i < len(w); i++ {
		s += float64(w[i] * x[i])
	}
	return float32(s)
}

// ggmlDotF32 is ggml_vec_dot_f32: the 64-lane order, the rest added in
// float32 (gcc contracts it into fused multiply-adds).
func ggmlDotF32(w, x []float32) float32 {
	x = x[:len(w)]
	np := len(w) &^ 63
	var s float32
	if np > 0 {
		s = dotL64(w[:np], x[:np])
	}
	for i := np; i < len(w); i++ {
		s = fma32(w[i], x[i], s)
	}
	return s
}

// ggmlDotBF16 is ggml_vec_dot_bf16.
func ggmlDotBF16(w, x []uint16) float32 {
	x = x[:len(w)]
	np := len(w) &^ 63
	var s float64
	if np > 0 {
		var r [2]float32
		bf16Vec(w[:np], x[:np], &r)
		s = float64(r[0])
		s += float64(r[1])
	}
	for i := np; i < len(w); i++ {
		s += float64(bf16f(w[i]) * bf16f(x[i]))
	}
	return float32(s)
}

// bytesToU16 views little-endian 16-bit values as a slice without copying
// when the address allows, and copies otherwise.
func bytesToU16(b []byte) []uint16 {
	n := len(b) / 2
	if n == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
	}
	return out
}

// f16ToF32Go is the portable f16ToF32Row.
func f16ToF32Go(src []uint16, dst []float32) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = f16ToF32(h)
	}
}
