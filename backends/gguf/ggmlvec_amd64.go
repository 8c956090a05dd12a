//go:build amd64 && !purego

package gguf

//go:noescape
func faScoresAVX2(kq *[faTileKV]float32, kt, q *float32, hd int, scale float32, lo, hi int) float32

//go:noescape
func faExpSumAVX2(kq *[faTileKV]float32, m float32) float64

//go:noescape
func faAccumAVX2(acc, v *float32, stride int, w *float32, np, n int)

//go:noescape
func scaleAVX2(x *float32, s float32, n int)

//go:noescape
func swigluAVX2(x, u *float32, n int)

//go:noescape
func f16StepsAVX2(acc, q, k, v *float32, stride, np, hd int, scale float32) float32

// faScores is faScoresGo; 0 <= lo <= hi < faTileKV.
func faScores(kq *[faTileKV]float32, kt, q []float32, scale float32, lo, hi int) float32 {
	if !hasAVX2 || len(q) == 0 {
		return faScoresGo(kq, kt, q, scale, lo, hi)
	}
	kt = kt[:len(q)*faTileKV]
	return faScoresAVX2(kq, &kt[0], &q[0], len(q), scale, lo, hi)
}

// faExpSum is faExpSumGo.
func faExpSum(kq *[faTileKV]float32, m float32) float64 {
	if !hasAVX2 {
		return faExpSumGo(kq, m)
	}
	return faExpSumAVX2(kq, m)
}

// faAccum is faAccumGo: the AVX2 kernel takes the multiples of 8 elements.
func faAccum(acc, v []float32, stride int, w []float32) {
	n := len(acc) &^ 7
	if hasAVX2 && n > 0 && len(w) > 0 {
		_ = v[(len(w)-1)*stride+len(acc)-1]
		faAccumAVX2(&acc[0], &v[0], stride, &w[0], len(w), n)
		acc, v = acc[n:], v[n:]
	}
	if len(acc) > 0 {
		faAccumGo(acc, v, stride, w)
	}
}

// scaleVec is scaleGo.
func scaleVec(x []float32, s float32) {
	n := len(x) &^ 7
	if hasAVX2 && n > 0 {
		scaleAVX2(&x[0], s, n)
	}
	scaleGo(x[n:], s)
}

// swigluVec is swigluGo.
func swigluVec(g, u []float32) {
	n := len(g) &^ 7
	u = u[:len(g)]
	if hasAVX2 && n > 0 {
		swigluAVX2(&g[0], &u[0], n)
	}
	swigluGo(g[n:], u[n:])
}

// f16Steps is f16StepsGo; the AVX2 kernel takes head dimensions that are
// multiples of 64 without soft-capping.
func f16Steps(acc, q, k, v []float32, stride, np int, scale, softcap float32) float32 {
	hd := len(q)
	if !hasAVX2 || softcap != 0 || hd == 0 || hd%64 != 0 || np <= 0 {
		return f16StepsGo(acc, q, k, v, stride, np, scale, softcap)
	}
	acc = acc[:hd]
	_, _ = k[(np-1)*stride+hd-1], v[(np-1)*stride+hd-1]
	return f16StepsAVX2(&acc[0], &q[0], &k[0], &v[0], stride, np, hd, scale)
}
