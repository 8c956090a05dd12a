//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 VNNI kernels for Q8_0 weights times Q8_0 activations (see
// q8vnni_amd64.go). VPDPBUSD multiplies unsigned by signed bytes, so the
// activations are stored plus 128 (x xor 0x80) and each block's sum starts
// from -128·Σw, which makes it exactly Σ w·x; the float part is qdot.go's
// order, acc[b%4] += (dw·dx)·float(sum), then (acc0+acc1)+(acc2+acc3).

// DP8 adds the products of one block of a weight row (at o+2 B, four bytes
// broadcast at a time) with the sixteen tokens' activations in Z0-Z7 into
// ACC.
#define DP8(o, B, ACC) \
	VPDPBUSD.BCST o+2 B, Z0, ACC  \
	VPDPBUSD.BCST o+6 B, Z1, ACC  \
	VPDPBUSD.BCST o+10 B, Z2, ACC \
	VPDPBUSD.BCST o+14 B, Z3, ACC \
	VPDPBUSD.BCST o+18 B, Z4, ACC \
	VPDPBUSD.BCST o+22 B, Z5, ACC \
	VPDPBUSD.BCST o+26 B, Z6, ACC \
	VPDPBUSD.BCST o+30 B, Z7, ACC

// FACC is F += (dw·dx)·float(S), dw at to+4 T, dx in Z28.
#define FACC(to, T, S, F) \
	VCVTDQ2PS     S, S          \
	VMULPS.BCST   to+4 T, Z28, Z29 \
	VMULPS        S, Z29, Z29   \
	VADDPS        Z29, F, F

// BLK is one block of the four rows (weights at wo(SI), table entries at
// to(BX), activations at xo(DI), scales at (DX)) into accumulators F0-F3.
#define BLK(wo, xo, to, F0, F1, F2, F3) \
	VMOVDQU32    xo(DI), Z0              \
	VMOVDQU32    xo+64(DI), Z1           \
	VMOVDQU32    xo+128(DI), Z2          \
	VMOVDQU32    xo+192(DI), Z3          \
	VMOVDQU32    xo+256(DI), Z4          \
	VMOVDQU32    xo+320(DI), Z5          \
	VMOVDQU32    xo+384(DI), Z6          \
	VMOVDQU32    xo+448(DI), Z7          \
	VMOVUPS      (DX), Z28               \
	ADDQ         R9, DX                  \
	VPBROADCASTD to(BX), Z8              \
	VPBROADCASTD to(BX)(R8*1), Z9        \
	VPBROADCASTD to(BX)(R8*2), Z10       \
	VPBROADCASTD to(BX)(R10*1), Z11      \
	DP8(wo, (SI), Z8)                    \
	DP8(wo, (SI)(R12*1), Z9)             \
	DP8(wo, (SI)(R12*2), Z10)            \
	DP8(wo, (SI)(R13*1), Z11)            \
	FACC(to, (BX), Z8, F0)               \
	FACC(to, (BX)(R8*1), Z9, F1)         \
	FACC(to, (BX)(R8*2), Z10, F2)        \
	FACC(to, (BX)(R10*1), Z11, F3)

// func q8TilesVNNI(w *byte, rowBytes int, ngr int, tab *int32, x *byte, xd *float32, dstride int, nb int, out *float32, ostride int, pf uintptr)
// ngr groups of four Q8_0 rows (w, w+rowBytes, ...; rowBytes = 34·nb)
// against sixteen tokens: x is their activations (q8ActsVNNI's layout), xd
// token 0's scale of block 0, block b's at xd+b·dstride; tab holds each
// row's (-128·Σw, dw) per block, rows nb·8 bytes apart. Row r's product
// with token t goes to out + t·ostride + 4r. From pf on, 64 bytes a block
// are prefetched (the caller's next rows, so that they come from memory
// while this product computes).
TEXT ·q8TilesVNNI(SB), NOSPLIT, $0-88
	MOVQ w+0(FP), SI
	MOVQ rowBytes+8(FP), R12
	LEAQ (R12)(R12*2), R13
	MOVQ ngr+16(FP), AX
	MOVQ tab+24(FP), BX
	MOVQ dstride+48(FP), R9
	MOVQ nb+56(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R10
	MOVQ out+64(FP), R11
	MOVQ pf+80(FP), R14

q8tgroup:
	MOVQ   x+32(FP), DI
	MOVQ   xd+40(FP), DX
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	MOVQ   nb+56(FP), CX
	SHRQ   $2, CX
	JZ     q8ttail

q8tloop:
	PREFETCHT0 (R14)
	PREFETCHT0 64(R14)
	PREFETCHT0 128(R14)
	PREFETCHT0 192(R14)
	ADDQ       $256, R14
	BLK(0, 0, 0, Z12, Z13, Z14, Z15)
	BLK(34, 512, 8, Z16, Z17, Z18, Z19)
	BLK(68, 1024, 16, Z20, Z21, Z22, Z23)
	BLK(102, 1536, 24, Z24, Z25, Z26, Z27)
	ADDQ $136, SI
	ADDQ $2048, DI
	ADDQ $32, BX
	DECQ CX
	JNZ  q8tloop

q8ttail:
	// The last nb%4 blocks: accumulators 0, 1, 2 in turn.
	MOVQ nb+56(FP), CX
	ANDQ $3, CX
	JZ   q8tsum
	BLK(0, 0, 0, Z12, Z13, Z14, Z15)
	ADDQ $34, SI
	ADDQ $512, DI
	ADDQ $8, BX
	DECQ CX
	JZ   q8tsum
	BLK(0, 0, 0, Z16, Z17, Z18, Z19)
	ADDQ $34, SI
	ADDQ $512, DI
	ADDQ $8, BX
	DECQ CX
	JZ   q8tsum
	BLK(0, 0, 0, Z20, Z21, Z22, Z23)
	ADDQ $34, SI
	ADDQ $8, BX

q8tsum:
	// Row r's total (acc0+acc1)+(acc2+acc3) into Z12+r.
	VADDPS Z16, Z12, Z12
	VADDPS Z24, Z20, Z20
	VADDPS Z20, Z12, Z12
	VADDPS Z17, Z13, Z13
	VADDPS Z25, Z21, Z21
	VADDPS Z21, Z13, Z13
	VADDPS Z18, Z14, Z14
	VADDPS Z26, Z22, Z22
	VADDPS Z22, Z14, Z14
	VADDPS Z19, Z15, Z15
	VADDPS Z27, Z23, Z23
	VADDPS Z23, Z15, Z15

	// Transpose to tokens: lane i of Z4, Z5, Z6, Z7 is the four rows of
	// token 4i, 4i+1, 4i+2, 4i+3.
	VUNPCKLPS Z13, Z12, Z0
	VUNPCKHPS Z13, Z12, Z1
	VUNPCKLPS Z15, Z14, Z2
	VUNPCKHPS Z15, Z14, Z3
	VUNPCKLPD Z2, Z0, Z4
	VUNPCKHPD Z2, Z0, Z5
	VUNPCKLPD Z3, Z1, Z6
	VUNPCKHPD Z3, Z1, Z7
	MOVQ      ostride+72(FP), CX
	LEAQ      (CX)(CX*2), DX
	MOVQ      R11, DI
	VMOVUPS   X4, (DI)
	VMOVUPS   X5, (DI)(CX*1)
	VMOVUPS   X6, (DI)(CX*2)
	VMOVUPS   X7, (DI)(DX*1)
	LEAQ      (DI)(CX*4), DI
	VEXTRACTF32X4 $1, Z4, (DI)
	VEXTRACTF32X4 $1, Z5, (DI)(CX*1)
	VEXTRACTF32X4 $1, Z6, (DI)(CX*2)
	VEXTRACTF32X4 $1, Z7, (DI)(DX*1)
	LEAQ      (DI)(CX*4), DI
	VEXTRACTF32X4 $2, Z4, (DI)
	VEXTRACTF32X4 $2, Z5, (DI)(CX*1)
	VEXTRACTF32X4 $2, Z6, (DI)(CX*2)
	VEXTRACTF32X4 $2, Z7, (DI)(DX*1)
	LEAQ      (DI)(CX*4), DI
	VEXTRACTF32X4 $3, Z4, (DI)
	VEXTRACTF32X4 $3, Z5, (DI)(CX*1)
	VEXTRACTF32X4 $3, Z6, (DI)(CX*2)
	VEXTRACTF32X4 $3, Z7, (DI)(DX*1)

	// Next group: SI and BX have reached row 1's start.
	ADDQ $16, R11
	ADDQ R13, SI
	ADDQ R10, BX
	DECQ AX
	JNZ  q8tgroup
	VZEROUPPER
	RET

// func q8TabVNNI(w *byte, n8 int, tab *int32)
// For 8·n8 blocks of a Q8_0 row: tab[2b] = -128·Σw of block b, tab[2b+1]
// its scale dw as float32 bits.
TEXT ·q8TabVNNI(SB), NOSPLIT, $0-24
	MOVQ         w+0(FP), SI
	MOVQ         n8+8(FP), CX
	MOVQ         tab+16(FP), BX
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Y15
	VMOVDQU      q8vnniIdx<>(SB), Y14
	VPXOR        Y13, Y13, Y13

q8tabloop:
	VPXOR    Y0, Y0, Y0
	VPXOR    Y1, Y1, Y1
	VPXOR    Y2, Y2, Y2
	VPXOR    Y3, Y3, Y3
	VPXOR    Y4, Y4, Y4
	VPXOR    Y5, Y5, Y5
	VPXOR    Y6, Y6, Y6
	VPXOR    Y7, Y7, Y7
	VPDPBUSD 2(SI), Y15, Y0
	VPDPBUSD 36(SI), Y15, Y1
	VPDPBUSD 70(SI), Y15, Y2
	VPDPBUSD 104(SI), Y15, Y3
	VPDPBUSD 138(SI), Y15, Y4
	VPDPBUSD 172(SI), Y15, Y5
	VPDPBUSD 206(SI), Y15, Y6
	VPDPBUSD 240(SI), Y15, Y7
	// Lane i of Y1 = 128·Σw of block i.
	VPHADDD    Y1, Y0, Y0
	VPHADDD    Y3, Y2, Y2
	VPHADDD    Y5, Y4, Y4
	VPHADDD    Y7, Y6, Y6
	VPHADDD    Y2, Y0, Y0
	VPHADDD    Y6, Y4, Y4
	VPERM2I128 $0x20, Y4, Y0, Y1
	VPERM2I128 $0x31, Y4, Y0, Y2
	VPADDD     Y2, Y1, Y1
	VPSUBD     Y1, Y13, Y1
	// The eight scales: a dword gathered at each block's start, its low
	// half the f16.
	KXNORW     K1, K1, K1
	VPGATHERDD (SI)(Y14*1), K1, Y3
	VPMOVDW    Y3, X3
	VCVTPH2PS  X3, Y3
	VPUNPCKLDQ Y3, Y1, Y4
	VPUNPCKHDQ Y3, Y1, Y5
	VMOVDQU    X4, (BX)
	VMOVDQU    X5, 16(BX)
	VEXTRACTI128 $1, Y4, 32(BX)
	VEXTRACTI128 $1, Y5, 48(BX)
	ADDQ       $272, SI
	ADDQ       $64, BX
	DECQ       CX
	JNZ        q8tabloop
	VZEROUPPER
	RET

DATA q8vnniIdx<>+0(SB)/4, $0
DATA q8vnniIdx<>+4(SB)/4, $34
DATA q8vnniIdx<>+8(SB)/4, $68
DATA q8vnniIdx<>+12(SB)/4, $102
DATA q8vnniIdx<>+16(SB)/4, $136
DATA q8vnniIdx<>+20(SB)/4, $170
DATA q8vnniIdx<>+24(SB)/4, $204
DATA q8vnniIdx<>+28(SB)/4, $238
GLOBL q8vnniIdx<>(SB), RODATA|NOPTR, $32

// func q8ActsVNNI(q *int8, cols int, nm int, dst *byte)
// Sixteen tokens' activations (q, q+cols, ...) in the tile kernel's layout:
// for each 4-byte group m < nm, the sixteen tokens' bytes 4m..4m+3 xor 0x80,
// 64 bytes. nm is even.
TEXT ·q8ActsVNNI(SB), NOSPLIT, $0-32
	MOVQ         q+0(FP), SI
	MOVQ         cols+8(FP), AX
	MOVQ         nm+16(FP), CX
	MOVQ         dst+24(FP), DI
	VPBROADCASTD AX, Z14
	VPMULLD      q8vnniLanes<>(SB), Z14, Z14
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Z15
	SHRQ         $1, CX

q8actsloop:
	KXNORW     K1, K1, K1
	KXNORW     K2, K2, K2
	VPGATHERDD (SI)(Z14*1), K1, Z0
	VPGATHERDD 4(SI)(Z14*1), K2, Z1
	VPXORD     Z15, Z0, Z0
	VPXORD     Z15, Z1, Z1
	VMOVDQU32  Z0, (DI)
	VMOVDQU32  Z1, 64(DI)
	ADDQ       $8, SI
	ADDQ       $128, DI
	DECQ       CX
	JNZ        q8actsloop
	VZEROUPPER
	RET

DATA q8vnniLanes<>+0(SB)/4, $0
DATA q8vnniLanes<>+4(SB)/4, $1
DATA q8vnniLanes<>+8(SB)/4, $2
DATA q8vnniLanes<>+12(SB)/4, $3
DATA q8vnniLanes<>+16(SB)/4, $4
DATA q8vnniLanes<>+20(SB)/4, $5
DATA q8vnniLanes<>+24(SB)/4, $6
DATA q8vnniLanes<>+28(SB)/4, $7
DATA q8vnniLanes<>+32(SB)/4, $8
DATA q8vnniLanes<>+36(SB)/4, $9
DATA q8vnniLanes<>+40(SB)/4, $10
DATA q8vnniLanes<>+44(SB)/4, $11
DATA q8vnniLanes<>+48(SB)/4, $12
DATA q8vnniLanes<>+52(SB)/4, $13
DATA q8vnniLanes<>+56(SB)/4, $14
DATA q8vnniLanes<>+60(SB)/4, $15
GLOBL q8vnniLanes<>(SB), RODATA|NOPTR, $64

// func q8ActsT16VNNI(q *int8, cols int, nc int, dst *byte)
// q8ActsVNNI for 16·nc groups, sixteen at a time: the 16 tokens' 64 bytes
// loaded as a 16×16 matrix of dwords and transposed (dwords, qwords, then
// 128-bit lanes twice).
TEXT ·q8ActsT16VNNI(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), SI
	MOVQ cols+8(FP), R9
	MOVQ nc+16(FP), CX
	MOVQ dst+24(FP), DI
	LEAQ (R9)(R9*2), R10
	LEAQ (SI)(R9*4), R11
	LEAQ (R11)(R9*4), R12
	LEAQ (R12)(R9*4), R13

q8actt16loop:
	VMOVDQU32 (SI), Z0
	VMOVDQU32 (SI)(R9*1), Z1
	VMOVDQU32 (SI)(R9*2), Z2
	VMOVDQU32 (SI)(R10*1), Z3
	VMOVDQU32 (R11), Z4
	VMOVDQU32 (R11)(R9*1), Z5
	VMOVDQU32 (R11)(R9*2), Z6
	VMOVDQU32 (R11)(R10*1), Z7
	VMOVDQU32 (R12), Z8
	VMOVDQU32 (R12)(R9*1), Z9
	VMOVDQU32 (R12)(R9*2), Z10
	VMOVDQU32 (R12)(R10*1), Z11
	VMOVDQU32 (R13), Z12
	VMOVDQU32 (R13)(R9*1), Z13
	VMOVDQU32 (R13)(R9*2), Z14
	VMOVDQU32 (R13)(R10*1), Z15
	VPUNPCKLDQ Z1, Z0, Z16
	VPUNPCKHDQ Z1, Z0, Z17
	VPUNPCKLDQ Z3, Z2, Z18
	VPUNPCKHDQ Z3, Z2, Z19
	VPUNPCKLDQ Z5, Z4, Z20
	VPUNPCKHDQ Z5, Z4, Z21
	VPUNPCKLDQ Z7, Z6, Z22
	VPUNPCKHDQ Z7, Z6, Z23
	VPUNPCKLDQ Z9, Z8, Z24
	VPUNPCKHDQ Z9, Z8, Z25
	VPUNPCKLDQ Z11, Z10, Z26
	VPUNPCKHDQ Z11, Z10, Z27
	VPUNPCKLDQ Z13, Z12, Z28
	VPUNPCKHDQ Z13, Z12, Z29
	VPUNPCKLDQ Z15, Z14, Z30
	VPUNPCKHDQ Z15, Z14, Z31
	VPUNPCKLQDQ Z18, Z16, Z0
	VPUNPCKHQDQ Z18, Z16, Z1
	VPUNPCKLQDQ Z19, Z17, Z2
	VPUNPCKHQDQ Z19, Z17, Z3
	VPUNPCKLQDQ Z22, Z20, Z4
	VPUNPCKHQDQ Z22, Z20, Z5
	VPUNPCKLQDQ Z23, Z21, Z6
	VPUNPCKHQDQ Z23, Z21, Z7
	VPUNPCKLQDQ Z26, Z24, Z8
	VPUNPCKHQDQ Z26, Z24, Z9
	VPUNPCKLQDQ Z27, Z25, Z10
	VPUNPCKHQDQ Z27, Z25, Z11
	VPUNPCKLQDQ Z30, Z28, Z12
	VPUNPCKHQDQ Z30, Z28, Z13
	VPUNPCKLQDQ Z31, Z29, Z14
	VPUNPCKHQDQ Z31, Z29, Z15
	VSHUFI32X4 $0x44, Z4, Z0, Z16
	VSHUFI32X4 $0xee, Z4, Z0, Z17
	VSHUFI32X4 $0x44, Z12, Z8, Z18
	VSHUFI32X4 $0xee, Z12, Z8, Z19
	VSHUFI32X4 $0x44, Z5, Z1, Z20
	VSHUFI32X4 $0xee, Z5, Z1, Z21
	VSHUFI32X4 $0x44, Z13, Z9, Z22
	VSHUFI32X4 $0xee, Z13, Z9, Z23
	VSHUFI32X4 $0x44, Z6, Z2, Z24
	VSHUFI32X4 $0xee, Z6, Z2, Z25
	VSHUFI32X4 $0x44, Z14, Z10, Z26
	VSHUFI32X4 $0xee, Z14, Z10, Z27
	VSHUFI32X4 $0x44, Z7, Z3, Z28
	VSHUFI32X4 $0xee, Z7, Z3, Z29
	VSHUFI32X4 $0x44, Z15, Z11, Z30
	VSHUFI32X4 $0xee, Z15, Z11, Z31
	VSHUFI32X4 $0x88, Z18, Z16, Z0
	VSHUFI32X4 $0xdd, Z18, Z16, Z4
	VSHUFI32X4 $0x88, Z19, Z17, Z8
	VSHUFI32X4 $0xdd, Z19, Z17, Z12
	VSHUFI32X4 $0x88, Z22, Z20, Z1
	VSHUFI32X4 $0xdd, Z22, Z20, Z5
	VSHUFI32X4 $0x88, Z23, Z21, Z9
	VSHUFI32X4 $0xdd, Z23, Z21, Z13
	VSHUFI32X4 $0x88, Z26, Z24, Z2
	VSHUFI32X4 $0xdd, Z26, Z24, Z6
	VSHUFI32X4 $0x88, Z27, Z25, Z10
	VSHUFI32X4 $0xdd, Z27, Z25, Z14
	VSHUFI32X4 $0x88, Z30, Z28, Z3
	VSHUFI32X4 $0xdd, Z30, Z28, Z7
	VSHUFI32X4 $0x88, Z31, Z29, Z11
	VSHUFI32X4 $0xdd, Z31, Z29, Z15
	VPXORD.BCST q8vnniC80<>(SB), Z0, Z0
	VMOVDQU32 Z0, 0(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z1, Z1
	VMOVDQU32 Z1, 64(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z2, Z2
	VMOVDQU32 Z2, 128(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z3, Z3
	VMOVDQU32 Z3, 192(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z4, Z4
	VMOVDQU32 Z4, 256(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z5, Z5
	VMOVDQU32 Z5, 320(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z6, Z6
	VMOVDQU32 Z6, 384(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z7, Z7
	VMOVDQU32 Z7, 448(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z8, Z8
	VMOVDQU32 Z8, 512(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z9, Z9
	VMOVDQU32 Z9, 576(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z10, Z10
	VMOVDQU32 Z10, 640(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z11, Z11
	VMOVDQU32 Z11, 704(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z12, Z12
	VMOVDQU32 Z12, 768(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z13, Z13
	VMOVDQU32 Z13, 832(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z14, Z14
	VMOVDQU32 Z14, 896(DI)
	VPXORD.BCST q8vnniC80<>(SB), Z15, Z15
	VMOVDQU32 Z15, 960(DI)
	ADDQ $64, SI
	ADDQ $64, R11
	ADDQ $64, R12
	ADDQ $64, R13
	ADDQ $1024, DI
	DECQ CX
	JNZ  q8actt16loop
	VZEROUPPER
	RET

DATA q8vnniC80<>+0(SB)/4, $0x80808080
GLOBL q8vnniC80<>(SB), RODATA|NOPTR, $4
