//go:build amd64 && !purego

package gguf

//go:noescape
func q4KRows4AVX512(w *byte, rowBytes int, groups int, x *int8, xd *float32, dstride int, bs *int16, nsb int, out *float32)

//go:noescape
func q6KRows4AVX512(w *byte, rowBytes int, groups int, x *int8, xd *float32, dstride int, bs *int16, nsb int, out *float32)

//go:noescape
func q4KRows2x4AVX512(w *byte, rowBytes int, pairs int, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *float32, ostride int)

//go:noescape
func q6KRows2x4AVX512(w *byte, rowBytes int, pairs int, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *float32, ostride int)

// hasKQAVX512 says whether the AVX-512 K-quant kernels (kqdot_amd64.s)
// run: the VNNI kernels' features (hasVNNI) and AVX512BW.
var hasKQAVX512 = hasVNNI && func() bool {
	_, b, _, _ := cpuid(7, 0)
	return b&(1<<30) != 0
}()

// qKRows sets out[i] to row i of raw (Q4_K or Q6_K rows of rb bytes, typ)
// times one token's Q8_K activations (q, d[b*dstride], bs as q4KDot takes
// them) for the leading rows the four-row kernels take, and returns how
// many it set.
func qKRows(typ TensorType, out []float32, raw []byte, rb int, q []int8, d []float32, dstride int, bs []int16) int {
	kernel, bb := q4KRows4AVX512, 144
	if typ == TypeQ6_K {
		kernel, bb = q6KRows4AVX512, 210
	}
	nsb := len(q) / qk
	rows := len(out) &^ 3
	if !hasKQAVX512 || nsb == 0 || rows == 0 {
		return 0
	}
	_ = raw[(rows-1)*rb+nsb*bb-1]
	_ = d[(nsb-1)*dstride]
	_ = bs[((nsb-1)*dstride+1)*16-1]
	kernel(&raw[0], rb, rows/4, &q[0], &d[0], 4*dstride, &bs[0], nsb, &out[0])
	return rows
}

// qKRows2x4 sets out[(t+k)*w.rows+r] to row r of w times token t+k of a,
// k < 4, for the rows from r0 below r1 that the two-row, four-token kernels
// take (Q4_K and Q6_K rows in pairs), and returns the first row it left.
func qKRows2x4(out []float32, w *matrix, a *qacts, r0, r1, t int) int {
	kernel, bb := q4KRows2x4AVX512, 144
	if w.typ == TypeQ6_K {
		kernel, bb = q6KRows2x4AVX512, 210
	}
	nsb := a.cols / qk
	if !hasKQAVX512 || (w.typ != TypeQ4_K && w.typ != TypeQ6_K) || nsb == 0 {
		return r0
	}
	_ = a.q[(t+3)*a.cols+nsb*qk-1]
	_ = a.d[(nsb-1)*a.n+t+3]
	_ = a.bs[((nsb-1)*a.n+t+4)*16-1]
	pairs := (r1 - r0) / 2
	if pairs == 0 {
		return r0
	}
	rb := w.rowBytes
	_ = w.raw[(r0+2*pairs-1)*rb+nsb*bb-1]
	_ = out[(t+3)*w.rows+r0+2*pairs-1]
	kernel(&w.raw[r0*rb], rb, pairs, &a.q[t*a.cols], a.cols, &a.d[t], 4*a.n, &a.bs[t*16], nsb, &out[t*w.rows+r0], 4*w.rows)
	return r0 + 2*pairs
}
