//go:build amd64 && !purego

#include "textflag.h"
#include "regs_amd64.h"

// HSUMTO adds the 8 lanes of y (whose low half is x) and stores the sum at
// off(DI); X8 is scratch.
#define HSUMTO(y, x, off) \
	VEXTRACTF128 $1, y, X8; \
	VADDPS X8, x, x; \
	VHADDPS x, x, x; \
	VHADDPS x, x, x; \
	MOVSS x, off(DI)

// Q8BLOCK loads the Q8_0 block at SI: its f16 scale as float32 in every
// lane of Y5, its 32 int8 values as float32 in Y1-Y4.
#define Q8BLOCK \
	MOVWLZX (SI), AX; \
	MOVQ    AX, X5; \
	VCVTPH2PS X5, X5; \
	VBROADCASTSS X5, Y5; \
	VPMOVSXBD 2(SI), Y1; \
	VPMOVSXBD 10(SI), Y2; \
	VPMOVSXBD 18(SI), Y3; \
	VPMOVSXBD 26(SI), Y4; \
	VCVTDQ2PS Y1, Y1; \
	VCVTDQ2PS Y2, Y2; \
	VCVTDQ2PS Y3, Y3; \
	VCVTDQ2PS Y4, Y4

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// func dotAVX2(a, b *float32, n int) float32
// n must be a multiple of 8.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop32:
	CMPQ CX, $32
	JL   loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JL   done
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dot4AVX2(w, x0, x1, x2, x3 *float32, n int, out *[4]float32)
// n must be a multiple of 8.
TEXT ·dot4AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ x0+8(FP), R8
	MOVQ x1+16(FP), R9
	MOVQ x2+24(FP), R10
	MOVQ x3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DI
	XORQ AX, AX
	ZEROY8

loop16:
	CMPQ CX, $16
	JL   loop8
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS 32(SI)(AX*1), Y9
	VFMADD231PS (R8)(AX*1), Y8, Y0
	VFMADD231PS (R9)(AX*1), Y8, Y1
	VFMADD231PS (R10)(AX*1), Y8, Y2
	VFMADD231PS (R11)(AX*1), Y8, Y3
	VFMADD231PS 32(R8)(AX*1), Y9, Y4
	VFMADD231PS 32(R9)(AX*1), Y9, Y5
	VFMADD231PS 32(R10)(AX*1), Y9, Y6
	VFMADD231PS 32(R11)(AX*1), Y9, Y7
	ADDQ $64, AX
	SUBQ $16, CX
	JMP  loop16

loop8:
	CMPQ CX, $8
	JL   done
	VMOVUPS (SI)(AX*1), Y8
	VFMADD231PS (R8)(AX*1), Y8, Y0
	VFMADD231PS (R9)(AX*1), Y8, Y1
	VFMADD231PS (R10)(AX*1), Y8, Y2
	VFMADD231PS (R11)(AX*1), Y8, Y3
	ADDQ $32, AX
	SUBQ $8, CX
	JMP  loop8

done:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	HSUMTO(Y0, X0, 0)
	HSUMTO(Y1, X1, 4)
	HSUMTO(Y2, X2, 8)
	HSUMTO(Y3, X3, 12)
	VZEROUPPER
	RET

// func dotQ8AVX2(q *byte, x *float32, nblocks int) float32
// q holds nblocks Q8_0 blocks (an f16 scale, then 32 int8 values).
TEXT ·dotQ8AVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ nblocks+16(FP), CX
	VXORPS Y0, Y0, Y0

block:
	TESTQ CX, CX
	JE    blocksdone
	Q8BLOCK
	VMULPS (DI), Y1, Y1
	VFMADD231PS 32(DI), Y2, Y1
	VFMADD231PS 64(DI), Y3, Y1
	VFMADD231PS 96(DI), Y4, Y1
	VFMADD231PS Y5, Y1, Y0
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JMP  block

blocksdone:
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dot2x4AVX2(w0, w1, x0, x1, x2, x3 *float32, n int, out *[8]float32)
// out[4*r+t] = w_r · x_t for two weight rows and four activations; n must
// be a multiple of 8.
TEXT ·dot2x4AVX2(SB), NOSPLIT, $0-64
	MOVQ w0+0(FP), SI
	MOVQ w1+8(FP), DX
	MOVQ x0+16(FP), R8
	MOVQ x1+24(FP), R9
	MOVQ x2+32(FP), R10
	MOVQ x3+40(FP), R11
	MOVQ n+48(FP), CX
	MOVQ out+56(FP), DI
	XORQ AX, AX
	ZEROY8

loop:
	CMPQ CX, $8
	JL   done
	VMOVUPS (SI)(AX*1), Y8
	VMOVUPS (DX)(AX*1), Y9
	VMOVUPS (R8)(AX*1), Y10
	VMOVUPS (R9)(AX*1), Y11
	VMOVUPS (R10)(AX*1), Y12
	VMOVUPS (R11)(AX*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y11, Y8, Y1
	VFMADD231PS Y12, Y8, Y2
	VFMADD231PS Y13, Y8, Y3
	VFMADD231PS Y10, Y9, Y4
	VFMADD231PS Y11, Y9, Y5
	VFMADD231PS Y12, Y9, Y6
	VFMADD231PS Y13, Y9, Y7
	ADDQ $32, AX
	SUBQ $8, CX
	JMP  loop

done:
	HSUMTO(Y0, X0, 0)
	HSUMTO(Y1, X1, 4)
	HSUMTO(Y2, X2, 8)
	HSUMTO(Y3, X3, 12)
	HSUMTO(Y4, X4, 16)
	HSUMTO(Y5, X5, 20)
	HSUMTO(Y6, X6, 24)
	HSUMTO(Y7, X7, 28)
	VZEROUPPER
	RET

// func dequantQ8AVX2(q *byte, out *float32, nblocks int)
// Expands nblocks Q8_0 blocks into 32*nblocks float32 values.
TEXT ·dequantQ8AVX2(SB), NOSPLIT, $0-24
	MOVQ q+0(FP), SI
	MOVQ out+8(FP), DI
	MOVQ nblocks+16(FP), CX

dqblock:
	TESTQ CX, CX
	JE    dqdone
	Q8BLOCK
	VMULPS Y5, Y1, Y1
	VMULPS Y5, Y2, Y2
	VMULPS Y5, Y3, Y3
	VMULPS Y5, Y4, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JMP  dqblock

dqdone:
	VZEROUPPER
	RET
