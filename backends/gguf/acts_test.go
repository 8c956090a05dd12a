package gguf

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// A matrix product multiplies the weights by the activations as ggml
// converts them for the weight type (its vec_dot_type): F16 and BF16 weights
// meet activations rounded to F16 and BF16, Q8_0 weights meet Q8_0 blocks,
// whose integer dot product is written out here as ggml-cpu's AVX2 code
// computes it, and Q4_1 weights meet Q8_1 blocks, whose stored f16 sum
// carries the weights' minimum term. With the float32 activations used as
// they are, each of these differs by far more than float32 rounding.
func TestMatmulRoundsActivationsAsGGML(t *testing.T) {
	const cols, rows, n = 256, 8, 3
	rng := rand.New(rand.NewPCG(5, 5))
	w := make([]float32, cols*rows)
	x := make([]float32, cols*n)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	bf16 := make([]byte, 2*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint16(bf16[2*i:], uint16(math.Float32bits(v)>>16))
	}
	want := func(typ TensorType, raw []byte, r, tok int) float64 {
		xs := x[tok*cols : (tok+1)*cols]
		var s float64
		switch typ {
		case TypeQ4_1:
			// ggml_vec_dot_q4_1_q8_1: d_w·d_x·Σ q_w·q_x + m_w·s_x, with
			// s_x = f16(d_x·Σ q_x) and d_x unrounded in s_x.
			for b := 0; b < cols/32; b++ {
				blk := raw[(r*cols/32+b)*20:]
				xb := xs[b*32 : b*32+32]
				var amax float32
				for _, v := range xb {
					amax = max(amax, float32(math.Abs(float64(v))))
				}
				id := 127 / amax
				dot, sum := 0, 0
				for i, v := range xb {
					q := int(math.RoundToEven(float64(v * id)))
					w := int(blk[4+i%16] & 0xf)
					if i >= 16 {
						w = int(blk[4+i%16] >> 4)
					}
					dot += w * q
					sum += q
				}
				s += float64(f16At(blk, 0))*float64(roundF16(amax/127))*float64(dot) + float64(f16At(blk, 2))*float64(roundF16(amax/127*float32(sum)))
			}
		case TypeQ8_0:
			for b := 0; b < cols/32; b++ {
				blk := raw[(r*cols/32+b)*34:]
				var amax float32
				for _, v := range xs[b*32 : b*32+32] {
					amax = max(amax, float32(math.Abs(float64(v))))
				}
				id := 127 / amax
				sum := 0
				for i, v := range xs[b*32 : b*32+32] {
					sum += int(int8(blk[2+i])) * int(math.RoundToEven(float64(v*id)))
				}
				s += float64(f16At(blk, 0)) * float64(roundF16(amax/127)) * float64(sum)
			}
		default:
			row := make([]float32, cols)
			dequantRow(typ, raw[r*cols*2:], row)
			for i, v := range xs {
				a := roundF16(v)
				if typ == TypeBF16 {
					a = roundBF16(v)
				}
				s += float64(row[i]) * float64(a)
			}
		}
		return s
	}
	for _, c := range []struct {
		typ TensorType
		raw []byte
	}{{TypeF16, encode(w, TypeF16)}, {TypeBF16, bf16}, {TypeQ8_0, encode(w, TypeQ8_0)}, {TypeQ4_1, randomBlocks(TypeQ4_1, cols*rows/32, 0.1, rng)}} {
		m := newMatrix(&TensorInfo{Name: "w", Type: c.typ, Dims: []uint64{cols, rows}, Data: c.raw})
		out := make([]float32, n*rows)
		(&pool{threads: 2}).matmul(out, m, x, n)
		for tok := 0; tok < n; tok++ {
			for r := 0; r < rows; r++ {
				if got, want := float64(out[tok*rows+r]), want(c.typ, c.raw, r, tok); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
					t.Fatalf("%s row %d token %d: %.7f, ggml's rounding gives %.7f", c.typ, r, tok, got, want)
				}
			}
		}
	}
}

// roundBF16 rounds to nearest even like ggml_compute_fp32_to_bf16.
func TestRoundBF16(t *testing.T) {
	for _, c := range []struct{ in, want uint32 }{
		{0x3f808000, 0x3f800000}, // tie, even stays
		{0x3f818000, 0x3f820000}, // tie, odd rounds up
		{0x3f808001, 0x3f810000},
		{0xbf807fff, 0xbf800000},
	} {
		if got := math.Float32bits(roundBF16(math.Float32frombits(c.in))); got != c.want {
			t.Errorf("roundBF16(%#x) = %#x, want %#x", c.in, got, c.want)
		}
	}
}
