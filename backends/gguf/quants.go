package gguf

import (
	"encoding/binary"
	"math"
)

// Dequantisation of ggml's block formats, element for element as ggml's
// dequantize_row_* (ggml-quants.c) computes them in float32. The K-quants
// pack 256 values per super-block with 6- or 4-bit sub-block scales.

const qk = 256 // QK_K

func f16At(b []byte, i int) float32 { return f16ToF32(binary.LittleEndian.Uint16(b[i:])) }

// dequantRow expands one row of typ blocks from raw into out.
func dequantRow(typ TensorType, raw []byte, out []float32) {
	switch typ {
	case TypeF32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case TypeF16:
		for i := range out {
			out[i] = f16At(raw, 2*i)
		}
	case TypeBF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	case TypeQ8_0:
		dequantQ8Go(raw, out)
	case TypeQ4_0:
		eachBlock(raw, out, 18, 32, dequantQ4_0)
	case TypeQ4_1:
		eachBlock(raw, out, 20, 32, dequantQ4_1)
	case TypeQ5_0:
		eachBlock(raw, out, 22, 32, dequantQ5_0)
	case TypeQ5_1:
		eachBlock(raw, out, 24, 32, dequantQ5_1)
	case TypeQ2_K:
		eachBlock(raw, out, 84, qk, dequantQ2_K)
	case TypeQ3_K:
		eachBlock(raw, out, 110, qk, dequantQ3_K)
	case TypeQ4_K:
		eachBlock(raw, out, 144, qk, dequantQ4_K)
	case TypeQ5_K:
		eachBlock(raw, out, 176, qk, dequantQ5_K)
	case TypeQ6_K:
		eachBlock(raw, out, 210, qk, dequantQ6_K)
	default:
		panic("dequantRow: unsupported type " + typ.String())
	}
}

func eachBlock(raw []byte, out []float32, nbytes, n int, f func(blk []byte, y []float32)) {
	for b := 0; b < len(out)/n; b++ {
		f(raw[b*nbytes:(b+1)*nbytes], out[b*n:(b+1)*n])
	}
}

// block_q4_0: d (f16), 16 bytes of nibbles; low nibbles are values 0..15,
// high nibbles 16..31.
func dequantQ4_0(blk []byte, y []float32) {
	d := f16At(blk, 0)
	for j := 0; j < 16; j++ {
		q := blk[2+j]
		y[j] = float32(int(q&0x0f)-8) * d
		y[j+16] = float32(int(q>>4)-8) * d
	}
}

// block_q4_1: d, m (f16), nibbles; y = q*d + m.
func dequantQ4_1(blk []byte, y []float32) {
	d, m := f16At(blk, 0), f16At(blk, 2)
	for j := 0; j < 16; j++ {
		q := blk[4+j]
		y[j] = float32(q&0x0f)*d + m
		y[j+16] = float32(q>>4)*d + m
	}
}

// block_q5_0: d (f16), qh (32 high bits), nibbles; y = (q-16)*d.
func dequantQ5_0(blk []byte, y []float32) {
	d := f16At(blk, 0)
	qh := binary.LittleEndian.Uint32(blk[2:])
	for j := 0; j < 16; j++ {
		q := blk[6+j]
		h0 := byte(qh>>j) << 4 & 0x10
		h1 := byte(qh>>(j+12)) & 0x10
		y[j] = float32(int(q&0x0f|h0)-16) * d
		y[j+16] = float32(int(q>>4|h1)-16) * d
	}
}

// block_q5_1: d, m (f16), qh, nibbles; y = q*d + m.
func dequantQ5_1(blk []byte, y []float32) {
	d, m := f16At(blk, 0), f16At(blk, 2)
	qh := binary.LittleEndian.Uint32(blk[4:])
	for j := 0; j < 16; j++ {
		q := blk[8+j]
		h0 := byte(qh>>j) << 4 & 0x10
		h1 := byte(qh>>(j+12)) & 0x10
		y[j] = float32(q&0x0f|h0)*d + m
		y[j+16] = float32(q>>4|h1)*d + m
	}
}

// block_q2_K: scales[16] (low nibble scale, high nibble min), qs[64]
// (2-bit values), d, dmin (f16).
func dequantQ2_K(blk []byte, y []float32) {
	scales, qs := blk[:16], blk[16:80]
	d, dmin := f16At(blk, 80), f16At(blk, 82)
	is := 0
	for n := 0; n < qk; n += 128 {
		q := qs[n/4 : n/4+32]
		for shift := uint(0); shift < 8; shift += 2 {
			for half := 0; half < 2; half++ {
				sc := scales[is]
				is++
				dl, ml := d*float32(sc&0xf), dmin*float32(sc>>4)
				for l := 0; l < 16; l++ {
					y[0] = dl*float32(q[half*16+l]>>shift&3) - ml
					y = y[1:]
				}
			}
		}
	}
}

// block_q3_K: hmask[32], qs[64], scales[12] (16 6-bit scales), d (f16).
func dequantQ3_K(blk []byte, y []float32) {
	hmask, qs, sc := blk[:32], blk[32:96], blk[96:108]
	d := f16At(blk, 108)
	var aux [4]uint32
	for i := range 3 {
		aux[i] = binary.LittleEndian.Uint32(sc[4*i:])
	}
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	tmp := aux[2]
	aux[2] = (aux[0]>>4)&kmask2 | ((tmp>>4)&kmask1)<<4
	aux[3] = (aux[1]>>4)&kmask2 | ((tmp>>6)&kmask1)<<4
	aux[0] = aux[0]&kmask2 | ((tmp>>0)&kmask1)<<4
	aux[1] = aux[1]&kmask2 | ((tmp>>2)&kmask1)<<4
	var scales [16]int8
	for i := range scales {
		scales[i] = int8(aux[i/4] >> (8 * (i % 4)))
	}
	is := 0
	m := byte(1)
	for n := 0; n < qk; n += 128 {
		q := qs[n/4 : n/4+32]
		for shift := uint(0); shift < 8; shift += 2 {
			for half := 0; half < 2; half++ {
				dl := d * float32(int(scales[is])-32)
				is++
				for l := half * 16; l < half*16+16; l++ {
					v := int8(q[l] >> shift & 3)
					if hmask[l]&m == 0 {
						v -= 4
					}
					y[0] = dl * float32(v)
					y = y[1:]
				}
			}
			m <<= 1
		}
	}
}

// scaleMinK4 unpacks sub-block j's 6-bit scale and min of Q4_K and Q5_K.
func scaleMinK4(j int, q []byte) (byte, byte) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// block_q4_K: d, dmin (f16), scales[12], qs[128].
func dequantQ4_K(blk []byte, y []float32) {
	d, dmin := f16At(blk, 0), f16At(blk, 2)
	scales, qs := blk[4:16], blk[16:144]
	is := 0
	for j := 0; j < qk; j += 64 {
		q := qs[j/2 : j/2+32]
		sc, m := scaleMinK4(is, scales)
		d1, m1 := d*float32(sc), dmin*float32(m)
		sc, m = scaleMinK4(is+1, scales)
		d2, m2 := d*float32(sc), dmin*float32(m)
		for l := 0; l < 32; l++ {
			y[j+l] = d1*float32(q[l]&0xf) - m1
		}
		for l := 0; l < 32; l++ {
			y[j+32+l] = d2*float32(q[l]>>4) - m2
		}
		is += 2
	}
}

// block_q5_K: d, dmin (f16), scales[12], qh[32], qs[128].
func dequantQ5_K(blk []byte, y []float32) {
	d, dmin := f16At(blk, 0), f16At(blk, 2)
	scales, qh, qs := blk[4:16], blk[16:48], blk[48:176]
	is := 0
	u1, u2 := byte(1), byte(2)
	for j := 0; j < qk; j += 64 {
		ql := qs[j/2 : j/2+32]
		sc, m := scaleMinK4(is, scales)
		d1, m1 := d*float32(sc), dmin*float32(m)
		sc, m = scaleMinK4(is+1, scales)
		d2, m2 := d*float32(sc), dmin*float32(m)
		for l := 0; l < 32; l++ {
			h := byte(0)
			if qh[l]&u1 != 0 {
				h = 16
			}
			y[j+l] = d1*float32(ql[l]&0xf+h) - m1
		}
		for l := 0; l < 32; l++ {
			h := byte(0)
			if qh[l]&u2 != 0 {
				h = 16
			}
			y[j+32+l] = d2*float32(ql[l]>>4+h) - m2
		}
		is += 2
		u1 <<= 2
		u2 <<= 2
	}
}

// block_q6_K: ql[128], qh[64], scales[16] (int8), d (f16).
func dequantQ6_K(blk []byte, y []float32) {
	ql, qh, sc := blk[:128], blk[128:192], blk[192:208]
	d := f16At(blk, 208)
	for n := 0; n < qk; n += 128 {
		l0, h0, s0 := ql[n/2:], qh[n/4:], sc[n/16:]
		for l := 0; l < 32; l++ {
			is := l / 16
			q1 := int8(l0[l]&0xf|(h0[l]>>0&3)<<4) - 32
			q2 := int8(l0[l+32]&0xf|(h0[l]>>2&3)<<4) - 32
			q3 := int8(l0[l]>>4|(h0[l]>>4&3)<<4) - 32
			q4 := int8(l0[l+32]>>4|(h0[l]>>6&3)<<4) - 32
			y[n+l] = d * float32(int8(s0[is])) * float32(q1)
			y[n+l+32] = d * float32(int8(s0[is+2])) * float32(q2)
			y[n+l+64] = d * float32(int8(s0[is+4])) * float32(q3)
			y[n+l+96] = d * float32(int8(s0[is+6])) * float32(q4)
		}
	}
}
