//go:build amd64 && !purego

package gguf

import "unsafe"

//go:noescape
func q8Dot4AVX2(w *byte, x *int8, xstride int, xd *float32, dstride int, nb int, acc *[16]float32)

//go:noescape
func q8Dot2x4AVX2(w *byte, rowBytes int, x *int8, xstride int, xd *float32, dstride int, nb int, acc *[32]float32, sum int)

//go:noescape
func f16AccAVX2(acc, v *float32, s float32, n int)

//go:noescape
func f16ScaleAVX2(acc *float32, s float32, n int)

//go:noescape
func quantQ8AVX2(x *float32, q *int8, amax *float32, nb int)

//go:noescape
func q8KRangeAVX2(x *float32) (hi, lo float32)

//go:noescape
func q8KQuantAVX2(x *float32, q *int8, bs *int16, iscale float32)

//go:noescape
func q8Dot1AVX2(w *byte, x *int8, xd *float32, dstride int, nb int, acc *[4]float32)

//go:noescape
func q4KDotAVX2(w *byte, x *int8, xd *float32, dstride int, bs *int16, nsb int) float32

//go:noescape
func q4KDot4AVX2(w *byte, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *[4]float32)

//go:noescape
func q6KDot4AVX2(w *byte, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *[4]float32)

//go:noescape
func q6KDotAVX2(w *byte, x *int8, xd *float32, dstride int, bs *int16, nsb int) float32

// q8Dot4 sets o[k] to a Q8_0 row times token t+k of a, k < 4.
func q8Dot4(o *[4]float32, w []byte, a *qacts, t int) {
	nb := a.cols / 32
	nb4 := nb &^ 3
	if !hasAVX2 {
		nb4 = 0
	}
	var acc [16]float32
	if nb4 > 0 {
		_ = w[nb4*34-1]
		_ = a.q[(t+3)*a.cols+nb4*32-1]
		_ = a.d[(nb4-1)*a.n+t+3]
		q8Dot4AVX2(&w[0], &a.q[t*a.cols], a.cols, &a.d[t], 4*a.n, nb4, &acc)
	}
	for k := 0; k < 4; k++ {
		c := [4]float32{acc[k], acc[4+k], acc[8+k], acc[12+k]}
		q8BlocksGo(&c, w, a.q[(t+k)*a.cols:(t+k+1)*a.cols], a.d[t+k:], a.n, nb4, nb)
		o[k] = sum4(&c)
	}
}

// q8Dot1 is a Q8_0 row times one token's activations q, with block b's
// scale at d[b*dstride].
func q8Dot1(w []byte, q []int8, d []float32, dstride int) float32 {
	nb := len(q) / 32
	nb4 := nb &^ 3
	if !hasAVX2 {
		nb4 = 0
	}
	var acc [4]float32
	if nb4 > 0 {
		_ = w[nb4*34-1]
		_ = d[(nb4-1)*dstride]
		q8Dot1AVX2(&w[0], &q[0], &d[0], 4*dstride, nb4, &acc)
	}
	q8BlocksGo(&acc, w, q, d, dstride, nb4, nb)
	return sum4(&acc)
}

// q4KDot is a Q4_K row times one token's Q8_K activations.
func q4KDot(w []byte, q []int8, d []float32, dstride int, bs []int16) float32 {
	nsb := len(q) / qk
	if !hasAVX2 || nsb == 0 {
		return q4KDotGo(w, q, d, dstride, bs)
	}
	_ = w[nsb*144-1]
	_ = d[(nsb-1)*dstride]
	_ = bs[((nsb-1)*dstride+1)*16-1]
	return q4KDotAVX2(&w[0], &q[0], &d[0], 4*dstride, &bs[0], nsb)
}

// q6KDot is a Q6_K row times one token's Q8_K activations.
func q6KDot(w []byte, q []int8, d []float32, dstride int, bs []int16) float32 {
	nsb := len(q) / qk
	if !hasAVX2 || nsb == 0 {
		return q6KDotGo(w, q, d, dstride)
	}
	_ = w[nsb*210-1]
	_ = d[(nsb-1)*dstride]
	_ = bs[((nsb-1)*dstride+1)*16-1]
	return q6KDotAVX2(&w[0], &q[0], &d[0], 4*dstride, &bs[0], nsb)
}

// q4KDot4 sets o[k] to a Q4_K row times token t+k of a, k < 4.
func q4KDot4(o *[4]float32, w []byte, a *qacts, t int) {
	nsb := a.cols / qk
	if !hasAVX2 || nsb == 0 {
		for k := 0; k < 4; k++ {
			o[k] = q4KDotGo(w, a.q[(t+k)*a.cols:(t+k+1)*a.cols], a.d[t+k:], a.n, a.bs[(t+k)*16:])
		}
		return
	}
	_ = w[nsb*144-1]
	_ = a.q[(t+3)*a.cols+nsb*qk-1]
	_ = a.d[(nsb-1)*a.n+t+3]
	_ = a.bs[((nsb-1)*a.n+t+4)*16-1]
	q4KDot4AVX2(&w[0], &a.q[t*a.cols], a.cols, &a.d[t], 4*a.n, &a.bs[t*16], nsb, o)
}

// hasAVX512VL says whether the AVX-512 registers Y16-Y31 may be used
// (q8Dot2x4AVX2): hasAVX512 (AVX512F, the OS saving the ZMM state) and VL.
var hasAVX512VL = hasAVX512 && func() bool {
	_, b, _, _ := cpuid(7, 0)
	return b&(1<<31) != 0
}()

// q8Dot2x4 sets o[4*r+k] to Q8_0 rows w0 (r = 0) and w1 (r = 1) times
// token t+k of a, k < 4.
func q8Dot2x4(o *[8]float32, w0, w1 []byte, a *qacts, t int) {
	nb := a.cols / 32
	nb4 := nb &^ 3
	if !hasAVX512VL || nb4 == 0 || len(w0) != len(w1) {
		var o4 [4]float32
		q8Dot4(&o4, w0, a, t)
		copy(o[:4], o4[:])
		q8Dot4(&o4, w1, a, t)
		copy(o[4:], o4[:])
		return
	}
	rowBytes := int(uintptr(unsafe.Pointer(&w1[0])) - uintptr(unsafe.Pointer(&w0[0])))
	_ = w0[nb4*34-1]
	_ = w1[nb4*34-1]
	_ = a.q[(t+3)*a.cols+nb4*32-1]
	_ = a.d[(nb4-1)*a.n+t+3]
	var acc [32]float32
	if nb4 == nb {
		q8Dot2x4AVX2(&w0[0], rowBytes, &a.q[t*a.cols], a.cols, &a.d[t], 4*a.n, nb4, &acc, 1)
		copy(o[:], acc[:8])
		return
	}
	q8Dot2x4AVX2(&w0[0], rowBytes, &a.q[t*a.cols], a.cols, &a.d[t], 4*a.n, nb4, &acc, 0)
	for r, w := range [2][]byte{w0, w1} {
		for k := 0; k < 4; k++ {
			c := [4]float32{acc[4*r+k], acc[8+4*r+k], acc[16+4*r+k], acc[24+4*r+k]}
			q8BlocksGo(&c, w, a.q[(t+k)*a.cols:(t+k+1)*a.cols], a.d[t+k:], a.n, nb4, nb)
			o[4*r+k] = sum4(&c)
		}
	}
}

// q6KDot4 sets o[k] to a Q6_K row times token t+k of a, k < 4.
func q6KDot4(o *[4]float32, w []byte, a *qacts, t int) {
	nsb := a.cols / qk
	if !hasAVX2 || nsb == 0 {
		for k := 0; k < 4; k++ {
			o[k] = q6KDotGo(w, a.q[(t+k)*a.cols:(t+k+1)*a.cols], a.d[t+k:], a.n)
		}
		return
	}
	_ = w[nsb*210-1]
	_ = a.q[(t+3)*a.cols+nsb*qk-1]
	_ = a.d[(nsb-1)*a.n+t+3]
	_ = a.bs[((nsb-1)*a.n+t+4)*16-1]
	q6KDot4AVX2(&w[0], &a.q[t*a.cols], a.cols, &a.d[t], 4*a.n, &a.bs[t*16], nsb, o)
}

// f16Acc is the f16 flash attention's value update, acc = f16(acc + s·v).
func f16Acc(acc, v []float32, s float32) {
	n := len(acc)
	v = v[:n]
	m := n &^ 7
	if hasAVX2 && m > 0 {
		f16AccAVX2(&acc[0], &v[0], s, m)
	}
	f16AccGo(acc[m:], v[m:], s)
}

// f16Scale is the f16 flash attention's rescaling, acc = f16(acc·s).
func f16Scale(acc []float32, s float32) {
	n := len(acc)
	m := n &^ 7
	if hasAVX2 && m > 0 {
		f16ScaleAVX2(&acc[0], s, m)
	}
	f16ScaleGo(acc[m:], s)
}

// quantQ8Row quantises a row of x to Q8_0 blocks: q, and block b's scale
// at d[b*dstride].
func quantQ8Row(q []int8, d []float32, dstride int, x []float32) {
	nb := len(x) / 32
	if !hasAVX2 || nb == 0 {
		quantQ8RowGo(q, d, dstride, x)
		return
	}
	_ = q[nb*32-1]
	_ = d[(nb-1)*dstride]
	var amax [64]float32
	for b0 := 0; b0 < nb; b0 += len(amax) {
		b1 := min(nb, b0+len(amax))
		quantQ8AVX2(&x[b0*32], &q[b0*32], &amax[0], b1-b0)
		for b := b0; b < b1; b++ {
			d[b*dstride] = roundF16(amax[b-b0] / 127)
		}
	}
}

// quantQ8KSuper quantises one 256-block as quantQ8KBlock does, also writing
// its 16-sums to bs, and returns d.
func quantQ8KSuper(q []int8, bs []int16, x []float32) float32 {
	if !hasAVX2 {
		return quantQ8KSuperGo(q, bs, x)
	}
	x, q, bs = x[:qk], q[:qk], bs[:16]
	hi, lo := q8KRangeAVX2(&x[0])
	var mx float32
	switch {
	case hi != hi || lo != lo || hi == -lo:
		// NaN, or both signs reach the largest magnitude: the first
		// one found decides, as in quantQ8KBlock.
		return quantQ8KSuperGo(q, bs, x)
	case hi > -lo:
		mx = hi
	default:
		mx = lo
	}
	iscale := -127 / mx
	q8KQuantAVX2(&x[0], &q[0], &bs[0], iscale)
	return 1 / iscale
}
