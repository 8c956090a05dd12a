package gguf

import (
	"encoding/binary"
	"math"
)

// Integer dot products for Q8_0, Q4_K and Q6_K weights, as ggml computes
// them: the activations are quantised once per matrix product to Q8_0
// blocks (Q8_0 weights) or Q8_K blocks (the K-quants) by exactly the
// arithmetic of roundQ8Block and roundQ8KBlock, each block's products are
// summed in integers, and only the block sums meet the float scales.
//
// The float part has one fixed order, which the SIMD kernels (qdot_amd64.s)
// and the portable loops below share, so every CPU gives the same bits and a
// token's result does not depend on the batch it is computed in:
//   - Q8_0: acc[b%4] += (dw·dx)·Σq over blocks b, then (acc0+acc1)+(acc2+acc3);
//   - Q4_K: sum += (dx·d)·Σ(sc·q·x) − (dx·dmin)·Σ(m·bsum) per super-block;
//   - Q6_K: sum += (dx·d)·Σ(sc·q·x) per super-block.
// Every product is rounded to float32 before it is added (no fused
// multiply-add), as the explicit float32 conversions below demand.

// qacts are n tokens of activations quantised for one weight type.
type qacts struct {
	kind    actKind
	n, cols int
	q       []int8    // [t*cols+i]
	d       []float32 // block scales, block-major: [b*n+t]
	bs      []int16   // Q8_K only: sums of each 16 q's, block-major: [(b*n+t)*16+g]
	x16     []byte    // Q8_0 only: q in sixteen-token groups for q8Tiles, once prepared
}

// usesQKernel reports whether matmul uses the integer kernels for typ.
func usesQKernel(typ TensorType) bool {
	return typ == TypeQ8_0 || typ == TypeQ4_K || typ == TypeQ6_K
}

// quantActs quantises n rows of x (cols each) for weights of kind k
// (actQ8_0 or actQ8_K).
func quantActs(k actKind, x []float32, n, cols int) *qacts {
	a := &qacts{kind: k, n: n, cols: cols, q: make([]int8, n*cols)}
	bsize := 32
	if k == actQ8_K {
		bsize = qk
		a.bs = make([]int16, n*cols/16)
	}
	nb := cols / bsize
	a.d = make([]float32, nb*n)
	for t := 0; t < n; t++ {
		if k != actQ8_K {
			quantQ8Row(a.q[t*cols:(t+1)*cols], a.d[t:], n, x[t*cols:(t+1)*cols])
			continue
		}
		for b := 0; b < nb; b++ {
			xs := x[t*cols+b*bsize : t*cols+(b+1)*bsize]
			qs := a.q[t*cols+b*bsize : t*cols+(b+1)*bsize]
			a.d[b*n+t] = quantQ8KSuper(qs, a.bs[(b*n+t)*16:(b*n+t+1)*16], xs)
		}
	}
	return a
}

// quantQ8RowGo is the portable quantQ8Row.
func quantQ8RowGo(q []int8, d []float32, dstride int, x []float32) {
	for b := 0; b < len(x)/32; b++ {
		d[b*dstride] = quantQ8Block(q[b*32:b*32+32], x[b*32:b*32+32])
	}
}

// quantQ8Block is roundQ8Block keeping the integers: q and the f16 scale.
func quantQ8Block(q []int8, x []float32) float32 {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	id := float32(0)
	if amax != 0 {
		id = 127 / amax
	}
	for i, v := range x {
		q[i] = int8(math.RoundToEven(float64(v * id)))
	}
	return roundF16(amax / 127)
}

// quantQ8KSuperGo is the portable quantQ8KSuper.
func quantQ8KSuperGo(q []int8, bs []int16, x []float32) float32 {
	d := quantQ8KBlock(q, x)
	for g := range 16 {
		var s int16
		for _, v := range q[g*16 : g*16+16] {
			s += int16(v)
		}
		bs[g] = s
	}
	return d
}

// quantQ8KBlock is roundQ8KBlock keeping the integers and d.
func quantQ8KBlock(q []int8, x []float32) float32 {
	var amax, mx float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, mx = a, v
		}
	}
	if amax == 0 {
		clear(q)
		return 0
	}
	iscale := -127 / mx
	for i, v := range x {
		q[i] = int8(min(127, math.RoundToEven(float64(iscale*v))))
	}
	return 1 / iscale
}

// q8BlocksGo adds blocks [b0, b1) of a Q8_0 weight row times one token's
// quantised activations q (the whole row) into acc[b%4]; d[b*dstride] is
// the token's scale of block b.
func q8BlocksGo(acc *[4]float32, w []byte, q []int8, d []float32, dstride, b0, b1 int) {
	for b := b0; b < b1; b++ {
		blk := w[b*34 : b*34+34]
		xs := q[b*32 : b*32+32]
		var s int32
		for i, v := range xs {
			s += int32(int8(blk[2+i])) * int32(v)
		}
		dw := f16ToF32(binary.LittleEndian.Uint16(blk))
		acc[b&3] += float32(float32(dw*d[b*dstride]) * float32(s))
	}
}

func sum4(acc *[4]float32) float32 { return (acc[0] + acc[1]) + (acc[2] + acc[3]) }

// q4KDotGo is a Q4_K weight row times one token's Q8_K activations (q the
// whole row, d[b*dstride] the scale of super-block b, bs[b*dstride*16:] its
// 16 16-sums).
func q4KDotGo(w []byte, q []int8, d []float32, dstride int, bs []int16) float32 {
	var sum float32
	for b := 0; b < len(q)/qk; b++ {
		blk := w[b*144 : b*144+144]
		scales, qs := blk[4:16], blk[16:144]
		x := q[b*qk : b*qk+qk]
		var isum, msum int32
		for j := 0; j < 4; j++ {
			sc1, m1 := scaleMinK4(2*j, scales)
			sc2, m2 := scaleMinK4(2*j+1, scales)
			var s1, s2 int32
			for l := 0; l < 32; l++ {
				s1 += int32(qs[32*j+l]&0xf) * int32(x[64*j+l])
				s2 += int32(qs[32*j+l]>>4) * int32(x[64*j+32+l])
			}
			isum += int32(sc1)*s1 + int32(sc2)*s2
			g := bs[b*dstride*16+4*j:]
			msum += int32(m1)*(int32(g[0])+int32(g[1])) + int32(m2)*(int32(g[2])+int32(g[3]))
		}
		dx := d[b*dstride]
		dd := float32(dx * f16At(blk, 0))
		dm := float32(dx * f16At(blk, 2))
		sum += float32(float32(dd*float32(isum)) - float32(dm*float32(msum)))
	}
	return sum
}

// q6KDotGo is a Q6_K weight row times one token's Q8_K activations.
func q6KDotGo(w []byte, q []int8, d []float32, dstride int) float32 {
	var sum float32
	for b := 0; b < len(q)/qk; b++ {
		blk := w[b*210 : b*210+210]
		ql, qh, sc := blk[:128], blk[128:192], blk[192:208]
		x := q[b*qk : b*qk+qk]
		var gs [16]int32
		for n := 0; n < qk; n += 128 {
			l0, h0 := ql[n/2:], qh[n/4:]
			for l := 0; l < 32; l++ {
				q1 := int32(l0[l]&0xf|(h0[l]>>0&3)<<4) - 32
				q2 := int32(l0[l+32]&0xf|(h0[l]>>2&3)<<4) - 32
				q3 := int32(l0[l]>>4|(h0[l]>>4&3)<<4) - 32
				q4 := int32(l0[l+32]>>4|(h0[l]>>6&3)<<4) - 32
				gs[(n+l)/16] += q1 * int32(x[n+l])
				gs[(n+l+32)/16] += q2 * int32(x[n+l+32])
				gs[(n+l+64)/16] += q3 * int32(x[n+l+64])
				gs[(n+l+96)/16] += q4 * int32(x[n+l+96])
			}
		}
		var isum int32
		for g, s := range gs {
			isum += int32(int8(sc[g])) * s
		}
		dd := float32(d[b*dstride] * f16At(blk, 208))
		sum += float32(dd * float32(isum))
	}
	return sum
}

// matmuls is matmul of several weights by the same activations, which are
// quantised once for all the weights whose kernels take the same kind.
func (p *pool) matmuls(x []float32, n int, ws []*matrix, outs [][]float32) {
	var a *qacts
	for i, w := range ws {
		if !usesQKernel(w.typ) {
			p.matmul(outs[i], w, x, n)
			continue
		}
		if a == nil || a.kind != w.act || a.cols != w.cols {
			a = quantActs(w.act, x[:n*w.cols], n, w.cols)
		}
		p.matmulQActs(outs[i], w, a)
	}
}

// matmulQ is matmul for the types usesQKernel accepts.
func (p *pool) matmulQ(out []float32, w *matrix, x []float32, n int) {
	p.matmulQActs(out, w, quantActs(w.act, x[:n*w.cols], n, w.cols))
}

// matmulQActs is matmulQ with the activations already quantised.
func (p *pool) matmulQActs(out []float32, w *matrix, a *qacts) {
	rows, n := w.rows, a.n
	const rowBlock = 32
	tiles := w.typ == TypeQ8_0 && q8TilesPrepare(a)
	p.parallel(rows, func(lo, hi int) {
		// Tiles of rowBlock weight rows (kept in cache) against all tokens,
		// four at a time where the type has a four-token kernel.
		for r0 := lo; r0 < hi; r0 += rowBlock {
			r1 := min(r0+rowBlock, hi)
			t := 0
			if tiles {
				t = q8Tiles(out, w, r0, r1, a)
			}
			if dot4 := qDot4Of(w.typ); dot4 != nil {
				var o [4]float32
				var o8 [8]float32
				for ; t+4 <= n; t += 4 {
					r := r0
					// Q8_0 rows in pairs: the activations are loaded once for both.
					for ; w.typ == TypeQ8_0 && r+2 <= r1; r += 2 {
						q8Dot2x4(&o8, w.raw[r*w.rowBytes:(r+1)*w.rowBytes], w.raw[(r+1)*w.rowBytes:(r+2)*w.rowBytes], a, t)
						for k := 0; k < 4; k++ {
							out[(t+k)*rows+r], out[(t+k)*rows+r+1] = o8[k], o8[4+k]
						}
					}
					r = qKRows2x4(out, w, a, r, r1, t)
					for ; r < r1; r++ {
						dot4(&o, w.raw[r*w.rowBytes:(r+1)*w.rowBytes], a, t)
						out[t*rows+r], out[(t+1)*rows+r] = o[0], o[1]
						out[(t+2)*rows+r], out[(t+3)*rows+r] = o[2], o[3]
					}
				}
			}
			for ; t < n; t++ {
				qDot1Rows(out[t*rows+r0:t*rows+r1], w, r0, a, t)
			}
		}
	})
}

// qDot4Of is the four-token kernel of typ, or nil.
func qDot4Of(typ TensorType) func(o *[4]float32, w []byte, a *qacts, t int) {
	switch typ {
	case TypeQ8_0:
		return q8Dot4
	case TypeQ4_K:
		return q4KDot4
	case TypeQ6_K:
		return q6KDot4
	}
	return nil
}

// qDot1Rows sets out[i] = row r0+i of w times token t of a, with the
// type's kernel chosen once for the rows.
func qDot1Rows(out []float32, w *matrix, r0 int, a *qacts, t int) {
	q := a.q[t*a.cols : (t+1)*a.cols]
	d := a.d[t:]
	rb := w.rowBytes
	raw := w.raw[r0*rb : (r0+len(out))*rb]
	switch w.typ {
	case TypeQ8_0:
		for i := range out {
			out[i] = q8Dot1(raw[i*rb:(i+1)*rb], q, d, a.n)
		}
	case TypeQ4_K:
		bs := a.bs[t*16:]
		for i := qKRows(TypeQ4_K, out, raw, rb, q, d, a.n, bs); i < len(out); i++ {
			out[i] = q4KDot(raw[i*rb:(i+1)*rb], q, d, a.n, bs)
		}
	default:
		bs := a.bs[t*16:]
		for i := qKRows(TypeQ6_K, out, raw, rb, q, d, a.n, bs); i < len(out); i++ {
			out[i] = q6KDot(raw[i*rb:(i+1)*rb], q, d, a.n, bs)
		}
	}
}

// qDot1 is row r of w times token t of a.
func qDot1(w *matrix, r int, a *qacts, t int) float32 {
	var o [1]float32
	qDot1Rows(o[:], w, r, a, t)
	return o[0]
}

// f16AccGo is the portable f16Acc: one rounding to float32 as ggml's fused
// multiply-add, then to f16.
func f16AccGo(acc, v []float32, s float32) {
	v = v[:len(acc)]
	for d := range acc {
		acc[d] = roundF16(float32(float64(acc[d]) + float64(v[d])*float64(s)))
	}
}

// f16ScaleGo is the portable f16Scale.
func f16ScaleGo(acc []float32, s float32) {
	for d := range acc {
		acc[d] = roundF16(acc[d] * s)
	}
}
