//go:build !amd64 || purego

package gguf

func q8Dot4(o *[4]float32, w []byte, a *qacts, t int) {
	for k := 0; k < 4; k++ {
		o[k] = q8Dot1(w, a.q[(t+k)*a.cols:(t+k+1)*a.cols], a.d[t+k:], a.n)
	}
}

func q8Dot1(w []byte, q []int8, d []float32, dstride int) float32 {
	var acc [4]float32
	q8BlocksGo(&acc, w, q, d, dstride, 0, len(q)/32)
	return sum4(&acc)
}

func q4KDot(w []byte, q []int8, d []float32, dstride int, bs []int16) float32 {
	return q4KDotGo(w, q, d, dstride, bs)
}

func q6KDot(w []byte, q []int8, d []float32, dstride int, bs []int16) float32 {
	return q6KDotGo(w, q, d, dstride)
}

func q4KDot4(o *[4]float32, w []byte, a *qacts, t int) {
	for k := 0; k < 4; k++ {
		o[k] = q4KDotGo(w, a.q[(t+k)*a.cols:(t+k+1)*a.cols], a.d[t+k:], a.n, a.bs[(t+k)*16:])
	}
}

func q8Dot2x4(o *[8]float32, w0, w1 []byte, a *qacts, t int) {
	var o4 [4]float32
	q8Dot4(&o4, w0, a, t)
	copy(o[:4], o4[:])
	q8Dot4(&o4, w1, a, t)
	copy(o[4:], o4[:])
}

func q6KDot4(o *[4]float32, w []byte, a *qacts, t int) {
	for k := 0; k < 4; k++ {
		o[k] = q6KDotGo(w, a.q[(t+k)*a.cols:(t+k+1)*a.cols], a.d[t+k:], a.n)
	}
}

func f16Acc(acc, v []float32, s float32) { f16AccGo(acc, v, s) }

func f16Scale(acc []float32, s float32) { f16ScaleGo(acc, s) }

func quantQ8Row(q []int8, d []float32, dstride int, x []float32) { quantQ8RowGo(q, d, dstride, x) }

func quantQ8KSuper(q []int8, bs []int16, x []float32) float32 { return quantQ8KSuperGo(q, bs, x) }
