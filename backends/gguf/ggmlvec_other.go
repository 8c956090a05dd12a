//go:build !amd64 || purego

package gguf

func faScores(kq *[faTileKV]float32, kt, q []float32, scale float32, lo, hi int) float32 {
	return faScoresGo(kq, kt, q, scale, lo, hi)
}

func faExpSum(kq *[faTileKV]float32, m float32) float64 { return faExpSumGo(kq, m) }

func faAccum(acc, v []float32, stride int, w []float32) { faAccumGo(acc, v, stride, w) }

func scaleVec(x []float32, s float32) { scaleGo(x, s) }

func swigluVec(g, u []float32) { swigluGo(g, u) }

func f16Steps(acc, q, k, v []float32, stride, np int, scale, softcap float32) float32 {
	return f16StepsGo(acc, q, k, v, stride, np, scale, softcap)
}
