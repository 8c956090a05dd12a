//go:build amd64 && !purego

package gguf

//go:noescape
func q4KRows4AVX512(w *byte, rowBytes int, groups int, x *int8, xd *float32, dstride int, bs *int16, nsb int, out *float32)

//go:noescape
func q6KRows4AVX512(w *byte, rowBytes int, groups int, x *int8, xd *float32, dstride int, bs *int16, nsb int, out *float32)

// hasAVX512VNNI says whether the AVX-512 K-quant kernels (kqdot_amd64.s)
// run: AVX512F with the OS state and VL (hasAVX512VL), BW and VNNI.
var hasAVX512VNNI = hasAVX512VL && func() bool {
	_, b, c, _ := cpuid(7, 0)
	return b&(1<<30) != 0 && c&(1<<11) != 0
}()

// q4KRows sets out[i] to row i of raw (rows of rb bytes) times one token's
// Q8_K activations (q, d[b*dstride], bs as q4KDot takes them) for the
// leading rows the multi-row kernel takes, four at a time, and returns how
// many it set.
func q4KRows(out []float32, raw []byte, rb int, q []int8, d []float32, dstride int, bs []int16) int {
	nsb := len(q) / qk
	rows := len(out) &^ 3
	if !hasAVX512VNNI || nsb == 0 || rows == 0 {
		return 0
	}
	_ = raw[(rows-1)*rb+nsb*144-1]
	_ = d[(nsb-1)*dstride]
	_ = bs[((nsb-1)*dstride+1)*16-1]
	q4KRows4AVX512(&raw[0], rb, rows/4, &q[0], &d[0], 4*dstride, &bs[0], nsb, &out[0])
	return rows
}

// q6KRows is q4KRows for Q6_K rows.
func q6KRows(out []float32, raw []byte, rb int, q []int8, d []float32, dstride int, bs []int16) int {
	nsb := len(q) / qk
	rows := len(out) &^ 3
	if !hasAVX512VNNI || nsb == 0 || rows == 0 {
		return 0
	}
	_ = raw[(rows-1)*rb+nsb*210-1]
	_ = d[(nsb-1)*dstride]
	_ = bs[((nsb-1)*dstride+1)*16-1]
	q6KRows4AVX512(&raw[0], rb, rows/4, &q[0], &d[0], 4*dstride, &bs[0], nsb, &out[0])
	return rows
}
