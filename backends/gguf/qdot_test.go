package gguf

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// randomRow returns one row of cols values of typ with random quants and
// scales of ordinary size.
func randomRow(rng *rand.Rand, typ TensorType, cols int) []byte {
	bs, bb, _ := typ.layout()
	raw := make([]byte, cols/bs*bb)
	for i := range raw {
		raw[i] = byte(rng.IntN(256))
	}
	f16 := func(off int) {
		binary.LittleEndian.PutUint16(raw[off:], f32ToF16(float32(rng.NormFloat64())*0.01))
	}
	for b := 0; b < cols/bs; b++ {
		switch typ {
		case TypeQ8_0:
			f16(b * bb)
			for i := 2; i < 34; i++ {
				if raw[b*bb+i] == 0x80 { // quantize_row_q8_0 never writes -128
					raw[b*bb+i] = 0x81
				}
			}
		case TypeQ4_K:
			f16(b * bb)
			f16(b*bb + 2)
		case TypeQ6_K:
			f16(b*bb + 208)
		}
	}
	return raw
}

func randomActs(rng *rand.Rand, n, cols int) []float32 {
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// TestQKernelsMatchPortable checks the SIMD integer kernels against the
// portable loops bit for bit, and the portable loops against the float
// product of the dequantised weights and activations.
func TestQKernelsMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 5))
	for _, tc := range []struct {
		typ  TensorType
		cols int
	}{{TypeQ8_0, 32 * 7}, {TypeQ8_0, 1024}, {TypeQ8_0, 32}, {TypeQ4_K, 768}, {TypeQ6_K, 768}, {TypeQ4_K, 256}, {TypeQ6_K, 2816}} {
		const n = 7
		x := randomActs(rng, n, tc.cols)
		x[3] = 40 // an outlier, so a block's scale is set by it
		k := actKindOf(tc.typ)
		a := quantActs(k, x, n, tc.cols)
		xr := make([]float32, len(x))
		roundActs(k, xr, x, tc.cols)
		w := &matrix{typ: tc.typ, rows: 3, cols: tc.cols, act: k}
		for r := 0; r < w.rows; r++ {
			w.raw = append(w.raw, randomRow(rng, tc.typ, tc.cols)...)
		}
		w.rowBytes = len(w.raw) / w.rows
		wf := make([]float32, tc.cols)
		for r := 0; r < w.rows; r++ {
			raw := w.raw[r*w.rowBytes : (r+1)*w.rowBytes]
			dequantRow(tc.typ, raw, wf)
			var o4 [4]float32
			dot4 := qDot4Of(tc.typ)
			if dot4 != nil {
				dot4(&o4, raw, a, 0)
			}
			for tok := 0; tok < n; tok++ {
				q := a.q[tok*tc.cols : (tok+1)*tc.cols]
				var want float32
				switch tc.typ {
				case TypeQ8_0:
					var acc [4]float32
					q8BlocksGo(&acc, raw, q, a.d[tok:], n, 0, tc.cols/32)
					want = sum4(&acc)
				case TypeQ4_K:
					want = q4KDotGo(raw, q, a.d[tok:], n, a.bs[tok*16:])
				case TypeQ6_K:
					want = q6KDotGo(raw, q, a.d[tok:], n)
				}
				if tc.typ == TypeQ8_0 && r > 0 && tok < 4 {
					var o8 [8]float32
					q8Dot2x4(&o8, w.raw[(r-1)*w.rowBytes:r*w.rowBytes], raw, a, 0)
					if math.Float32bits(o8[4+tok]) != math.Float32bits(want) {
						t.Errorf("%v cols %d row %d token %d: two-row kernel %v, portable %v", tc.typ, tc.cols, r, tok, o8[4+tok], want)
					}
				}
				if dot4 != nil && tok < 4 && math.Float32bits(o4[tok]) != math.Float32bits(want) {
					t.Errorf("%v cols %d row %d token %d: four-token kernel %v, portable %v", tc.typ, tc.cols, r, tok, o4[tok], want)
				}
				if got := qDot1(w, r, a, tok); math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%v cols %d row %d token %d: kernel %v, portable %v", tc.typ, tc.cols, r, tok, got, want)
				}
				var ref, mag float64
				for i, v := range wf {
					p := float64(v) * float64(xr[tok*tc.cols+i])
					ref += p
					mag += math.Abs(p)
				}
				if math.Abs(float64(want)-ref) > 1e-5*mag {
					t.Errorf("%v cols %d row %d token %d: integer product %v, float product of the dequantised values %v", tc.typ, tc.cols, r, tok, want, ref)
				}
			}
		}
	}
}

// TestQuantActsMatchRounding checks that the integer activations are the
// values roundActs produces.
func TestQuantActsMatchRounding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, cols = 3, 512
	x := randomActs(rng, n, cols)
	for _, k := range []actKind{actQ8_0, actQ8_K} {
		a := quantActs(k, x, n, cols)
		xr := make([]float32, len(x))
		roundActs(k, xr, x, cols)
		bsize := 32
		if k == actQ8_K {
			bsize = qk
		}
		for tok := 0; tok < n; tok++ {
			for i := 0; i < cols; i++ {
				got := a.d[(i/bsize)*n+tok] * float32(a.q[tok*cols+i])
				if got != xr[tok*cols+i] {
					t.Fatalf("kind %d token %d value %d: %v, roundActs %v", k, tok, i, got, xr[tok*cols+i])
				}
			}
		}
	}
}

func TestF16AttentionUpdatesMatchPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{8, 64, 67, 128} {
		x, y := randomActs(rng, 1, n), randomActs(rng, 1, n)
		for i := range y {
			y[i] = roundF16(y[i] * 1000)
		}
		y[0] = 70000 // beyond f16's range
		y[1] = 1e-6  // an f16 subnormal
		s := float32(rng.Float64())
		want, got := append([]float32(nil), y...), append([]float32(nil), y...)
		f16AccGo(want, x, s)
		f16Acc(got, x, s)
		want2, got2 := append([]float32(nil), y...), append([]float32(nil), y...)
		f16ScaleGo(want2, s)
		f16Scale(got2, s)
		for i := range y {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(got2[i]) != math.Float32bits(want2[i]) {
				t.Fatalf("n %d element %d: f16Acc %v, portable %v; f16Scale %v, portable %v", n, i, got[i], want[i], got2[i], want2[i])
			}
		}
	}
}

func TestQuantQ8RowMatchesPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const cols = 32 * 70
	x := randomActs(rng, 1, cols)
	for i := 64; i < 96; i++ {
		x[i] = 0 // an all-zero block
	}
	x[100] = 1e30
	x[200] = -3 // halves and ties come from random values; a large outlier too
	q, qg := make([]int8, cols), make([]int8, cols)
	d, dg := make([]float32, cols/32*2), make([]float32, cols/32*2)
	quantQ8Row(q, d, 2, x)
	quantQ8RowGo(qg, dg, 2, x)
	for i := range q {
		if q[i] != qg[i] {
			t.Fatalf("value %d: %d, portable %d", i, q[i], qg[i])
		}
	}
	for i := range d {
		if math.Float32bits(d[i]) != math.Float32bits(dg[i]) {
			t.Fatalf("scale %d: %v, portable %v", i, d[i], dg[i])
		}
	}
}

func TestQuantQ8KMatchesPortable(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for c := 0; c < 6; c++ {
		x := randomActs(rng, 1, qk)
		switch c {
		case 1:
			x[10], x[20] = 9, -9 // both signs reach the maximum: the first decides
		case 2:
			x[10], x[20] = -9, 9
		case 3:
			clear(x)
		case 4:
			x[200] = -50
		}
		q, qg := make([]int8, qk), make([]int8, qk)
		bs, bsg := make([]int16, 16), make([]int16, 16)
		d, dg := quantQ8KSuper(q, bs, x), quantQ8KSuperGo(qg, bsg, x)
		if math.Float32bits(d) != math.Float32bits(dg) {
			t.Fatalf("case %d: d %v, portable %v", c, d, dg)
		}
		for i := range q {
			if q[i] != qg[i] {
				t.Fatalf("case %d value %d: %d, portable %d", c, i, q[i], qg[i])
			}
		}
		for g := range bs {
			if bs[g] != bsg[g] {
				t.Fatalf("case %d sum %d: %d, portable %d", c, g, bs[g], bsg[g])
			}
		}
	}
}
