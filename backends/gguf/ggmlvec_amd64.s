//go:build amd64 && !purego

#include "textflag.h"

// AVX2 with FMA (and F16C) versions of ggmlvec.go's kernels. Each lane
// runs the portable loop's operations on one element, in the same order, so
// the bits are the same (TestGGMLVecKernelsMatchPortable,
// TestF16StepsMatchPortable). AVX-512 CPUs run them too: after them the
// attention and SiLU are about 4% of a prompt's time, so 16-lane versions
// would gain little.

// One 32-byte row of eight equal float32 (or int32) values per constant;
// LANES is 0..7. The EXP_ values are ggml_v_expf's.
#define EXP_R vecConst<>+0(SB)
#define EXP_LOG2E vecConst<>+32(SB)
#define EXP_LN2HI vecConst<>+64(SB)
#define EXP_LN2LO vecConst<>+96(SB)
#define EXP_C5 vecConst<>+128(SB)
#define EXP_C4 vecConst<>+160(SB)
#define EXP_C3 vecConst<>+192(SB)
#define EXP_C2 vecConst<>+224(SB)
#define EXP_C1 vecConst<>+256(SB)
#define ONE vecConst<>+288(SB)
#define EXP_192 vecConst<>+320(SB)
#define ABSMASK vecConst<>+352(SB)
#define INF vecConst<>+384(SB)
#define BIAS127 vecConst<>+416(SB)
#define LANES vecConst<>+448(SB)
#define NEGINF vecConst<>+480(SB)
#define EIGHT vecConst<>+512(SB)

DATA vecConst<>+0(SB)/8, $0x4b4000004b400000
DATA vecConst<>+8(SB)/8, $0x4b4000004b400000
DATA vecConst<>+16(SB)/8, $0x4b4000004b400000
DATA vecConst<>+24(SB)/8, $0x4b4000004b400000
DATA vecConst<>+32(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA vecConst<>+40(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA vecConst<>+48(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA vecConst<>+56(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA vecConst<>+64(SB)/8, $0x3f3172003f317200
DATA vecConst<>+72(SB)/8, $0x3f3172003f317200
DATA vecConst<>+80(SB)/8, $0x3f3172003f317200
DATA vecConst<>+88(SB)/8, $0x3f3172003f317200
DATA vecConst<>+96(SB)/8, $0x35bfbe8e35bfbe8e
DATA vecConst<>+104(SB)/8, $0x35bfbe8e35bfbe8e
DATA vecConst<>+112(SB)/8, $0x35bfbe8e35bfbe8e
DATA vecConst<>+120(SB)/8, $0x35bfbe8e35bfbe8e
DATA vecConst<>+128(SB)/8, $0x3c0720103c072010
DATA vecConst<>+136(SB)/8, $0x3c0720103c072010
DATA vecConst<>+144(SB)/8, $0x3c0720103c072010
DATA vecConst<>+152(SB)/8, $0x3c0720103c072010
DATA vecConst<>+160(SB)/8, $0x3d2b9f173d2b9f17
DATA vecConst<>+168(SB)/8, $0x3d2b9f173d2b9f17
DATA vecConst<>+176(SB)/8, $0x3d2b9f173d2b9f17
DATA vecConst<>+184(SB)/8, $0x3d2b9f173d2b9f17
DATA vecConst<>+192(SB)/8, $0x3e2aaf333e2aaf33
DATA vecConst<>+200(SB)/8, $0x3e2aaf333e2aaf33
DATA vecConst<>+208(SB)/8, $0x3e2aaf333e2aaf33
DATA vecConst<>+216(SB)/8, $0x3e2aaf333e2aaf33
DATA vecConst<>+224(SB)/8, $0x3efffedb3efffedb
DATA vecConst<>+232(SB)/8, $0x3efffedb3efffedb
DATA vecConst<>+240(SB)/8, $0x3efffedb3efffedb
DATA vecConst<>+248(SB)/8, $0x3efffedb3efffedb
DATA vecConst<>+256(SB)/8, $0x3f7ffff63f7ffff6
DATA vecConst<>+264(SB)/8, $0x3f7ffff63f7ffff6
DATA vecConst<>+272(SB)/8, $0x3f7ffff63f7ffff6
DATA vecConst<>+280(SB)/8, $0x3f7ffff63f7ffff6
DATA vecConst<>+288(SB)/8, $0x3f8000003f800000
DATA vecConst<>+296(SB)/8, $0x3f8000003f800000
DATA vecConst<>+304(SB)/8, $0x3f8000003f800000
DATA vecConst<>+312(SB)/8, $0x3f8000003f800000
DATA vecConst<>+320(SB)/8, $0x4340000043400000
DATA vecConst<>+328(SB)/8, $0x4340000043400000
DATA vecConst<>+336(SB)/8, $0x4340000043400000
DATA vecConst<>+344(SB)/8, $0x4340000043400000
DATA vecConst<>+352(SB)/8, $0x7fffffff7fffffff
DATA vecConst<>+360(SB)/8, $0x7fffffff7fffffff
DATA vecConst<>+368(SB)/8, $0x7fffffff7fffffff
DATA vecConst<>+376(SB)/8, $0x7fffffff7fffffff
DATA vecConst<>+384(SB)/8, $0x7f8000007f800000
DATA vecConst<>+392(SB)/8, $0x7f8000007f800000
DATA vecConst<>+400(SB)/8, $0x7f8000007f800000
DATA vecConst<>+408(SB)/8, $0x7f8000007f800000
DATA vecConst<>+416(SB)/8, $0x0000007f0000007f
DATA vecConst<>+424(SB)/8, $0x0000007f0000007f
DATA vecConst<>+432(SB)/8, $0x0000007f0000007f
DATA vecConst<>+440(SB)/8, $0x0000007f0000007f
DATA vecConst<>+448(SB)/8, $0x0000000100000000
DATA vecConst<>+456(SB)/8, $0x0000000300000002
DATA vecConst<>+464(SB)/8, $0x0000000500000004
DATA vecConst<>+472(SB)/8, $0x0000000700000006
DATA vecConst<>+480(SB)/8, $0xff800000ff800000
DATA vecConst<>+488(SB)/8, $0xff800000ff800000
DATA vecConst<>+496(SB)/8, $0xff800000ff800000
DATA vecConst<>+504(SB)/8, $0xff800000ff800000
DATA vecConst<>+512(SB)/8, $0x0000000800000008
DATA vecConst<>+520(SB)/8, $0x0000000800000008
DATA vecConst<>+528(SB)/8, $0x0000000800000008
DATA vecConst<>+536(SB)/8, $0x0000000800000008
GLOBL vecConst<>(SB), RODATA|NOPTR, $544

// EXPF8 sets x to expfGGML of each of its lanes (ggml_v_expf, AVX-512),
// with a-d as scratch. _mm512_scalef_ps(j, n), j·2^n rounded once, is
// j·2^(n>>1) (exact: j is near 1 and |n>>1| <= 96) times 2^(n-(n>>1)), one
// rounding; the lanes with |n| > 192 are 0 or +Inf as ggml blends them.
#define EXPF8(x, a, b, c, d) \
	VMOVUPS EXP_R, a; \
	VFMADD231PS EXP_LOG2E, x, a; \
	VSUBPS EXP_R, a, a; \
	VMOVAPS x, b; \
	VFNMADD231PS EXP_LN2HI, a, b; \
	VFNMADD231PS EXP_LN2LO, a, b; \
	VMULPS b, b, c; \
	VMOVUPS EXP_C4, d; \
	VFMADD231PS EXP_C5, b, d; \
	VMOVUPS EXP_C2, x; \
	VFMADD231PS EXP_C3, b, x; \
	VFMADD231PS c, d, x; \
	VMOVUPS ONE, d; \
	VFMADD231PS EXP_C1, b, d; \
	VFMADD231PS c, x, d; \
	VCVTTPS2DQ a, b; \
	VPSRAD $1, b, c; \
	VPSUBD c, b, b; \
	VPADDD BIAS127, c, c; \
	VPSLLD $23, c, c; \
	VPADDD BIAS127, b, b; \
	VPSLLD $23, b, b; \
	VMULPS c, d, d; \
	VMULPS b, d, d; \
	VANDPS ABSMASK, a, b; \
	VCMPPS $0x1e, EXP_192, b, b; \
	VXORPS c, c, c; \
	VCMPPS $0x1e, c, a, c; \
	VANDPS INF, c, c; \
	VBLENDVPS b, c, d, x

// FAMASK scales the scores of 8 positions (y) and sets those outside
// [lo, hi] (Y9, Y10) to -Inf (Y13); Y11 holds the lanes' positions.
#define FAMASK(y) \
	VMULPS Y8, y, y; \
	VPCMPGTD Y11, Y9, Y14; \
	VPCMPGTD Y10, Y11, Y15; \
	VPOR Y15, Y14, Y14; \
	VBLENDVPS Y14, Y13, y, y; \
	VPADDD Y12, Y11, Y11

// func faScoresAVX2(kq *[64]float32, kt, q *float32, hd int, scale float32, lo, hi int) float32
// The 64 positions' fused multiply-add chains over d in Y0-Y7; hd > 0.
TEXT ·faScoresAVX2(SB), NOSPLIT, $0-60
	MOVQ kq+0(FP), DI
	MOVQ kt+8(FP), SI
	MOVQ q+16(FP), DX
	MOVQ hd+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

scoresd:
	VBROADCASTSS (DX), Y8
	VFMADD231PS (SI), Y8, Y0
	VFMADD231PS 32(SI), Y8, Y1
	VFMADD231PS 64(SI), Y8, Y2
	VFMADD231PS 96(SI), Y8, Y3
	VFMADD231PS 128(SI), Y8, Y4
	VFMADD231PS 160(SI), Y8, Y5
	VFMADD231PS 192(SI), Y8, Y6
	VFMADD231PS 224(SI), Y8, Y7
	ADDQ $256, SI
	ADDQ $4, DX
	DECQ CX
	JNZ  scoresd

	VBROADCASTSS scale+32(FP), Y8
	MOVQ lo+40(FP), AX
	VMOVD AX, X9
	VPBROADCASTD X9, Y9
	MOVQ hi+48(FP), AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	VMOVDQU LANES, Y11
	VMOVDQU EIGHT, Y12
	VMOVUPS NEGINF, Y13
	FAMASK(Y0)
	FAMASK(Y1)
	FAMASK(Y2)
	FAMASK(Y3)
	FAMASK(Y4)
	FAMASK(Y5)
	FAMASK(Y6)
	FAMASK(Y7)
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)

	// max's answer: NaN if any score is NaN, +0 above -0.
	VCMPPS $3, Y0, Y0, Y14
	VCMPPS $3, Y1, Y1, Y15
	VORPS  Y15, Y14, Y14
	VCMPPS $3, Y2, Y2, Y15
	VORPS  Y15, Y14, Y14
	VCMPPS $3, Y3, Y3, Y15
	VORPS  Y15, Y14, Y14
	VCMPPS $3, Y4, Y4, Y15
	VORPS  Y15, Y14, Y14
	VCMPPS $3, Y5, Y5, Y15
	VORPS  Y15, Y14, Y14
	VCMPPS $3, Y6, Y6, Y15
	VORPS  Y15, Y14, Y14
	VCMPPS $3, Y7, Y7, Y15
	VORPS  Y15, Y14, Y14
	VMOVMSKPS Y14, AX
	TESTL AX, AX
	JNZ   scoresnan
	VMAXPS Y1, Y0, Y0
	VMAXPS Y3, Y2, Y2
	VMAXPS Y5, Y4, Y4
	VMAXPS Y7, Y6, Y6
	VMAXPS Y2, Y0, Y0
	VMAXPS Y6, Y4, Y4
	VMAXPS Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VMAXPS X1, X0, X0
	VMOVSHDUP X0, X1
	VMAXSS X1, X0, X0
	VXORPS X1, X1, X1
	VUCOMISS X1, X0
	JEQ   scoreszero

scoresret:
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

scoresnan:
	MOVL $0x7fc00000, AX
	MOVL AX, ret+56(FP)
	VZEROUPPER
	RET

scoreszero: // the maximum is +0 if any score is, else -0
	MOVQ $0, CX

scoreszero1:
	MOVL (DI)(CX*4), AX
	TESTL AX, AX
	JZ   scoresplus
	INCQ CX
	CMPQ CX, $64
	JLT  scoreszero1
	MOVL $0x80000000, AX
	MOVL AX, ret+56(FP)
	VZEROUPPER
	RET

scoresplus:
	MOVL $0, ret+56(FP)
	VZEROUPPER
	RET

// func faExpSumAVX2(kq *[64]float32, m float32) float64
// Each 16 (two registers) in fold16's order, the sums added in float64.
TEXT ·faExpSumAVX2(SB), NOSPLIT, $0-24
	MOVQ kq+0(FP), DI
	VBROADCASTSS m+8(FP), Y15
	VXORPD X14, X14, X14
	MOVQ $4, CX

expsum16:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VSUBPS Y15, Y0, Y0
	VSUBPS Y15, Y1, Y1
	EXPF8(Y0, Y2, Y3, Y4, Y5)
	EXPF8(Y1, Y6, Y7, Y8, Y9)
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VCVTSS2SD X0, X0, X0
	VADDSD X0, X14, X14
	ADDQ $64, DI
	DECQ CX
	JNZ  expsum16

	VMOVSD X14, ret+16(FP)
	VZEROUPPER
	RET

// func faAccumAVX2(acc, v *float32, stride int, w *float32, np, n int)
// acc[d] = fma(v[p*stride+d], w[p], acc[d]) for p < np in turn, d < n;
// np > 0, n a positive multiple of 8. Each 64 (then 8) elements of acc stay
// in registers over the positions.
TEXT ·faAccumAVX2(SB), NOSPLIT, $0-48
	MOVQ acc+0(FP), DI
	MOVQ v+8(FP), SI
	MOVQ stride+16(FP), R11
	SHLQ $2, R11
	MOVQ w+24(FP), BX
	MOVQ np+32(FP), R12
	MOVQ n+40(FP), CX

acc64:
	CMPQ CX, $64
	JLT  acc8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ SI, R8
	MOVQ BX, R9
	MOVQ R12, R10

acc64p:
	MOVL  (R9), AX
	TESTL $0x7fffffff, AX
	JZ    acc64skip
	VBROADCASTSS (R9), Y8
	VFMADD231PS (R8), Y8, Y0
	VFMADD231PS 32(R8), Y8, Y1
	VFMADD231PS 64(R8), Y8, Y2
	VFMADD231PS 96(R8), Y8, Y3
	VFMADD231PS 128(R8), Y8, Y4
	VFMADD231PS 160(R8), Y8, Y5
	VFMADD231PS 192(R8), Y8, Y6
	VFMADD231PS 224(R8), Y8, Y7

acc64skip:
	ADDQ R11, R8
	ADDQ $4, R9
	DECQ R10
	JNZ  acc64p
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $64, CX
	JMP  acc64

acc8:
	TESTQ CX, CX
	JZ    accdone
	VMOVUPS (DI), Y0
	MOVQ SI, R8
	MOVQ BX, R9
	MOVQ R12, R10

acc8p:
	MOVL  (R9), AX
	TESTL $0x7fffffff, AX
	JZ    acc8skip
	VBROADCASTSS (R9), Y8
	VFMADD231PS (R8), Y8, Y0

acc8skip:
	ADDQ R11, R8
	ADDQ $4, R9
	DECQ R10
	JNZ  acc8p
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  acc8

accdone:
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, s float32, n int)
// x[i] *= s; n a positive multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	VBROADCASTSS s+8(FP), Y1
	MOVQ n+16(FP), CX

scale8:
	VMULPS (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  scale8
	VZEROUPPER
	RET

// SILU8 sets x (held in register x, at DI+off) to silu(x)·u (SI+off), with
// y and a-d as scratch and Y15 zero.
#define SILU8(off, x, y, a, b, c, d) \
	VMOVUPS off(DI), x; \
	VSUBPS x, Y15, y; \
	EXPF8(y, a, b, c, d); \
	VADDPS ONE, y, y; \
	VDIVPS y, x, x; \
	VMULPS off(SI), x, x; \
	VMOVUPS x, off(DI)

// func swigluAVX2(x, u *float32, n int)
// x[i] = x[i] / (1 + expfGGML(0-x[i])) · u[i]; n a positive multiple of 8.
TEXT ·swigluAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ u+8(FP), SI
	MOVQ n+16(FP), CX
	VXORPS Y15, Y15, Y15

silu16:
	CMPQ CX, $16
	JLT  silu8
	SILU8(0, Y0, Y1, Y2, Y3, Y4, Y5)
	SILU8(32, Y6, Y7, Y8, Y9, Y10, Y11)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  silu16

silu8:
	TESTQ CX, CX
	JZ    siludone
	SILU8(0, Y0, Y1, Y2, Y3, Y4, Y5)

siludone:
	VZEROUPPER
	RET

// glibc's expf constants (expf in ggmlmath.go) and the float32 thresholds
// of its special cases.
DATA expfConst<>+0(SB)/8, $0x40471547652b82fe  // InvLn2N
DATA expfConst<>+8(SB)/8, $0x4338000000000000  // shift
DATA expfConst<>+16(SB)/8, $0x3ebc6af84b912394 // c0
DATA expfConst<>+24(SB)/8, $0x3f2ebfce50fac4f3 // c1
DATA expfConst<>+32(SB)/8, $0x3f962e42ff0c52d6 // c2
DATA expfConst<>+40(SB)/8, $0x3ff0000000000000 // 1.0
DATA expfConst<>+48(SB)/4, $0x42b17217         // 0x1.62e42ep6
DATA expfConst<>+52(SB)/4, $0xc2cff1b4         // -0x1.9fe368p6
DATA expfConst<>+56(SB)/4, $0x3f800000         // float32 1
GLOBL expfConst<>(SB), RODATA|NOPTR, $64

// func f16StepsAVX2(acc, q, k, v *float32, stride, np, hd int, scale float32) float32
// f16StepsGo without soft-capping for hd a positive multiple of 64, np > 0:
// per position the 64-lane dot product (dotL64AVX2's registers and
// reduction), glibc's expf in scalar float64 (ggmlmath.go's expf, its
// products and sums rounded one by one), then f16Scale or f16Acc as
// qdot_amd64.s computes them, and the sum's fused multiply-add.
TEXT ·f16StepsAVX2(SB), NOSPLIT, $0-68
	MOVQ acc+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ stride+32(FP), R10
	SHLQ $2, R10
	MOVQ np+40(FP), R11
	MOVQ hd+48(FP), CX
	VMOVSS scale+56(FP), X14
	MOVL $0xff800000, AX
	VMOVD AX, X13 // the running maximum
	VXORPS X12, X12, X12 // the sum

f16pos:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ SI, BX
	MOVQ R8, DX
	MOVQ CX, AX

f16dot:
	VMOVUPS (BX), Y8
	VMOVUPS 32(BX), Y9
	VMOVUPS 64(BX), Y10
	VMOVUPS 96(BX), Y11
	VFMADD231PS (DX), Y8, Y0
	VFMADD231PS 32(DX), Y9, Y1
	VFMADD231PS 64(DX), Y10, Y2
	VFMADD231PS 96(DX), Y11, Y3
	VMOVUPS 128(BX), Y8
	VMOVUPS 160(BX), Y9
	VMOVUPS 192(BX), Y10
	VMOVUPS 224(BX), Y11
	VFMADD231PS 128(DX), Y8, Y4
	VFMADD231PS 160(DX), Y9, Y5
	VFMADD231PS 192(DX), Y10, Y6
	VFMADD231PS 224(DX), Y11, Y7
	ADDQ $256, BX
	ADDQ $256, DX
	SUBQ $64, AX
	JNZ  f16dot
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X8
	VADDPS X8, X0, X0
	VMOVHLPS X0, X0, X8
	VADDPS X8, X0, X0
	VMOVSHDUP X0, X8
	VADDSS X8, X0, X0
	VMULSS X14, X0, X0 // the score s

	// s > max: expf(max - s), the new maximum; else expf(s - max)
	XORL R12, R12
	UCOMISS X13, X0
	JHI  f16newmax
	VSUBSS X13, X0, X1
	JMP  f16exp

f16newmax:
	VSUBSS X0, X13, X1
	VMOVAPS X0, X13
	MOVL $1, R12

f16exp:
	VMOVD X1, AX
	MOVL AX, DX
	SHRL $20, DX
	ANDL $0x7ff, DX
	CMPL DX, $0x42b
	JAE  f16expspecial

f16expnormal:
	VCVTSS2SD X1, X2, X2
	VMULSD expfConst<>+0(SB), X2, X2
	VADDSD expfConst<>+8(SB), X2, X3
	VMOVQ X3, BX
	VSUBSD expfConst<>+8(SB), X3, X3
	VSUBSD X3, X2, X2
	MOVQ BX, DX
	ANDQ $31, DX
	LEAQ ·exp2fTable(SB), AX
	MOVQ (AX)(DX*8), DX
	SHLQ $47, BX
	ADDQ BX, DX
	VMOVQ DX, X4
	VMULSD expfConst<>+16(SB), X2, X5
	VADDSD expfConst<>+24(SB), X5, X5
	VMULSD X2, X2, X6
	VMULSD expfConst<>+32(SB), X2, X2
	VADDSD expfConst<>+40(SB), X2, X2
	VMULSD X6, X5, X5
	VADDSD X5, X2, X2
	VMULSD X4, X2, X2
	VCVTSD2SS X2, X1, X1

f16expdone:
	VMOVSS expfConst<>+56(SB), X3 // vs = 1 (new maximum) ...
	TESTL R12, R12
	JZ   f16old
	VMOVAPS X1, X2 // ... ms = expf
	VBROADCASTSS X1, Y15
	MOVQ DI, BX
	MOVQ CX, DX
	SHRQ $3, DX

f16scale:
	VMULPS (BX), Y15, Y8
	VCVTPS2PH $0, Y8, X8
	VCVTPH2PS X8, Y8
	VMOVUPS Y8, (BX)
	ADDQ $32, BX
	DECQ DX
	JNZ  f16scale
	JMP  f16acc

f16old:
	VMOVAPS X3, X2 // ms = 1
	VMOVAPS X1, X3 // vs = expf

f16acc:
	VCVTSS2SD X3, X15, X15
	VBROADCASTSD X15, Y15
	MOVQ DI, BX
	MOVQ R9, R13
	MOVQ CX, DX
	SHRQ $3, DX

f16accloop:
	VCVTPS2PD (BX), Y8
	VCVTPS2PD 16(BX), Y9
	VCVTPS2PD (R13), Y10
	VCVTPS2PD 16(R13), Y11
	VMULPD Y15, Y10, Y10
	VMULPD Y15, Y11, Y11
	VADDPD Y10, Y8, Y8
	VADDPD Y11, Y9, Y9
	VCVTPD2PSY Y8, X8
	VCVTPD2PSY Y9, X9
	VINSERTF128 $1, X9, Y8, Y8
	VCVTPS2PH $0, Y8, X8
	VCVTPH2PS X8, Y8
	VMOVUPS Y8, (BX)
	ADDQ $32, BX
	ADDQ $32, R13
	DECQ DX
	JNZ  f16accloop

	VFMADD213SS X3, X2, X12 // sum = sum·ms + vs
	ADDQ R10, R8
	ADDQ R10, R9
	DECQ R11
	JNZ  f16pos
	VMOVSS X12, ret+64(FP)
	VZEROUPPER
	RET

f16expspecial: // expf's branches for |x| >= 88, -Inf and NaN
	CMPL AX, $0xff800000
	JEQ  f16expzero
	CMPL DX, $0x7f8
	JAE  f16expnan
	UCOMISS expfConst<>+48(SB), X1
	JHI  f16expinf
	VMOVSS expfConst<>+52(SB), X2
	UCOMISS X1, X2
	JHI  f16expzero
	JMP  f16expnormal

f16expzero:
	VXORPS X1, X1, X1
	JMP  f16expdone

f16expnan:
	VADDSS X1, X1, X1
	JMP  f16expdone

f16expinf:
	MOVL $0x7f800000, AX
	VMOVD AX, X1
	JMP  f16expdone
