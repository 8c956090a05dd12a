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
// position. Positions outside [first, last] are masked. kt holds the keys
// as faTransposeK lays them out, off/hd is the KV head; kq and acc (hd) are
// scratch; the result goes to o.
func attendTiled(o, q, kt, vc []float32, kvDim, off, first, last int, scale, softcap float32, kq *[faTileKV]float32, acc []float32) {
	hd := len(q)
	tileSize := hd * faTileKV
	kt = kt[off/hd*(len(kt)/kvDim*hd):]
	clear(acc)
	m, s := float32(math.Inf(-1)), float32(0)
	for ic := first / faTileKV * faTileKV; ic <= last; ic += faTileKV {
		lo, hi := max(first, ic), min(last, ic+faTileKV-1)
		tile := kt[ic/faTileKV*tileSize : (ic/faTileKV+1)*tileSize]
		tileMax := faScores(kq, tile, q, scale, lo-ic, hi-ic)
		if softcap != 0 {
			tileMax = float32(math.Inf(-1))
			for t := lo - ic; t <= hi-ic; t++ {
				kq[t] = tanhf(kq[t]) * softcap
				tileMax = max(tileMax, kq[t])
			}
		}
		if mNew := max(m, tileMax); mNew > m {
			ms := expf(m - mNew)
			scaleVec(acc, ms)
			s *= ms
			m = mNew
		}
		s = float32(float64(s) + faExpSum(kq, m))
		faAccum(acc, vc[lo*kvDim+off:], kvDim, kq[lo-ic:hi-ic+1])
	}
	inv := 1 / s
	for d := range o {
		o[d] = acc[d] * inv
	}
}
