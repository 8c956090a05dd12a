package gguf

import "math"

// Elementwise functions with the bits llama.cpp's CPU backend computes on
// x86-64: glibc's cosf and sinf (Arm's optimized-routines algorithm, which
// the rope cache calls) and ggml's vectorised expf and SiLU (ggml_v_expf and
// ggml_v_silu, AVX-512). The float32 results of float64 or libm versions
// differ from these in the last bit for about one value in a hundred, and a
// last bit can decide an F16 or BF16 rounding further on.

// sincosPoly holds glibc's polynomials for sinf and cosf in one quadrant
// pair; the second entry of sincosTable returns -cos rather than cos.
type sincosPoly struct {
	sign               [4]float64
	hpiInv, hpi        float64
	c0, c1, c2, c3, c4 float64
	s1, s2, s3         float64
}

var sincosTable = [2]sincosPoly{
	{[4]float64{1, -1, -1, 1}, 0x1.45F306DC9C883p+23, 0x1.921FB54442D18p0,
		0x1p0, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{[4]float64{1, -1, -1, 1}, 0x1.45F306DC9C883p+23, 0x1.921FB54442D18p0,
		-0x1p0, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

// invPio4 is 4/π to 192 bits, 8 new bits per entry.
var invPio4 = [24]uint32{
	0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529,
	0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0,
	0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
}

func abstop12(x float32) uint32 { return math.Float32bits(x) >> 20 & 0x7ff }

// sincosPolyEval is the sine (n even) or cosine polynomial at x, x2 = x².
// Each product is rounded before its sum (explicit conversions keep Go
// from fusing them): glibc's code has no fused multiply-adds here.
func sincosPolyEval(x, x2 float64, p *sincosPoly, n int) float32 {
	if n&1 == 0 {
		x3 := float64(x * x2)
		s1 := p.s2 + float64(x2*p.s3)
		x7 := float64(x3 * x2)
		s := x + float64(x3*p.s1)
		return float32(s + float64(x7*s1))
	}
	x4 := float64(x2 * x2)
	c2 := p.c3 + float64(x2*p.c4)
	c1 := p.c0 + float64(x2*p.c1)
	x6 := float64(x4 * x2)
	c := c1 + float64(x4*p.c2)
	return float32(c + float64(x6*c2))
}

// reduceFast is x modulo π/2 in [-π/4, π/4] and its quadrant, for |x| < 120.
func reduceFast(x float64, p *sincosPoly) (float64, int) {
	r := float64(x * p.hpiInv)
	n := (int32(r) + 0x800000) >> 24
	return x - float64(float64(n)*p.hpi), int(n)
}

// reduceLarge is reduceFast for |x| >= 120 by integer arithmetic on 4/π.
func reduceLarge(xi uint32) (float64, int) {
	arr := invPio4[xi>>26&15:]
	shift := xi >> 23 & 7
	xi = (xi&0xffffff | 0x800000) << shift
	res0 := uint64(xi * arr[0])
	res1 := uint64(xi) * uint64(arr[4])
	res2 := uint64(xi) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)) * 0x1.921FB54442D18p-62, int(n)
}

// cosf is glibc's cosf.
func cosf(y float32) float32 { return sinCosf(y, 1) }

// sinf is glibc's sinf.
func sinf(y float32) float32 { return sinCosf(y, 0) }

// sinCosf is sinf (odd 0) or cosf (odd 1).
func sinCosf(y float32, odd int) float32 {
	x := float64(y)
	p := &sincosTable[0]
	switch a := abstop12(y); {
	case a < abstop12(0x1.921FB6p-1):
		if a < abstop12(0x1p-12) {
			if odd == 1 {
				return 1
			}
			return y
		}
		return sincosPolyEval(x, float64(x*x), p, odd)
	case a < abstop12(120):
		r, n := reduceFast(x, p)
		s := p.sign[n&3]
		if n&2 != 0 {
			p = &sincosTable[1]
		}
		return sincosPolyEval(float64(r*s), float64(r*r), p, n^odd)
	case a < abstop12(float32(math.Inf(1))):
		xi := math.Float32bits(y)
		sign := int(xi >> 31)
		r, n := reduceLarge(xi)
		s := p.sign[(n+sign)&3]
		if (n+sign)&2 != 0 {
			p = &sincosTable[1]
		}
		return sincosPolyEval(float64(r*s), float64(r*r), p, n^odd)
	}
	return float32(math.NaN())
}

// expfGGML is ggml_v_expf (AVX-512) on one lane.
func expfGGML(x float32) float32 {
	const r = 0x1.8p23
	z := fma32(x, 0x1.715476p+0, r)
	n := z - r
	b := fma32(-n, 0x1.7f7d1cp-20, fma32(-n, 0x1.62e4p-1, x))
	if math.Abs(float64(n)) > 192 {
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	u := b * b
	j := fma32(fma32(fma32(0x1.0e4020p-7, b, 0x1.573e2ep-5), u, fma32(0x1.555e66p-3, b, 0x1.fffdb6p-2)), u,
		fma32(0x1.ffffecp-1, b, 1))
	// _mm512_scalef_ps(j, n): j·2^n rounded once
	return float32(math.Ldexp(float64(j), int(n)))
}

// siluGGML is ggml_v_silu on one lane: x / (1 + e^-x).
func siluGGML(x float32) float32 {
	return x / (1 + expfGGML(0-x))
}

// exp2fTable is 2^(i/32) as float64 bits minus i<<47 (glibc's
// __exp2f_data.tab, shared by expf).
var exp2fTable = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}

// expf is glibc's expf (Arm's optimized-routines algorithm), which ggml's
// flash attention calls for its softmax.
func expf(x float32) float32 {
	const (
		invLn2N = 0x1.71547652b82fep+0 * 32
		shift   = 0x1.8p+52
		c0      = 0x1.c6af84b912394p-5 / 32 / 32 / 32
		c1      = 0x1.ebfce50fac4f3p-3 / 32 / 32
		c2      = 0x1.62e42ff0c52d6p-1 / 32
	)
	if abstop12(x) >= abstop12(88) {
		switch {
		case math.Float32bits(x) == 0xff800000:
			return 0
		case abstop12(x) >= 0x7f8:
			return x + x
		case x > 0x1.62e42ep6:
			return float32(math.Inf(1))
		case x < -0x1.9fe368p6:
			return 0
		}
	}
	z := float64(invLn2N * float64(x))
	kd := float64(z + shift)
	ki := math.Float64bits(kd)
	kd -= shift
	r := z - kd
	s := math.Float64frombits(exp2fTable[ki%32] + ki<<47)
	zz := float64(c0*r) + c1
	r2 := float64(r * r)
	y := float64(c2*r) + 1
	y = float64(zz*r2) + y
	return float32(y * s)
}

// tanhf is glibc's tanhf (the Sun implementation through expm1f), which
// ggml's soft-capping and GELU table call.
func tanhf(x float32) float32 {
	jx := math.Float32bits(x)
	ix := jx & 0x7fffffff
	var z float32
	switch {
	case ix >= 0x7f800000:
		if jx>>31 == 0 {
			return 1/x + 1
		}
		return 1/x - 1
	case ix >= 0x41b00000: // |x| >= 22
		z = 1
	case ix == 0:
		return x
	case ix < 0x24000000: // |x| < 2^-55
		return float32(x * (1 + x))
	case ix >= 0x3f800000: // |x| >= 1
		t := expm1f(2 * float32(math.Abs(float64(x))))
		z = 1 - 2/(t+2)
	default:
		t := expm1f(-2 * float32(math.Abs(float64(x))))
		z = -t / (t + 2)
	}
	if jx>>31 != 0 {
		return -z
	}
	return z
}

// expm1f is glibc's expm1f (Sun's). Products that meet a sum are rounded
// first (float32 conversions), as glibc's code computes them.
func expm1f(x float32) float32 {
	const (
		oThreshold = 8.8721679688e+01
		ln2Hi      = 6.9313812256e-01
		ln2Lo      = 9.0580006145e-06
		invLn2     = 1.4426950216e+00
		q1         = -3.3333335072e-02
		q2         = 1.5873016091e-03
		q3         = -7.9365076090e-05
		q4         = 4.0082177293e-06
		q5         = -2.0109921195e-07
	)
	hx := math.Float32bits(x)
	neg := hx>>31 != 0
	hx &= 0x7fffffff
	if hx >= 0x4195b844 { // |x| >= 27·ln2
		if hx >= 0x42b17218 {
			if hx > 0x7f800000 {
				return x + x
			}
			if hx == 0x7f800000 {
				if neg {
					return -1
				}
				return x
			}
			if x > oThreshold {
				return float32(math.Inf(1))
			}
		}
		if neg {
			return -1
		}
	}
	var hi, lo, c float32
	var k int32
	switch {
	case hx > 0x3eb17218: // |x| > 0.5·ln2
		if hx < 0x3F851592 { // and < 1.5·ln2
			if !neg {
				hi, lo, k = x-ln2Hi, ln2Lo, 1
			} else {
				hi, lo, k = x+ln2Hi, -ln2Lo, -1
			}
		} else {
			half := float32(0.5)
			if neg {
				half = -0.5
			}
			k = int32(float32(float32(invLn2*x) + half))
			t := float32(k)
			hi = x - float32(t*ln2Hi)
			lo = float32(t * ln2Lo)
		}
		x = hi - lo
		c = (hi - x) - lo
	case hx < 0x33000000: // |x| < 2^-25
		return x
	}
	hfx := float32(0.5 * x)
	hxs := float32(x * hfx)
	p := float32(q4 + float32(hxs*q5))
	p = float32(q3 + float32(hxs*p))
	p = float32(q2 + float32(hxs*p))
	p = float32(q1 + float32(hxs*p))
	r1 := float32(1 + float32(hxs*p))
	t := float32(3 - float32(r1*hfx))
	e := float32(hxs * ((r1 - t) / float32(6-float32(x*t))))
	if k == 0 {
		return x - float32(float32(x*e)-hxs)
	}
	e = float32(float32(x*(e-c)) - c)
	e -= hxs
	switch {
	case k == -1:
		return float32(0.5*(x-e)) - 0.5
	case k == 1:
		if x < -0.25 {
			return float32(-2 * (e - (x + 0.5)))
		}
		return float32(1 + float32(2*(x-e)))
	case k <= -2 || k > 56:
		y := 1 - (e - x)
		y = math.Float32frombits(math.Float32bits(y) + uint32(k)<<23)
		return y - 1
	case k < 23:
		t := math.Float32frombits(0x3f800000 - 0x1000000>>uint(k)) // 1-2^-k
		y := t - (e - x)
		return math.Float32frombits(math.Float32bits(y) + uint32(k)<<23)
	}
	t = math.Float32frombits(uint32(0x7f-k) << 23) // 2^-k
	y := x - (e + t)
	y++
	return math.Float32frombits(math.Float32bits(y) + uint32(k)<<23)
}
