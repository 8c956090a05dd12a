package gguf

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sameBits reports whether a and b are the same float32, any NaN equal to
// any other.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// vecSpecials are inputs at the edges of ggml_v_expf: zeros, infinities,
// NaN, the overflow and underflow thresholds, subnormal results, |n| > 192.
var vecSpecials = []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	88.37, 88.38, 88.72, 88.73, 89, -87.33, -87.34, -100, -103.9, -103.98, -104, -120, -126, -133.1, -140, -149, -150,
	-160, -192 * 0.6931, -133.08, 133.08, 133.09, -134, 134, 1e-30, -1e-30, 1e30, -1e30, 3e38, -3e38, 1e-45, -1e-45}

// vecInputs is n values: the specials, every class of bit pattern and
// normal values of several spreads.
func vecInputs(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r := rng.IntN(8); {
		case r == 0:
			x[i] = vecSpecials[rng.IntN(len(vecSpecials))]
		case r == 1:
			x[i] = math.Float32frombits(rng.Uint32())
		default:
			x[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(4)-1)))
		}
	}
	return x
}

// The SIMD kernels behind attendTiled and swiglu give the portable loops'
// bits (on a CPU without AVX2, or with -tags purego, both sides are the
// portable loops).
func TestGGMLVecKernelsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 5))

	// swigluVec over every 2^13th bit pattern and a dense range, as
	// TestGGMLMathMatchesReference takes siluGGML.
	const n = 1 << 19
	x := make([]float32, n)
	for i := range x[:n/2] {
		x[i] = math.Float32frombits(uint32(i) * 0x9E3779B1 * 8191)
		x[n/2+i] = (float32(i)/(n/2) - 0.5) * 2 * 200
	}
	x = append(x, vecSpecials...)
	one := make([]float32, len(x))
	for i := range one {
		one[i] = 1
	}
	got := append([]float32(nil), x...)
	swigluVec(got, one)
	for i, v := range x {
		if want := siluGGML(v); !sameBits(got[i], want) {
			t.Fatalf("swigluVec(%g) = %g (%#x), siluGGML %g (%#x)", v, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
		}
	}
	for _, m := range []int{1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 2816} {
		g, u := vecInputs(rng, m), vecInputs(rng, m)
		want := append([]float32(nil), g...)
		swigluGo(want, u)
		swigluVec(g, u)
		for i := range g {
			if !sameBits(g[i], want[i]) {
				t.Fatalf("n=%d: swigluVec[%d] %g, portable %g", m, i, g[i], want[i])
			}
		}
	}

	for it := 0; it < 3000; it++ {
		// faExpSum: scores minus a maximum, with masked (-Inf) lanes,
		// subnormal and overflowing results.
		var kq, kq2 [faTileKV]float32
		m := float32(rng.NormFloat64() * 10)
		spread := math.Pow(10, float64(rng.IntN(4)-1))
		for i := range kq {
			switch rng.IntN(10) {
			case 0:
				kq[i] = float32(math.Inf(-1))
			case 1:
				kq[i] = vecSpecials[rng.IntN(len(vecSpecials))]
			case 2:
				kq[i] = m
			default:
				kq[i] = m - float32(math.Abs(rng.NormFloat64())*spread)
			}
		}
		kq2 = kq
		if got, want := faExpSum(&kq, m), faExpSumGo(&kq2, m); got != want && !(got != got && want != want) {
			t.Fatalf("faExpSum = %v, portable %v", got, want)
		}
		for i := range kq {
			if !sameBits(kq[i], kq2[i]) {
				t.Fatalf("faExpSum lane %d: %g, portable %g", i, kq[i], kq2[i])
			}
		}

		// faScores over head dimensions with and without a multiple of
		// 8, and masks at both ends of the tile.
		hd := []int{1, 3, 8, 16, 64, 80, 96, 128, 256}[rng.IntN(9)]
		kt, q := vecInputs(rng, hd*faTileKV), vecInputs(rng, hd)
		if rng.IntN(2) == 0 { // finite scores
			for i := range kt {
				kt[i] = float32(rng.NormFloat64())
			}
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
		}
		lo := rng.IntN(faTileKV)
		hi := lo + rng.IntN(faTileKV-lo)
		if rng.IntN(3) == 0 {
			lo, hi = 0, faTileKV-1
		}
		scale := float32(rng.Float64() + 0.01)
		gm, wm := faScores(&kq, kt, q, scale, lo, hi), faScoresGo(&kq2, kt, q, scale, lo, hi)
		if !sameBits(gm, wm) {
			t.Fatalf("hd=%d [%d,%d]: faScores max %g, portable %g", hd, lo, hi, gm, wm)
		}
		for i := range kq {
			if !sameBits(kq[i], kq2[i]) {
				t.Fatalf("hd=%d [%d,%d]: faScores lane %d: %g, portable %g", hd, lo, hi, i, kq[i], kq2[i])
			}
		}

		// faAccum and scaleVec over any length, with zero weights skipped.
		hd = 1 + rng.IntN(300)
		np := 1 + rng.IntN(faTileKV)
		stride := hd + rng.IntN(3)*hd
		v, w := vecInputs(rng, (np-1)*stride+hd), vecInputs(rng, np)
		for i := range w {
			if rng.IntN(4) == 0 {
				w[i] = 0
			}
		}
		acc := vecInputs(rng, hd)
		acc2 := append([]float32(nil), acc...)
		faAccum(acc, v, stride, w)
		faAccumGo(acc2, v, stride, w)
		s := float32(rng.NormFloat64())
		scaleVec(acc, s)
		scaleGo(acc2, s)
		for i := range acc {
			if !sameBits(acc[i], acc2[i]) {
				t.Fatalf("hd=%d np=%d: faAccum/scaleVec[%d] %g, portable %g", hd, np, i, acc[i], acc2[i])
			}
		}
	}
}

// fma32 rounds as the SIMD kernels' fused multiply-add does past the
// float32 range (an infinity, not the largest float32) and on random
// subnormal results.
func TestFMA32EdgesMatchKernels(t *testing.T) {
	if got := fma32(-8.817078e+36, -140, -163.1516); !math.IsInf(float64(got), 1) {
		t.Fatalf("fma32 past the float32 range = %g, want +Inf", got)
	}
	rng := rand.New(rand.NewPCG(1, 149))
	tiny := func(lo, hi int) float32 {
		m := float64(1<<23|rng.IntN(1<<23)) / (1 << 23)
		if rng.IntN(2) == 0 {
			m = -m
		}
		return float32(math.Ldexp(m, lo+rng.IntN(hi-lo)))
	}
	acc, acc2, c, v := make([]float32, 8), make([]float32, 8), make([]float32, 8), make([]float32, 8)
	for it := 0; it < 200000; it++ {
		w := []float32{tiny(-80, -60)}
		for i := range acc {
			v[i], c[i] = tiny(-90, -60), tiny(-149, -120)
		}
		copy(acc, c)
		copy(acc2, c)
		faAccum(acc, v, 8, w)
		faAccumGo(acc2, v, 8, w)
		for i := range acc {
			if !sameBits(acc[i], acc2[i]) {
				t.Fatalf("fma(%g, %g, %g): kernel %g, fma32 %g", v[i], w[0], c[i], acc[i], acc2[i])
			}
		}
	}
}

// attendTiledRef is attendTiled as it was before the vector kernels: scalar
// loops over the keys in the cache's own layout.
func attendTiledRef(o, q, kc, vc []float32, kvDim, off, first, last int, scale, softcap float32) {
	hd := len(q)
	acc := make([]float32, hd)
	kq, kt := make([]float32, faTileKV), make([]float32, faTileKV*hd)
	axpy := func(y, x []float32, a float32) {
		for i := range y {
			y[i] = fma32(x[i], a, y[i])
		}
	}
	m, s := float32(math.Inf(-1)), float32(0)
	for ic := first / faTileKV * faTileKV; ic <= last; ic += faTileKV {
		lo, hi := max(first, ic), min(last, ic+faTileKV-1)
		clear(kq)
		for p := lo; p <= hi; p++ {
			k := kc[p*kvDim+off : p*kvDim+off+hd]
			for d, v := range k {
				kt[d*faTileKV+p-ic] = v
			}
		}
		for d := 0; d < hd; d++ {
			axpy(kq[lo-ic:hi-ic+1], kt[d*faTileKV+lo-ic:d*faTileKV+hi-ic+1], q[d])
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
				axpy(acc, vc[p*kvDim+off:p*kvDim+off+hd], w)
			}
		}
	}
	inv := 1 / s
	for d := range o {
		o[d] = acc[d] * inv
	}
}

// attendTiled on the transposed keys gives the scalar reference's bits for
// every head, window and tile remainder, with and without soft-capping.
func TestAttendTiledMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 64))
	var kt []float32
	for it := 0; it < 300; it++ {
		hd := []int{64, 128, 80, 256, 8, 5}[it%6]
		kvHeads := 1 + rng.IntN(3)
		kvDim := kvHeads * hd
		n := 1 + rng.IntN(300)
		spread := []float64{0.3, 1, 4}[rng.IntN(3)]
		kc, vc := make([]float32, n*kvDim), make([]float32, n*kvDim)
		for i := range kc {
			kc[i] = roundF16(float32(rng.NormFloat64() * spread))
			vc[i] = roundF16(float32(rng.NormFloat64()))
		}
		q := make([]float32, hd)
		for i := range q {
			q[i] = float32(rng.NormFloat64() * spread)
		}
		kt = faTransposeK(kt, kc, kvDim, hd, n)
		scale, softcap := float32(1/math.Sqrt(float64(hd))), float32(0)
		if it%3 == 0 {
			softcap = 30
			scale /= softcap
		}
		last := rng.IntN(n)
		first := 0
		if rng.IntN(3) == 0 {
			first = rng.IntN(last + 1)
		}
		kh := rng.IntN(kvHeads)
		got, want := make([]float32, hd), make([]float32, hd)
		attendTiled(got, q, kt, vc, kvDim, kh*hd, first, last, scale, softcap, new([faTileKV]float32), make([]float32, hd))
		attendTiledRef(want, q, kc, vc, kvDim, kh*hd, first, last, scale, softcap)
		for d := range got {
			if !sameBits(got[d], want[d]) {
				t.Fatalf("hd=%d n=%d [%d,%d] softcap %g: o[%d] %g, scalar %g", hd, n, first, last, softcap, d, got[d], want[d])
			}
		}
	}
}

// The one-query f16 attention kernel gives f16StepsGo's bits, over scores
// far apart (expf's special cases: below -88, -104, -Inf, NaN) and close.
func TestF16StepsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 64))
	for it := 0; it < 2000; it++ {
		hd := []int{64, 128, 256, 64, 80}[it%5]
		np := 1 + rng.IntN(150)
		stride := hd * (1 + rng.IntN(3))
		spread := []float64{0.1, 1, 3, 30}[rng.IntN(4)]
		q := make([]float32, hd)
		for i := range q {
			q[i] = roundF16(float32(rng.NormFloat64()))
		}
		k, v := make([]float32, (np-1)*stride+hd), make([]float32, (np-1)*stride+hd)
		for i := range k {
			k[i] = roundF16(float32(rng.NormFloat64() * spread))
			v[i] = roundF16(float32(rng.NormFloat64()))
		}
		if it%7 == 0 { // infinite and NaN scores
			k[rng.IntN(len(k))] = float32(math.Inf(1 - 2*rng.IntN(2)))
			if rng.IntN(3) == 0 {
				k[rng.IntN(len(k))] = float32(math.NaN())
			}
		}
		scale, softcap := float32(1/math.Sqrt(float64(hd))), float32(0)
		if it%11 == 0 {
			softcap = 50
			scale /= softcap
		}
		acc, acc2 := make([]float32, hd), make([]float32, hd)
		got := f16Steps(acc, q, k, v, stride, np, scale, softcap)
		want := f16StepsGo(acc2, q, k, v, stride, np, scale, softcap)
		if !sameBits(got, want) {
			t.Fatalf("hd=%d np=%d spread %g: sum %g, portable %g", hd, np, spread, got, want)
		}
		for d := range acc {
			if !sameBits(acc[d], acc2[d]) {
				t.Fatalf("hd=%d np=%d spread %g: acc[%d] %g, portable %g", hd, np, spread, d, acc[d], acc2[d])
			}
		}
	}
}
