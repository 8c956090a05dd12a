package gguf

import "math"

// The portable forms of the vector kernels behind attendTiled, swiglu and
// the one-query f16 attention. Their SIMD versions (ggmlvec_amd64.s) run the
// same operations lane for lane, so every result has these loops' bits on
// every CPU (TestGGMLVecKernelsMatchPortable, TestF16StepsMatchPortable).

// faTransposeK lays the keys of positions [0, n) out as attendTiled reads
// them (ggml packs each K tile transposed, position as the vector lane): for
// each KV head of hd elements and each tile of faTileKV positions, hd rows
// of faTileKV keys' element d, zero past n. dst is reused when large enough.
func faTransposeK(dst, kc []float32, kvDim, hd, n int) []float32 {
	tiles := (n + faTileKV - 1) / faTileKV
	size := tiles * faTileKV * kvDim
	if cap(dst) < size {
		dst = make([]float32, size)
	}
	dst = dst[:size]
	for kh := 0; kh < kvDim/hd; kh++ {
		for T := 0; T < tiles; T++ {
			tile := dst[(kh*tiles+T)*hd*faTileKV : (kh*tiles+T+1)*hd*faTileKV]
			if T == tiles-1 {
				clear(tile)
			}
			for p := T * faTileKV; p < min(n, (T+1)*faTileKV); p++ {
				k := kc[p*kvDim+kh*hd : p*kvDim+(kh+1)*hd]
				for d, v := range k {
					tile[d*faTileKV+p-T*faTileKV] = v
				}
			}
		}
	}
	return dst
}

// faScoresGo sets kq[t] for t in [lo, hi] to the score of the tile's
// position t, a chain of fused multiply-adds over the head dimension times
// scale, and the other positions to -Inf; it returns the tile's maximum.
// kt is the tile from faTransposeK.
func faScoresGo(kq *[faTileKV]float32, kt, q []float32, scale float32, lo, hi int) float32 {
	*kq = [faTileKV]float32{}
	for d, qd := range q {
		row := kt[d*faTileKV : (d+1)*faTileKV]
		for t := lo; t <= hi; t++ {
			kq[t] = fma32(row[t], qd, kq[t])
		}
	}
	tileMax := float32(math.Inf(-1))
	for t := range kq {
		if t < lo || t > hi {
			kq[t] = float32(math.Inf(-1))
			continue
		}
		kq[t] *= scale
		tileMax = max(tileMax, kq[t])
	}
	return tileMax
}

// faExpSumGo sets kq[t] to ggml_v_expf(kq[t]-m) and returns their sum as
// ggml_vec_soft_max_f32 takes it: each 16 reduced by fold16, added in
// float64.
func faExpSumGo(kq *[faTileKV]float32, m float32) float64 {
	var sum float64
	for g := 0; g < faTileKV; g += 16 {
		e := (*[16]float32)(kq[g : g+16])
		for l := range e {
			e[l] = expfGGML(e[l] - m)
		}
		sum += float64(fold16(e))
	}
	return sum
}

// faAccumGo adds w[p]·v_p to acc for each p with w[p] != 0, element by
// element a fused multiply-add, where v_p = v[p*stride : p*stride+len(acc)].
func faAccumGo(acc, v []float32, stride int, w []float32) {
	for p, wp := range w {
		if wp != 0 {
			vp := v[p*stride : p*stride+len(acc)]
			for d := range acc {
				acc[d] = fma32(vp[d], wp, acc[d])
			}
		}
	}
}

// scaleGo multiplies x by s.
func scaleGo(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// swigluGo sets g[i] = ggml_v_silu(g[i])·u[i].
func swigluGo(g, u []float32) {
	u = u[:len(g)]
	for i := range g {
		g[i] = siluGGML(g[i]) * u[i]
	}
}

// f16StepsGo is ggml's one-query flash attention (batches of fewer than
// faTileQ tokens) over np positions of one head: per position the F16 dot
// product of q with k_p = k[p*stride:], scaled (and soft-capped with
// tanhf), the running maximum and sum updated with glibc's expf, and the
// f16 value accumulator acc rescaled or added to, rounded to f16 after
// every update. It returns the sum.
func f16StepsGo(acc, q, k, v []float32, stride, np int, scale, softcap float32) float32 {
	hd := len(q)
	maxS, sum := float32(math.Inf(-1)), float32(0)
	for p := 0; p < np; p++ {
		s := ggmlDotF16(q, k[p*stride:p*stride+hd]) * scale
		if softcap != 0 {
			s = softcap * tanhf(s)
		}
		ms, vs := float32(1), float32(1)
		if s > maxS {
			ms = expf(maxS - s)
			maxS = s
			f16Scale(acc, ms)
		} else {
			vs = expf(s - maxS)
		}
		f16Acc(acc, v[p*stride:p*stride+hd], vs)
		sum = fma32(sum, ms, vs)
	}
	return sum
}
