package gguf

import "math"

// matmulHalf is matmul for F32, F16 and BF16 weights, summed in llama.cpp's
// order (ggmldot.go): llamafile's tinyBLAS for two or more tokens when it
// takes the shape (rows a multiple of 4, columns of 16 for F32 and F16 and
// 32 for BF16), ggml's vec_dot otherwise and whenever perRow is set, as for the
// rows llama.cpp computes one at a time (see matmulOut). Either way a
// row's result does not depend on the other tokens of the batch.
func (p *pool) matmulHalf(out []float32, w *matrix, x []float32, n int, perRow bool) {
	cols, rows := w.cols, w.rows
	bf := w.typ == TypeBF16
	kn := 16
	if bf {
		kn = 32
	}
	tiny := !perRow && n >= 2 && rows%4 == 0 && cols%kn == 0
	if w.typ == TypeF32 {
		p.parallel(rows, func(lo, hi int) {
			mmF32(out, w, x, n, lo, hi, tiny)
		})
		return
	}
	if bf {
		xb := make([]uint16, n*cols)
		for i, v := range x[:n*cols] {
			xb[i] = uint16(math.Float32bits(roundBF16(v)) >> 16)
		}
		p.parallel(rows, func(lo, hi int) {
			mmBF16(out, w, xb, n, lo, hi, tiny)
		})
		return
	}
	bp := getBuf(n * cols)
	defer scratch.Put(bp)
	xf := (*bp)[:n*cols]
	for i, v := range x[:n*cols] {
		xf[i] = roundF16(v)
	}
	p.parallel(rows, func(lo, hi int) {
		mmF16(out, w, xf, n, lo, hi, tiny)
	})
}

// halfRowBlock and halfTokBlock tile the weight rows (expanded, in L2)
// against the tokens (in L1).
const halfRowBlock, halfTokBlock = 16, 16

// rowDots are the dot products of one element type in one order: d1 of one
// row with one token, d4 of one row with four, d8 (when the CPU has it) of
// two rows with four; vec is the one-row order (vec_dot's).
type rowDots[T float32 | uint16] struct {
	d1  func(w, x []T) float32
	d4  func(w, x0, x1, x2, x3 []T, out *[4]float32)
	d8  func(w0, w1, x0, x1, x2, x3 []T, out *[8]float32) bool
	vec func(w, x []T) float32
}

var (
	f32Dots  = rowDots[float32]{dotL16, dotL16x4, dotL16x2x4, nil}
	bf16Dots = rowDots[uint16]{bf16L16, bf16L16x4, bf16L16x2x4, ggmlDotBF16}
)

// tile computes out for rows [r0, r1) (row(r) gives each) against tokens
// [t0, t1) of x, in tinyBLAS's order when tiny, else in d.vec's.
func tile[T float32 | uint16](out []float32, rows, cols int, row func(int) []T, x []T, r0, r1, t0, t1 int, tiny bool, d rowDots[T]) {
	xt := func(t int) []T { return x[t*cols : (t+1)*cols] }
	if !tiny {
		for r := r0; r < r1; r++ {
			w := row(r)
			for t := t0; t < t1; t++ {
				out[t*rows+r] = d.vec(w, xt(t))
			}
		}
		return
	}
	var o4 [4]float32
	var o8 [8]float32
	r := r0
	for ; r+2 <= r1 && t1-t0 >= 4; r += 2 {
		w0, w1 := row(r), row(r+1)
		t := t0
		for ; t+4 <= t1; t += 4 {
			if !d.d8(w0, w1, xt(t), xt(t+1), xt(t+2), xt(t+3), &o8) {
				break
			}
			for k := 0; k < 4; k++ {
				out[(t+k)*rows+r] = o8[k]
				out[(t+k)*rows+r+1] = o8[4+k]
			}
		}
		for ; t+4 <= t1; t += 4 {
			for j, w := range [2][]T{w0, w1} {
				d.d4(w, xt(t), xt(t+1), xt(t+2), xt(t+3), &o4)
				for k := range o4 {
					out[(t+k)*rows+r+j] = o4[k]
				}
			}
		}
		for ; t < t1; t++ {
			out[t*rows+r] = d.d1(w0, xt(t))
			out[t*rows+r+1] = d.d1(w1, xt(t))
		}
	}
	for ; r < r1; r++ {
		w := row(r)
		t := t0
		for ; t+4 <= t1; t += 4 {
			d.d4(w, xt(t), xt(t+1), xt(t+2), xt(t+3), &o4)
			for k := range o4 {
				out[(t+k)*rows+r] = o4[k]
			}
		}
		for ; t < t1; t++ {
			out[t*rows+r] = d.d1(w, xt(t))
		}
	}
}

// mmF16 computes rows [lo, hi) of an F16 matmul: each tile of rows is
// expanded to float32 (exactly) once and met by every token.
func mmF16(out []float32, w *matrix, x []float32, n, lo, hi int, tiny bool) {
	cols := w.cols
	bp := getBuf(halfRowBlock * cols)
	defer scratch.Put(bp)
	buf := (*bp)[:halfRowBlock*cols]
	d := f32Dots
	d.vec = ggmlDotF16
	for r0 := lo; r0 < hi; r0 += halfRowBlock {
		r1 := min(r0+halfRowBlock, hi)
		for r := r0; r < r1; r++ {
			f16ToF32Row(bytesToU16(w.raw[r*w.rowBytes:(r+1)*w.rowBytes]), buf[(r-r0)*cols:(r-r0+1)*cols])
		}
		row := func(r int) []float32 { return buf[(r-r0)*cols : (r-r0+1)*cols] }
		for t0 := 0; t0 < n; t0 += halfTokBlock {
			tile(out, w.rows, cols, row, x, r0, r1, t0, min(t0+halfTokBlock, n), tiny, d)
		}
	}
}

// mmF32 computes rows [lo, hi) of an F32 matmul.
func mmF32(out []float32, w *matrix, x []float32, n, lo, hi int, tiny bool) {
	cols := w.cols
	d := f32Dots
	d.vec = ggmlDotF32
	row := func(r int) []float32 { return w.f32[r*cols : (r+1)*cols] }
	for r0 := lo; r0 < hi; r0 += halfRowBlock {
		r1 := min(r0+halfRowBlock, hi)
		for t0 := 0; t0 < n; t0 += halfTokBlock {
			tile(out, w.rows, cols, row, x, r0, r1, t0, min(t0+halfTokBlock, n), tiny, d)
		}
	}
}

// mmBF16 computes rows [lo, hi) of a BF16 matmul on the raw weights and
// the activations rounded to BF16.
func mmBF16(out []float32, w *matrix, x []uint16, n, lo, hi int, tiny bool) {
	row := func(r int) []uint16 { return bytesToU16(w.raw[r*w.rowBytes : (r+1)*w.rowBytes]) }
	for r0 := lo; r0 < hi; r0 += halfRowBlock {
		r1 := min(r0+halfRowBlock, hi)
		for t0 := 0; t0 < n; t0 += halfTokBlock {
			tile(out, w.rows, w.cols, row, x, r0, r1, t0, min(t0+halfTokBlock, n), tiny, bf16Dots)
		}
	}
}

// matmulOut is matmul for the rows llama.cpp computes only for the tokens
// whose logits it returns: the last layer's feed-forward block and the
// output projection (its graphs select those rows before them). llama-server
// returns one token's logits per completion request, so it multiplies those
// matrices one row at a time, in vec_dot's order rather than tinyBLAS's.
func (p *pool) matmulOut(out []float32, w *matrix, x []float32, n int) {
	if ggmlOrdered(w) {
		p.matmulHalf(out, w, x, n, true)
		return
	}
	p.matmul(out, w, x, n)
}

// ggmlOrdered reports whether matmul sums w's products in llama.cpp's order
// (matmulHalf): F16 and BF16 weights, and F32 weights with float32
// activations. (Tests give F32 matrices other activation roundings.)
func ggmlOrdered(w *matrix) bool {
	return w.typ == TypeF16 || w.typ == TypeBF16 || w.typ == TypeF32 && w.act == actF32
}
