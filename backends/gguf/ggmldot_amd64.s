//go:build amd64 && !purego

#include "textflag.h"
#include "regs_amd64.h"

// The kernels of ggmldot.go in AVX2 with FMA and F16C. A "16-lane"
// accumulator is two YMM registers (lanes 0-7 and 8-15), so the lanes
// and the order in which each lane adds its products are those of the
// AVX-512 code llama.cpp compiles; see ggmldot.go for the orders.

// FOLD16 reduces the 16 lanes lo:hi to lane 0 of xlo as gcc's
// _mm512_reduce_add_ps does: halves added (i with i+8, then i with i+4),
// then lanes 0+2 and 1+3, then those two.
#define FOLD16(lo, hi, xlo, xt) \
	VADDPS hi, lo, lo; \
	VEXTRACTF128 $1, lo, xt; \
	VADDPS xt, xlo, xlo; \
	VMOVHLPS xlo, xlo, xt; \
	VADDPS xt, xlo, xlo; \
	VMOVSHDUP xlo, xt; \
	VADDSS xt, xlo, xlo

// STORE4 writes the reductions of the 16-lane accumulators Y0:Y1, Y2:Y3,
// Y4:Y5 and Y6:Y7 to out[0..3] (DI).
#define STORE4 \
	FOLD16(Y0, Y1, X0, X8); \
	FOLD16(Y2, Y3, X2, X8); \
	FOLD16(Y4, Y5, X4, X8); \
	FOLD16(Y6, Y7, X6, X8); \
	VMOVSS X0, (DI); \
	VMOVSS X2, 4(DI); \
	VMOVSS X4, 8(DI); \
	VMOVSS X6, 12(DI)

// func dotL16x4AVX2(w, x0, x1, x2, x3 *float32, n int, out *[4]float32)
// n must be a positive multiple of 16.
TEXT ·dotL16x4AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DI
	ZEROY8
	XORQ AX, AX

l16x4:
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS 32(SI)(AX*1), Y9
	VFMADD231PS (R8)(AX*1), Y8, Y0
	VFMADD231PS 32(R8)(AX*1), Y9, Y1
	VFMADD231PS (R9)(AX*1), Y8, Y2
	VFMADD231PS 32(R9)(AX*1), Y9, Y3
	VFMADD231PS (R10)(AX*1), Y8, Y4
	VFMADD231PS 32(R10)(AX*1), Y9, Y5
	VFMADD231PS (R11)(AX*1), Y8, Y6
	VFMADD231PS 32(R11)(AX*1), Y9, Y7
	ADDQ $64, AX
	SUBQ $16, CX
	JNZ  l16x4

	STORE4
	VZEROUPPER
	RET

// func dotL16AVX2(w, x *float32, n int) float32
// n must be a positive multiple of 16.
TEXT ·dotL16AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), R8
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ AX, AX

l16:
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS 32(SI)(AX*1), Y9
	VFMADD231PS (R8)(AX*1), Y8, Y0
	VFMADD231PS 32(R8)(AX*1), Y9, Y1
	ADDQ $64, AX
	SUBQ $16, CX
	JNZ  l16

	FOLD16(Y0, Y1, X0, X8)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotL64AVX2(w, x *float32, n int) float32
// n must be a positive multiple of 64.
TEXT ·dotL64AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), R8
	MOVQ n+16(FP), CX
	ZEROY8
	XORQ AX, AX

l64:
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS 32(SI)(AX*1), Y9
	VMOVUPS 64(SI)(AX*1), Y10
	VMOVUPS 96(SI)(AX*1), Y11
	VFMADD231PS (R8)(AX*1), Y8, Y0
	VFMADD231PS 32(R8)(AX*1), Y9, Y1
	VFMADD231PS 64(R8)(AX*1), Y10, Y2
	VFMADD231PS 96(R8)(AX*1), Y11, Y3
	VMOVUPS 128(SI)(AX*1), Y8
	VMOVUPS 160(SI)(AX*1), Y9
	VMOVUPS 192(SI)(AX*1), Y10
	VMOVUPS 224(SI)(AX*1), Y11
	VFMADD231PS 128(R8)(AX*1), Y8, Y4
	VFMADD231PS 160(R8)(AX*1), Y9, Y5
	VFMADD231PS 192(R8)(AX*1), Y10, Y6
	VFMADD231PS 224(R8)(AX*1), Y11, Y7
	ADDQ $256, AX
	SUBQ $64, CX
	JNZ  l64

	// sum0 += sum2, sum1 += sum3, sum0 += sum1 (GGML_F32Cx16_REDUCE)
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	FOLD16(Y0, Y1, X0, X8)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func f16ToF32AVX2(src *uint16, dst *float32, n int)
// n must be a positive multiple of 8.
TEXT ·f16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX

cvt8:
	VCVTPH2PS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  cvt8
	VZEROUPPER
	RET

// BF16MASK sets every lane of Y15 to 0xffff0000, the high (odd) bf16 of a pair.
#define BF16MASK \
	VPCMPEQD Y15, Y15, Y15; \
	VPSLLD $16, Y15, Y15

// BF16PAIR adds one YMM of 8 bf16 pairs of w (wo odd, we even halves, as
// float32) times the pairs at mem to acc as VDPBF16PS does: the odd
// element's product first, then the even one's. Y15 holds 0xffff0000.
#define BF16PAIR(mem, wo, we, acc) \
	VMOVDQU mem, Y12; \
	VPAND Y15, Y12, Y13; \
	VFMADD231PS Y13, wo, acc; \
	VPSLLD $16, Y12, Y12; \
	VFMADD231PS Y12, we, acc

// BF16SPLIT splits 8 bf16 pairs at mem into odd (wo) and even (we) float32.
#define BF16SPLIT(mem, wo, we) \
	VMOVDQU mem, we; \
	VPAND Y15, we, wo; \
	VPSLLD $16, we, we

// func bf16L16x4AVX2(w, x0, x1, x2, x3 *uint16, n int, out *[4]float32)
// n must be a positive multiple of 32.
TEXT ·bf16L16x4AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DI
	BF16MASK
	ZEROY8
	XORQ AX, AX

b16x4:
	BF16SPLIT((SI)(AX*1), Y10, Y8)
	BF16SPLIT(32(SI)(AX*1), Y11, Y9)
	BF16PAIR((R8)(AX*1), Y10, Y8, Y0)
	BF16PAIR(32(R8)(AX*1), Y11, Y9, Y1)
	BF16PAIR((R9)(AX*1), Y10, Y8, Y2)
	BF16PAIR(32(R9)(AX*1), Y11, Y9, Y3)
	BF16PAIR((R10)(AX*1), Y10, Y8, Y4)
	BF16PAIR(32(R10)(AX*1), Y11, Y9, Y5)
	BF16PAIR((R11)(AX*1), Y10, Y8, Y6)
	BF16PAIR(32(R11)(AX*1), Y11, Y9, Y7)
	ADDQ $64, AX
	SUBQ $32, CX
	JNZ  b16x4

	STORE4
	VZEROUPPER
	RET

// func bf16L16AVX2(w, x *uint16, n int) float32
// n must be a positive multiple of 32.
TEXT ·bf16L16AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), R8
	MOVQ n+16(FP), CX
	BF16MASK
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ AX, AX

b16:
	BF16SPLIT((SI)(AX*1), Y10, Y8)
	BF16SPLIT(32(SI)(AX*1), Y11, Y9)
	BF16PAIR((R8)(AX*1), Y10, Y8, Y0)
	BF16PAIR(32(R8)(AX*1), Y11, Y9, Y1)
	ADDQ $64, AX
	SUBQ $32, CX
	JNZ  b16

	FOLD16(Y0, Y1, X0, X8)
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func bf16VecAVX2(w, x *uint16, n int, out *[2]float32)
// n must be a positive multiple of 64.
TEXT ·bf16VecAVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), R8
	MOVQ n+16(FP), CX
	MOVQ out+24(FP), DI
	BF16MASK
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ AX, AX

b64:
	BF16SPLIT((SI)(AX*1), Y10, Y8)
	BF16SPLIT(32(SI)(AX*1), Y11, Y9)
	BF16PAIR((R8)(AX*1), Y10, Y8, Y0)
	BF16PAIR(32(R8)(AX*1), Y11, Y9, Y1)
	BF16SPLIT(64(SI)(AX*1), Y10, Y8)
	BF16SPLIT(96(SI)(AX*1), Y11, Y9)
	BF16PAIR(64(R8)(AX*1), Y10, Y8, Y2)
	BF16PAIR(96(R8)(AX*1), Y11, Y9, Y3)
	ADDQ $128, AX
	SUBQ $64, CX
	JNZ  b64

	FOLD16(Y0, Y1, X0, X8)
	FOLD16(Y2, Y3, X2, X8)
	VMOVSS X0, (DI)
	VMOVSS X2, 4(DI)
	VZEROUPPER
	RET

// FOLD16Z reduces the 16 lanes of zmm z (ymm y, xmm x) to lane 0 of x in
// fold16's order, with yt/xt as scratch.
#define FOLD16Z(z, y, x, yt, xt) \
	VEXTRACTF64X4 $1, z, yt; \
	VADDPS yt, y, y; \
	VEXTRACTF128 $1, y, xt; \
	VADDPS xt, x, x; \
	VMOVHLPS x, x, xt; \
	VADDPS xt, x, x; \
	VMOVSHDUP x, xt; \
	VADDSS xt, x, x

// STORE8 writes the reductions of Z0-Z7 to out[0..7] (DI).
#define STORE8 \
	FOLD16Z(Z0, Y0, X0, Y14, X14); \
	FOLD16Z(Z1, Y1, X1, Y14, X14); \
	FOLD16Z(Z2, Y2, X2, Y14, X14); \
	FOLD16Z(Z3, Y3, X3, Y14, X14); \
	FOLD16Z(Z4, Y4, X4, Y14, X14); \
	FOLD16Z(Z5, Y5, X5, Y14, X14); \
	FOLD16Z(Z6, Y6, X6, Y14, X14); \
	FOLD16Z(Z7, Y7, X7, Y14, X14); \
	VMOVSS X0, (DI); \
	VMOVSS X1, 4(DI); \
	VMOVSS X2, 8(DI); \
	VMOVSS X3, 12(DI); \
	VMOVSS X4, 16(DI); \
	VMOVSS X5, 20(DI); \
	VMOVSS X6, 24(DI); \
	VMOVSS X7, 28(DI)

// ZEROZ8 zeroes the accumulators Z0-Z7.
#define ZEROZ8 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7

// func dotL16x2x4AVX512(w0, w1, x0, x1, x2, x3 *float32, n int, out *[8]float32)
// out[4*r+t] = 16-lane dot of w_r with x_t; n must be a positive multiple of 16.
TEXT ·dotL16x2x4AVX512(SB), NOSPLIT, $0-64
	MOVQ w0+0(FP), SI
	MOVQ w1+8(FP), DX
	MOVQ x0+16(FP), R8
	MOVQ x1+24(FP), R9
	MOVQ x2+32(FP), R10
	MOVQ x3+40(FP), R11
	MOVQ n+48(FP), CX
	MOVQ out+56(FP), DI
	ZEROZ8
	XORQ AX, AX

z16:
	VMOVUPS (SI)(AX*1), Z8
	VMOVUPS (DX)(AX*1), Z9
	VMOVUPS (R8)(AX*1), Z10
	VMOVUPS (R9)(AX*1), Z11
	VMOVUPS (R10)(AX*1), Z12
	VMOVUPS (R11)(AX*1), Z13
	VFMADD231PS Z10, Z8, Z0
	VFMADD231PS Z11, Z8, Z1
	VFMADD231PS Z12, Z8, Z2
	VFMADD231PS Z13, Z8, Z3
	VFMADD231PS Z10, Z9, Z4
	VFMADD231PS Z11, Z9, Z5
	VFMADD231PS Z12, Z9, Z6
	VFMADD231PS Z13, Z9, Z7
	ADDQ $64, AX
	SUBQ $16, CX
	JNZ  z16

	STORE8
	VZEROUPPER
	RET

// BF16Z adds the pairs of x (zmm xr, split into xo/xe) times the split rows
// (w0 odd/even, w1 odd/even) to acc0 and acc1, odd products first.
#define BF16Z(mem, w0o, w0e, w1o, w1e, acc0, acc1) \
	VMOVDQU32 mem, Z12; \
	VPANDD Z15, Z12, Z13; \
	VPSLLD $16, Z12, Z12; \
	VFMADD231PS Z13, w0o, acc0; \
	VFMADD231PS Z13, w1o, acc1; \
	VFMADD231PS Z12, w0e, acc0; \
	VFMADD231PS Z12, w1e, acc1

// func bf16L16x2x4AVX512(w0, w1, x0, x1, x2, x3 *uint16, n int, out *[8]float32)
// n must be a positive multiple of 32.
TEXT ·bf16L16x2x4AVX512(SB), NOSPLIT, $0-64
	MOVQ w0+0(FP), SI
	MOVQ w1+8(FP), DX
	MOVQ x0+16(FP), R8
	MOVQ x1+24(FP), R9
	MOVQ x2+32(FP), R10
	MOVQ x3+40(FP), R11
	MOVQ n+48(FP), CX
	MOVQ out+56(FP), DI
	VPTERNLOGD $0xff, Z15, Z15, Z15
	VPSLLD $16, Z15, Z15
	ZEROZ8
	XORQ AX, AX

zb32:
	VMOVDQU32 (SI)(AX*1), Z8
	VPANDD Z15, Z8, Z10
	VPSLLD $16, Z8, Z8
	VMOVDQU32 (DX)(AX*1), Z9
	VPANDD Z15, Z9, Z11
	VPSLLD $16, Z9, Z9
	BF16Z((R8)(AX*1), Z10, Z8, Z11, Z9, Z0, Z4)
	BF16Z((R9)(AX*1), Z10, Z8, Z11, Z9, Z1, Z5)
	BF16Z((R10)(AX*1), Z10, Z8, Z11, Z9, Z2, Z6)
	BF16Z((R11)(AX*1), Z10, Z8, Z11, Z9, Z3, Z7)
	ADDQ $64, AX
	SUBQ $32, CX
	JNZ  zb32

	STORE8
	VZEROUPPER
	RET
