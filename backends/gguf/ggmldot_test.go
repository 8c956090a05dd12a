package gguf

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// The AVX2 kernels give the bits of the portable ones, on lengths and
// magnitudes where the summation order decides the last bits.
func TestGGMLDotKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	vec := func(n int, scale float64, round func(float32) float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = round(float32(rng.NormFloat64() * scale * math.Exp(2*rng.NormFloat64())))
		}
		return v
	}
	same := func(v float32) float32 { return v }
	bf := func(v []float32) []uint16 {
		out := make([]uint16, len(v))
		for i, x := range v {
			out[i] = uint16(math.Float32bits(roundBF16(x)) >> 16)
		}
		return out
	}
	for _, n := range []int{16, 32, 64, 128, 256, 320, 512, 1024, 2048 + 64} {
		for rep := 0; rep < 20; rep++ {
			round := same
			if rep%2 == 1 {
				round = roundF16
			}
			w, x0, x1, x2, x3 := vec(n, 1, round), vec(n, 3, round), vec(n, 0.1, round), vec(n, 10, round), vec(n, 1, round)
			var o [4]float32
			dotL16x4(w, x0, x1, x2, x3, &o)
			for i, x := range [][]float32{x0, x1, x2, x3} {
				if g, want := dotL16Go(w, x), dotL16(w, x); math.Float32bits(g) != math.Float32bits(want) || math.Float32bits(o[i]) != math.Float32bits(want) {
					t.Fatalf("n=%d: dotL16 %g, x4 %g, portable %g", n, want, o[i], g)
				}
			}
			var o8 [8]float32
			if dotL16x2x4(w, x3, x0, x1, x2, x3, &o8) {
				for r, wr := range [][]float32{w, x3} {
					for k, x := range [][]float32{x0, x1, x2, x3} {
						if g := dotL16Go(wr, x); math.Float32bits(g) != math.Float32bits(o8[4*r+k]) {
							t.Fatalf("n=%d: dotL16x2x4 row %d token %d: %g, portable %g", n, r, k, o8[4*r+k], g)
						}
					}
				}
			}
			if n%64 == 0 {
				if g, want := dotL64Go(w, x0), dotL64(w, x0); math.Float32bits(g) != math.Float32bits(want) {
					t.Fatalf("n=%d: dotL64 %g, portable %g", n, want, g)
				}
			}
			h := make([]uint16, n)
			for i, v := range w {
				h[i] = f32ToF16(v)
			}
			got, want := make([]float32, n), make([]float32, n)
			f16ToF32Row(h, got)
			f16ToF32Go(h, want)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("n=%d: f16ToF32Row[%d] %g, portable %g", n, i, got[i], want[i])
				}
			}
			if n%32 != 0 {
				continue
			}
			bw, b0, b1, b2, b3 := bf(w), bf(x0), bf(x1), bf(x2), bf(x3)
			bf16L16x4(bw, b0, b1, b2, b3, &o)
			for i, x := range [][]uint16{b0, b1, b2, b3} {
				if g, want := bf16L16Go(bw, x), bf16L16(bw, x); math.Float32bits(g) != math.Float32bits(want) || math.Float32bits(o[i]) != math.Float32bits(want) {
					t.Fatalf("n=%d: bf16L16 %g, x4 %g, portable %g", n, want, o[i], g)
				}
			}
			if bf16L16x2x4(bw, b3, b0, b1, b2, b3, &o8) {
				for r, wr := range [][]uint16{bw, b3} {
					for k, x := range [][]uint16{b0, b1, b2, b3} {
						if g := bf16L16Go(wr, x); math.Float32bits(g) != math.Float32bits(o8[4*r+k]) {
							t.Fatalf("n=%d: bf16L16x2x4 row %d token %d: %g, portable %g", n, r, k, o8[4*r+k], g)
						}
					}
				}
			}
			if n%64 == 0 {
				var a, b [2]float32
				bf16Vec(bw, b0, &a)
				bf16VecGo(bw, b0, &b)
				if a != b {
					t.Fatalf("n=%d: bf16Vec %v, portable %v", n, a, b)
				}
			}
		}
	}
}

// The summation orders differ from each other (else the test above could
// not tell a wrong lane mapping): on these vectors the 16-lane, 64-lane and
// sequential sums do not all agree.
func TestGGMLDotOrdersDiffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	differ := 0
	for rep := 0; rep < 100; rep++ {
		w, x := make([]float32, 256), make([]float32, 256)
		for i := range w {
			w[i], x[i] = roundF16(float32(rng.NormFloat64())), roundF16(float32(rng.NormFloat64()))
		}
		var seq float32
		for i := range w {
			seq += w[i] * x[i]
		}
		if a, b := dotL16Go(w, x), dotL64Go(w, x); a != b || a != seq {
			differ++
		}
	}
	if differ < 20 {
		t.Fatalf("only %d of 100 sums depend on the order", differ)
	}
}

// fma32 rounds a·b+c once, including where rounding through float64 would
// round twice.
func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var cases [][3]float32
	for i := 0; i < 200000; i++ {
		a := float32(rng.NormFloat64())
		b := float32(rng.NormFloat64())
		c := float32(rng.NormFloat64() * math.Exp(10*rng.NormFloat64()))
		if i%2 == 0 { // sums near cancellation
			c = -a * b * (1 + float32(rng.NormFloat64())*1e-6)
		}
		cases = append(cases, [3]float32{a, b, c})
	}
	// Double rounding: a·b = 2^-24·(1-2^-2k) is just under half a float32
	// ulp of c in [1, 2), closer than float64 resolves, so float64 rounds
	// c+a·b onto the float32 midpoint and ties-to-even would pick c's
	// upper neighbour for odd c; the exact value rounds to c.
	for k := 15; k <= 23; k++ {
		a := float32(math.Ldexp(1+math.Ldexp(1, -k), -24))
		b := float32(1 - math.Ldexp(1, -k))
		for i := 0; i < 200; i++ {
			c := math.Float32frombits(0x3f800000 | rng.Uint32()&0x7fffff)
			cases = append(cases, [3]float32{a, b, c}, [3]float32{-a, b, -c}, [3]float32{a, -b, c})
		}
	}
	naive := 0
	for _, c := range cases {
		if float32(float64(c[0])*float64(c[1])+float64(c[2])) != exactFMA(c[0], c[1], c[2]) {
			naive++
		}
	}
	if naive == 0 {
		t.Fatal("no case where rounding through float64 is wrong: the test cannot fail")
	}
	for _, c := range cases {
		if got, want := fma32(c[0], c[1], c[2]), exactFMA(c[0], c[1], c[2]); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", c[0], c[1], c[2], got, want)
		}
	}
}

// exactFMA is a·b+c rounded once, through big.Float.
func exactFMA(a, b, c float32) float32 {
	p := new(big.Float).SetPrec(200).Mul(big.NewFloat(float64(a)).SetPrec(200), big.NewFloat(float64(b)).SetPrec(200))
	p.Add(p, big.NewFloat(float64(c)).SetPrec(200))
	f, _ := p.Float32()
	return f
}
