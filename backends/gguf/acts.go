package gguf

import (
	"encoding/binary"
	"math"
)

// ggml multiplies a weight matrix by activations converted to the weight
// type's "vec_dot_type" (ggml-cpu.c's type_traits_cpu): F16 weights meet
// activations rounded to F16, BF16 to BF16, Q8_0/Q4_0/Q5_0 to Q8_0 blocks,
// Q4_1/Q5_1 to Q8_1 blocks and the K-quants to Q8_K blocks. Multiplying by
// the float32 activations instead differs from llama.cpp by up to a few 1e-2
// in log-probabilities, so the activations are rounded here to exactly the
// values ggml's quantize_row_* produce, and the float kernels then compute
// the same sums up to float32 rounding.

// actKind is the vec_dot_type of a weight type.
type actKind int

const (
	actF32 actKind = iota
	actF16
	actBF16
	actQ8_0
	actQ8_1
	actQ8_K
)

func actKindOf(t TensorType) actKind {
	switch t {
	case TypeF16:
		return actF16
	case TypeBF16:
		return actBF16
	case TypeQ8_0, TypeQ4_0, TypeQ5_0:
		return actQ8_0
	case TypeQ4_1, TypeQ5_1:
		return actQ8_1
	case TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K:
		return actQ8_K
	}
	return actF32
}

// roundActs writes into dst the activations x (rows of cols) as ggml's
// conversion to kind k leaves them, dequantised. For Q8_1 it also returns
// each 32-block's stored sum s = f16(d·Σq), which ggml's Q4_1/Q5_1 dot
// products use for the weights' minimum term in place of Σ of the rounded
// values (see minCorrection).
func roundActs(k actKind, dst, x []float32, cols int) (sums []float32) {
	switch k {
	case actF16:
		for i, v := range x {
			dst[i] = roundF16(v)
		}
	case actBF16:
		for i, v := range x {
			dst[i] = roundBF16(v)
		}
	case actQ8_0, actQ8_1:
		if k == actQ8_1 {
			sums = make([]float32, len(x)/32)
		}
		for b := 0; b < len(x)/32; b++ {
			s := roundQ8Block(dst[b*32:b*32+32], x[b*32:b*32+32])
			if sums != nil {
				sums[b] = s
			}
		}
	case actQ8_K:
		for b := 0; b < len(x)/qk; b++ {
			roundQ8KBlock(dst[b*qk:(b+1)*qk], x[b*qk:(b+1)*qk])
		}
	default:
		copy(dst, x)
	}
	return sums
}

// roundBF16 is ggml_compute_fp32_to_bf16: round to nearest even, NaN kept quiet.
func roundBF16(x float32) float32 {
	u := math.Float32bits(x)
	if u&0x7fffffff > 0x7f800000 {
		return math.Float32frombits((u | 0x400000) &^ 0xffff)
	}
	u = (u + 0x7fff + (u >> 16 & 1)) &^ 0xffff
	return math.Float32frombits(u)
}

// roundQ8Block is quantize_row_q8_0 / q8_1 of one block as ggml-cpu's AVX2
// code computes it (d = max|x|/127 stored as f16, q = round-half-even(x·127/max))
// followed by dequantisation; it returns f16(d·Σq), Q8_1's s.
func roundQ8Block(dst, x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	d := amax / 127
	dh := roundF16(d)
	id := float32(0)
	if amax != 0 {
		id = 127 / amax
	}
	sum := 0
	for i, v := range x {
		q := float32(math.RoundToEven(float64(v * id)))
		sum += int(q)
		dst[i] = dh * q
	}
	return roundF16(d * float32(sum))
}

// roundQ8KBlock is quantize_row_q8_K_ref of one 256-block (the value of
// largest magnitude maps to -127, d = 1/iscale kept as float32) followed by
// dequantisation.
func roundQ8KBlock(dst, x []float32) {
	var q [qk]int8
	d := quantQ8KBlock(q[:len(x)], x)
	for i := range dst {
		dst[i] = d * float32(q[i])
	}
}

// minCorrection adds to out (n tokens of w.rows) what ggml's Q4_1/Q5_1 dot
// products add beyond the float product with the rounded activations: per
// block, the weights' minimum m times (s - Σ rounded activations), where s is
// the Q8_1 block's stored f16 sum.
func (p *pool) minCorrection(out []float32, w *matrix, xq, sums []float32, n int) {
	nb := w.cols / 32
	_, bb, _ := w.typ.layout()
	corr := make([]float32, n*nb)
	for i := range corr {
		var s float32
		for _, v := range xq[i*32 : i*32+32] {
			s += v
		}
		corr[i] = sums[i] - s
	}
	p.parallel(w.rows, func(lo, hi int) {
		mins := make([]float32, nb)
		for r := lo; r < hi; r++ {
			raw := w.raw[r*w.rowBytes : (r+1)*w.rowBytes]
			for b := range mins {
				mins[b] = f16ToF32(binary.LittleEndian.Uint16(raw[b*bb+2:]))
			}
			for t := 0; t < n; t++ {
				out[t*w.rows+r] += dot(mins, corr[t*nb:(t+1)*nb])
			}
		}
	})
}
