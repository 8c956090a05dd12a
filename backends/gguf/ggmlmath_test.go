package gguf

import (
	"math"
	"testing"
)

// The elementwise functions give the bits of glibc's cosf, sinf, expf and
// tanhf and of ggml's vectorised SiLU and GELU table, over every class of
// bit pattern and a dense range of ordinary inputs. The hashes come from
// testdata/gguf/ggmlmath_ref.cpp, linked against the llama.cpp build
// llama-server comes from (glibc 2.36, AVX-512); it prints them again.
func TestGGMLMathMatchesReference(t *testing.T) {
	const n = 1 << 18
	inputs := func(r float32) []float32 {
		x := make([]float32, 2*n)
		for i := uint32(0); i < n; i++ {
			x[i] = math.Float32frombits(i * 0x9E3779B1)
			x[n+i] = (float32(i)/n - 0.5) * 2 * r
		}
		return x
	}
	fnv := func(y []float32) uint64 {
		h := uint64(1469598103934665603)
		for _, v := range y {
			u := math.Float32bits(v)
			if v != v {
				u = 0x7fc00000
			}
			for b := 0; b < 4; b++ {
				h ^= uint64(u >> (8 * b) & 0xff)
				h *= 1099511628211
			}
		}
		return h
	}
	for _, c := range []struct {
		name string
		r    float32
		f    func(float32) float32
		want uint64
	}{
		{"cosf", 5000, cosf, 0x6042374e404b2c2c},
		{"sinf", 5000, sinf, 0xe8db6079c2145d4e},
		{"expf", 120, expf, 0x50e6f47c70954682},
		{"tanhf", 12, tanhf, 0x8dc05a282a6fc5f5},
		{"silu", 40, siluGGML, 0x2bf59656ebdf9716},
	} {
		x := inputs(c.r)
		for i, v := range x {
			x[i] = c.f(v)
		}
		if got := fnv(x); got != c.want {
			t.Errorf("%s: hash %#x, reference %#x", c.name, got, c.want)
		}
	}
	g := make([]float32, 1<<16)
	for i := range g {
		g[i] = math.Float32frombits(uint32(f32ToF16(geluTable(f16ToF32(uint16(i))))))
	}
	if got, want := fnv(g), uint64(0x234496e58bba43de); got != want {
		t.Errorf("gelu table: hash %#x, reference %#x", got, want)
	}
}
