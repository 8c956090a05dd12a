package gguf

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"
)

// matrix is a 2-D weight tensor: rows of cols elements, stored row-major in
// the file image (ggml's ne[0] = cols). F32 rows are used in place; other
// types are expanded one row at a time into a worker's scratch buffer.
type matrix struct {
	name       string
	typ        TensorType
	rows, cols int
	f32        []float32 // F32 only: a view of the mapped file
	raw        []byte
	rowBytes   int
	act        actKind // how matmul rounds the activations (actKindOf(typ))
}

func newMatrix(t *TensorInfo) *matrix {
	m := &matrix{name: t.Name, typ: t.Type, cols: int(t.Dims[0]), raw: t.Data, act: actKindOf(t.Type)}
	m.rows = int(t.Elements()) / m.cols
	bs, bb, _ := t.Type.layout()
	m.rowBytes = m.cols / bs * bb
	if t.Type == TypeF32 {
		m.f32 = bytesToF32(t.Data)
	}
	return m
}

// rowRange is the matrix of rows [r0, r1) of m, sharing its storage.
func (m *matrix) rowRange(r0, r1 int) *matrix {
	s := *m
	s.rows = r1 - r0
	s.raw = m.raw[r0*m.rowBytes : r1*m.rowBytes]
	if m.f32 != nil {
		s.f32 = m.f32[r0*m.cols : r1*m.cols]
	}
	return &s
}

// bytesToF32 views little-endian float32 bytes as a slice without copying
// when the address allows, and copies otherwise.
func bytesToF32(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// row returns row r as float32, using buf (len cols) when it must convert.
func (m *matrix) row(r int, buf []float32) []float32 {
	if m.f32 != nil {
		return m.f32[r*m.cols : (r+1)*m.cols]
	}
	src := m.raw[r*m.rowBytes : (r+1)*m.rowBytes]
	switch m.typ {
	case TypeF16:
		for i := range buf {
			buf[i] = f16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case TypeQ8_0:
		dequantQ8(src, buf[:m.cols])
	default:
		dequantRow(m.typ, src, buf[:m.cols])
	}
	return buf
}

// dequantQ8Go is the portable dequantQ8.
func dequantQ8Go(raw []byte, out []float32) {
	for b := 0; b < len(out)/32; b++ {
		blk := raw[b*34 : b*34+34]
		d := f16ToF32(binary.LittleEndian.Uint16(blk))
		o := out[b*32 : b*32+32]
		for i := range o {
			o[i] = d * float32(int8(blk[2+i]))
		}
	}
}

// dotQ8Go is the portable dot product of a Q8_0 row with x.
func dotQ8Go(raw []byte, x []float32) float32 {
	var s float32
	for b := 0; b < len(x)/32; b++ {
		blk := raw[b*34 : b*34+34]
		xs := x[b*32 : b*32+32]
		var bs float32
		for i, v := range xs {
			bs += float32(int8(blk[2+i])) * v
		}
		s += f16ToF32(binary.LittleEndian.Uint16(blk)) * bs
	}
	return s
}

var f16Table = func() *[65536]float32 {
	var t [65536]float32
	for i := range t {
		t[i] = f16ToF32Slow(uint16(i))
	}
	return &t
}()

func f16ToF32(h uint16) float32 { return f16Table[h] }

func f16ToF32Slow(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		return float32(math.Copysign(float64(mant)/1024/16384, float64(int32(sign)|1)))
	case exp == 31:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// roundF16 rounds x to the nearest float16 value (ties to even), kept as a
// float32.
func roundF16(x float32) float32 {
	b := math.Float32bits(x)
	if e := b >> 23 & 0xff; e >= 113 && e <= 141 { // f16 normal range, no overflow possible
		b += 0xfff + (b >> 13 & 1)
		return math.Float32frombits(b &^ 0x1fff)
	}
	return f16ToF32(f32ToF16(x))
}

// f32ToF16 rounds to nearest even.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case b&0x7fffffff > 0x7f800000: // NaN
		return sign | 0x7e00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		h := uint16(mant >> shift)
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | h
	}
	h := uint16(exp)<<10 | uint16(mant>>13)
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | h
}

// dotGo is the portable dot product.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot4Go is four dot products sharing one weight row, so the row is read
// once for four activations. One accumulator per token keeps the loop free of
// bounds checks, which matters more here than splitting the sums.
func dot4Go(w, x0, x1, x2, x3 []float32) (float32, float32, float32, float32) {
	n := len(w)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	var s0, s1, s2, s3 float32
	for i, a := range w {
		s0 += a * x0[i]
		s1 += a * x1[i]
		s2 += a * x2[i]
		s3 += a * x3[i]
	}
	return s0, s1, s2, s3
}

// dot2x4Go is the portable dot2x4.
func dot2x4Go(w0, w1, x0, x1, x2, x3 []float32, out *[8]float32) {
	out[0], out[1], out[2], out[3] = dot4Go(w0, x0, x1, x2, x3)
	out[4], out[5], out[6], out[7] = dot4Go(w1, x0, x1, x2, x3)
}

// matmul sets out[t*w.rows+r] = w.row(r) · x[t*w.cols:] for n tokens, with
// the activations first rounded as ggml rounds them for w's type (see
// roundActs), splitting the weight rows across threads. F32, F16 and BF16
// weights also sum in ggml's order (matmulHalf).
func (p *pool) matmul(out []float32, w *matrix, x []float32, n int) {
	if usesQKernel(w.typ) {
		p.matmulQ(out, w, x, n)
		return
	}
	if ggmlOrdered(w) {
		p.matmulHalf(out, w, x, n, false)
		return
	}
	k := w.act
	if k == actF32 {
		p.matmulF32(out, w, x, n)
		return
	}
	bp := getBuf(n * w.cols)
	defer scratch.Put(bp)
	xq := (*bp)[:n*w.cols]
	sums := roundActs(k, xq, x[:n*w.cols], w.cols)
	p.matmulF32(out, w, xq, n)
	if sums != nil && (w.typ == TypeQ4_1 || w.typ == TypeQ5_1) {
		p.minCorrection(out, w, xq, sums, n)
	}
}

// matmulF32 is matmul with the activations used as they are.
func (p *pool) matmulF32(out []float32, w *matrix, x []float32, n int) {
	cols, rows := w.cols, w.rows
	const rowBlock, tokBlock = 64, 8
	p.parallel(rows, func(lo, hi int) {
		// Quantised rows are expanded once per tile into a pooled buffer; a
		// single token (generation) expands one row at a time instead.
		var blockBuf, rowBuf []float32
		if w.f32 == nil {
			size := rowBlock * cols
			if n == 1 {
				size = cols
			}
			bp := getBuf(size)
			defer scratch.Put(bp)
			if n == 1 {
				rowBuf = (*bp)[:cols]
			} else {
				blockBuf = (*bp)[:size]
			}
		}
		// Tiles of rowBlock weight rows (kept in L2) by tokBlock tokens (kept
		// in L1) so neither the weights nor the activations stream from
		// memory once per row or once per token.
		for r0 := lo; r0 < hi; r0 += rowBlock {
			r1 := min(r0+rowBlock, hi)
			for r := r0; r < r1 && blockBuf != nil; r++ {
				w.row(r, blockBuf[(r-r0)*cols:(r-r0+1)*cols])
			}
			for t0 := 0; t0 < n; t0 += tokBlock {
				t1 := min(t0+tokBlock, n)
				r := r0
				// Pairs of rows against four tokens: the 2x4 kernel reads
				// six vectors for eight dot products.
				pairs := t1-t0 >= 4 && (w.f32 != nil || blockBuf != nil)
				for ; pairs && r+2 <= r1; r += 2 {
					w0, w1 := m2rows(w, blockBuf, r, r0, cols)
					t := t0
					var o [8]float32
					for ; t+4 <= t1; t += 4 {
						dot2x4(w0, w1, x[t*cols:], x[(t+1)*cols:], x[(t+2)*cols:], x[(t+3)*cols:], &o)
						for k := 0; k < 4; k++ {
							out[(t+k)*rows+r] = o[k]
							out[(t+k)*rows+r+1] = o[4+k]
						}
					}
					for ; t < t1; t++ {
						out[t*rows+r] = dot(w0, x[t*cols:(t+1)*cols])
						out[t*rows+r+1] = dot(w1, x[t*cols:(t+1)*cols])
					}
				}
				for ; r < r1; r++ {
					var row []float32
					switch {
					case blockBuf != nil:
						row = blockBuf[(r-r0)*cols : (r-r0+1)*cols]
					case rowBuf != nil && w.typ == TypeQ8_0:
						out[r] = dotQ8(w.raw[r*w.rowBytes:(r+1)*w.rowBytes], x[:cols])
						continue
					case rowBuf != nil:
						row = w.row(r, rowBuf)
					default:
						row = w.f32[r*cols : (r+1)*cols]
					}
					t := t0
					for ; t+4 <= t1; t += 4 {
						a, b, c, d := dot4(row, x[t*cols:], x[(t+1)*cols:], x[(t+2)*cols:], x[(t+3)*cols:])
						out[t*rows+r] = a
						out[(t+1)*rows+r] = b
						out[(t+2)*rows+r] = c
						out[(t+3)*rows+r] = d
					}
					for ; t < t1; t++ {
						out[t*rows+r] = dot(row, x[t*cols:(t+1)*cols])
					}
				}
			}
		}
	})
}

// m2rows returns weight rows r and r+1 as float32: from the expanded tile
// when the weights are quantised, else from the mapped file.
func m2rows(w *matrix, blockBuf []float32, r, r0, cols int) ([]float32, []float32) {
	if blockBuf != nil {
		return blockBuf[(r-r0)*cols : (r-r0+1)*cols], blockBuf[(r-r0+1)*cols : (r-r0+2)*cols]
	}
	return w.f32[r*cols : (r+1)*cols], w.f32[(r+1)*cols : (r+2)*cols]
}

var scratch sync.Pool

// getBuf returns a pooled float32 buffer of at least n elements.
func getBuf(n int) *[]float32 {
	if bp, ok := scratch.Get().(*[]float32); ok && cap(*bp) >= n {
		return bp
	}
	b := make([]float32, n)
	return &b
}

// rmsNorm writes x / rms(x) * w into out, rounding as ggml's rms_norm
// does: squares in float32 summed in float64, the mean, eps, square root
// and reciprocal in float32.
func rmsNorm(out, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v * v)
	}
	mean := float32(ss / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	for i, v := range x {
		out[i] = v * scale * w[i]
	}
}

// swiglu sets gate[i] = silu(gate[i])·up[i] for rows of n as ggml's
// ggml_vec_swiglu_f32 does: ggml_v_silu on each 16 elements, libm's expf
// (here float64's, rounded) on the rest of a row.
func swiglu(gate, up []float32, n int) {
	for r := 0; r < len(gate)/n; r++ {
		g, u := gate[r*n:(r+1)*n], up[r*n:(r+1)*n]
		m := n &^ 15
		swigluVec(g[:m], u[:m])
		for i := m; i < n; i++ {
			g[i] = g[i] / (1 + float32(math.Exp(float64(-g[i])))) * u[i]
		}
	}
}
