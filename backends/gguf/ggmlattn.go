package gguf

import "math"

// faTileKV is GGML_FA_TILE_KV: ggml's tiled flash attention (batches of
// faTileQ queries or more) takes the keys in tiles of this many positions,
// aligned to position 0.
const faTileKV = 64

// attendTiled is one query head of ggml_compute_forward_flash_attn_ext_tiled
// with its roundings: per tile of faTileKV cached positions, each score is
// a chain of fused multiply-adds over the head dimension, scaled (and
// soft-capped with tanhf), the running maximum and sum rescaled by glibc's
// expf, the tile's weights ggml_v_expf's with their sum reduced 16 at a time
// in float64, and the values added with fused multiply-adds position by
// position. Positions outside [first, last] are masked. kq (faTileKV), kt
// (faTileKV·hd) and acc (hd) are scratch; the result goes to o.
func attendTiled(o, q, kc, vc []float32, kvDim, off, first, last int, scale, softcap float32, kq, kt, acc []float32) {
	hd := len(q)
	clear(acc)
	m, s := float32(math.Inf(-1)), float32(0)
	for ic := first / faTileKV * faTileKV; ic <= last; ic += faTileKV {
		// scores for the whole tile at once, position as the vector lane
		// (ggml's simd_gemm over the transposed keys)
		lo, hi := max(first, ic), min(last, ic+faTileKV-1)
		clear(kq)
		for p := lo; p <= hi; p++ {
			k := kc[p*kvDim+off : p*kvDim+off+hd]
			for d, v := range k {
				kt[d*faTileKV+p-ic] = v
			}
		}
		for d := 0; d < hd; d++ {
			axpyFMA(kq[lo-ic:hi-ic+1], kt[d*faTileKV+lo-ic:d*faTileKV+hi-ic+1], q[d])
		}
		tileMax := float32(math.Inf(-1))
		for t := range kq {
			if p := ic + t; p < lo || p > hi {
				kq[t] = float32(math.Inf(-1))
				continue
			}
			v := kq[t] * scale
			if softcap != 0 {
				v = tanhf(v) * softcap
			}
			kq[t] = v
			tileMax = max(tileMax, v)
		}
		if mNew := max(m, tileMax); mNew > m {
			ms := expf(m - mNew)
			for d := range acc {
				acc[d] *= ms
			}
			s *= ms
			m = mNew
		}
		var sum float64
		for g := 0; g < faTileKV; g += 16 {
			var e [16]float32
			for l := range e {
				e[l] = expfGGML(kq[g+l] - m)
				kq[g+l] = e[l]
			}
			sum += float64(fold16(&e))
		}
		s = float32(float64(s) + sum)
		for p := lo; p <= hi; p++ {
			if w := kq[p-ic]; w != 0 {
				axpyFMA(acc, vc[p*kvDim+off:p*kvDim+off+hd], w)
			}
		}
	}
	inv := 1 / s
	for d := range o {
		o[d] = acc[d] * inv
	}
}
