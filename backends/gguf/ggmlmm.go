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

// mmF16 computes rows [lo, hi) of an F16 matmul: each tile of rows is
// expanded to float32 (exactly) once and met by every token.
func mmF16(out []float32, w *matrix, x []float32, n, lo, hi int, tiny bool) {
	cols, rows := w.cols, w.rows
	bp := getBuf(halfRowBlock * cols)
	defer scratch.Put(bp)
	buf := (*bp)[:halfRowBlock*cols]
	var o [4]float32
	for r0 := lo; r0 < hi; r0 += halfRowBlock {
		r1 := min(r0+halfRowBlock, hi)
		for r := r0; r < r1; r++ {
			f16ToF32Row(bytesToU16(w.raw[r*w.rowBytes:(r+1)*w.rowBytes]), buf[(r-r0)*cols:(r-r0+1)*cols])
		}
		for t0 := 0; t0 < n; t0 += halfTokBlock {
			t1 := min(t0+halfTokBlock, n)
			for r := r0; r < r1; r++ {
				row := buf[(r-r0)*cols : (r-r0+1)*cols]
				t := t0
				if !tiny {
					for ; t < t1; t++ {
						out[t*rows+r] = ggmlDotF16(row, x[t*cols:(t+1)*cols])
					}
					continue
				}
				for ; t+4 <= t1; t += 4 {
					dotL16x4(row, x[t*cols:], x[(t+1)*cols:], x[(t+2)*cols:], x[(t+3)*cols:], &o)
					for k := range o {
						out[(t+k)*rows+r] = o[k]
					}
				}
				for ; t < t1; t++ {
					out[t*rows+r] = dotL16(row, x[t*cols:(t+1)*cols])
				}
			}
		}
	}
}

// mmF32 computes rows [lo, hi) of an F32 matmul.
func mmF32(out []float32, w *matrix, x []float32, n, lo, hi int, tiny bool) {
	cols, rows := w.cols, w.rows
	var o [4]float32
	for r0 := lo; r0 < hi; r0 += halfRowBlock {
		r1 := min(r0+halfRowBlock, hi)
		for t0 := 0; t0 < n; t0 += halfTokBlock {
			t1 := min(t0+halfTokBlock, n)
			for r := r0; r < r1; r++ {
				row := w.f32[r*cols : (r+1)*cols]
				t := t0
				if !tiny {
					for ; t < t1; t++ {
						out[t*rows+r] = ggmlDotF32(row, x[t*cols:(t+1)*cols])
					}
					continue
				}
				for ; t+4 <= t1; t += 4 {
					dotL16x4(row, x[t*cols:], x[(t+1)*cols:], x[(t+2)*cols:], x[(t+3)*cols:], &o)
					for k := range o {
						out[(t+k)*rows+r] = o[k]
					}
				}
				for ; t < t1; t++ {
					out[t*rows+r] = dotL16(row, x[t*cols:(t+1)*cols])
				}
			}
		}
	}
}

// mmBF16 computes rows [lo, hi) of a BF16 matmul on the raw weights and
// the activations rounded to BF16.
func mmBF16(out []float32, w *matrix, x []uint16, n, lo, hi int, tiny bool) {
	cols, rows := w.cols, w.rows
	var o [4]float32
	for r0 := lo; r0 < hi; r0 += halfRowBlock {
		r1 := min(r0+halfRowBlock, hi)
		for t0 := 0; t0 < n; t0 += halfTokBlock {
			t1 := min(t0+halfTokBlock, n)
			for r := r0; r < r1; r++ {
				row := bytesToU16(w.raw[r*w.rowBytes : (r+1)*w.rowBytes])
				t := t0
				if !tiny {
					for ; t < t1; t++ {
						out[t*rows+r] = ggmlDotBF16(row, x[t*cols:(t+1)*cols])
					}
					continue
				}
				for ; t+4 <= t1; t += 4 {
					bf16L16x4(row, x[t*cols:], x[(t+1)*cols:], x[(t+2)*cols:], x[(t+3)*cols:], &o)
					for k := range o {
						out[(t+k)*rows+r] = o[k]
					}
				}
				for ; t < t1; t++ {
					out[t*rows+r] = bf16L16(row, x[t*cols:(t+1)*cols])
				}
			}
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
