//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 (BW, VL, VNNI) kernels for Q4_K and Q6_K rows against Q8_K
// activations, several rows per call so the activations, their 16-sums and
// the loop overhead are shared. The integer sums are exact (VPMADDUBSW of
// unsigned weights and signed activations, then VPDPWSSD of those pairs
// with the 16-bit scales), so only their float part has an order, and it is
// qdot.go's: per row and super-block, the products with the scales rounded
// one at a time, added to the row's sum in super-block order.
//
// Two shapes: four rows against one token (decoding; the weights stream
// from memory, so these prefetch) and two rows against four tokens
// (prompts; the 32-row tile is in cache). The integer sums of a super-block
// end in Y0-Y15, as VPHADDD, which reduces them, has only a VEX form.

// KQ4HDR loads the 16-byte headers (d, dmin, 12 bytes of scales and mins) of
// super-block SI of four rows into Z16 (row r in lane r), unpacks their 6-bit
// scales and mins as ggml does into Z17 (lane r: bytes 0-7 the scales, 8-15
// the mins) and converts d and dmin to Y3 = d0, dmin0, d1, dmin1, ...
// Dwords of a lane: A (dword 1) = bytes 0-3, B = 4-7, C = 8-11 of the scales;
// scales 0-3 = A&63, 4-7 = (C&15) | (A>>6)<<4, mins 0-3 = B&63,
// 4-7 = (C>>4) | (B>>6)<<4.
#define KQ4HDR \
	VMOVDQU32    (SI), X16                        \
	VINSERTI32X4 $1, (SI)(R12*1), Z16, Z16        \
	VINSERTI32X4 $2, (SI)(R12*2), Z16, Z16        \
	VINSERTI32X4 $3, (SI)(R13*1), Z16, Z16        \
	VPSHUFD      $0xed, Z16, Z17                  \
	VPSRLVD      kq4UnShift<>(SB), Z17, Z17       \
	VPANDD       kq4UnMask1<>(SB), Z17, Z17       \
	VPSHUFD      $0xa5, Z16, Z18                  \
	VPSRLD       $2, Z18, Z18                     \
	VPANDD       kq4UnMask2<>(SB), Z18, Z18       \
	VPORD        Z18, Z17, Z17                    \
	VPERMD       Z16, Z28, Z18                    \
	VCVTPH2PS    X18, Y3

// KQ4CHUNK is values 64c...64c+63 of row R8's super-block against the
// activations at XM: the chunk's 32 bytes in both halves, the low nibbles
// kept in the lower half and the high ones in the upper (Z30 shifts by 0
// and 4), the scales 2c and 2c+1 from Z19 (the row's unpacked scales in
// every lane), products added into ACC by OP (VPDPWSSD, or VPMADDWD
// to set it).
#define KQ4CHUNK(c, OP, XM, ACC) \
	VBROADCASTI64X4 16+32*c(R8), Z20        \
	VPSRLVW         Z30, Z20, Z20            \
	VPANDD          Z31, Z20, Z20            \
	VPSHUFB         kq4Sc<>+64*c(SB), Z19, Z21 \
	VPMADDUBSW      XM, Z20, Z20             \
	OP              Z21, Z20, ACC

// KQ4ROW is row ROW (lane L of Z17) against one token's super-block: the
// mins times the 16-sums at (BX) in MACC, the products in ACC.
#define KQ4ROW(ROW, L, ACC, MACC) \
	LEAQ       ROW, R8                       \
	VSHUFI32X4 $(L*0x55), Z17, Z17, Z19      \
	VPSHUFB    kq4MinDup<>(SB), Y19, Y22     \
	VPMADDWD   (BX), Y22, MACC               \
	KQ4CHUNK(0, VPMADDWD, (DI), ACC)         \
	KQ4CHUNK(1, VPDPWSSD, 64(DI), ACC)       \
	KQ4CHUNK(2, VPDPWSSD, 128(DI), ACC)      \
	KQ4CHUNK(3, VPDPWSSD, 192(DI), ACC)

// KQFOLD4 reduces Z8-Z11 and Y12-Y15 to Y0 = isum0, msum0, isum1, msum1,
// ... (int32), the integer sums of four rows' super-blocks.
#define KQFOLD4 \
	VEXTRACTI64X4 $1, Z8, Y0        \
	VPADDD        Y0, Y8, Y8        \
	VEXTRACTI64X4 $1, Z9, Y1        \
	VPADDD        Y1, Y9, Y9        \
	VEXTRACTI64X4 $1, Z10, Y0       \
	VPADDD        Y0, Y10, Y10      \
	VEXTRACTI64X4 $1, Z11, Y1       \
	VPADDD        Y1, Y11, Y11      \
	VPHADDD       Y12, Y8, Y8       \
	VPHADDD       Y13, Y9, Y9       \
	VPHADDD       Y14, Y10, Y10     \
	VPHADDD       Y15, Y11, Y11     \
	VPHADDD       Y9, Y8, Y8        \
	VPHADDD       Y11, Y10, Y10     \
	VPERM2I128    $0x20, Y10, Y8, Y0 \
	VPERM2I128    $0x31, Y10, Y8, Y1 \
	VPADDD        Y1, Y0, Y0

// KQ4PF and KQ6PF prefetch the next four super-blocks' worth of weights at
// R11 (8 rows ahead: the four rows of a group are contiguous, so R11 runs
// linearly through them) and advance R11. Without them the four interleaved
// row streams defeat the hardware prefetcher and the kernels read memory at
// half the speed of one row at a time.
#define KQ4PF \
	PREFETCHT0 (R11)     \
	PREFETCHT0 64(R11)   \
	PREFETCHT0 128(R11)  \
	PREFETCHT0 192(R11)  \
	PREFETCHT0 256(R11)  \
	PREFETCHT0 320(R11)  \
	PREFETCHT0 384(R11)  \
	PREFETCHT0 448(R11)  \
	PREFETCHT0 512(R11)  \
	ADDQ       $576, R11

#define KQ6PF \
	PREFETCHT0 (R11)     \
	PREFETCHT0 64(R11)   \
	PREFETCHT0 128(R11)  \
	PREFETCHT0 192(R11)  \
	PREFETCHT0 256(R11)  \
	PREFETCHT0 320(R11)  \
	PREFETCHT0 384(R11)  \
	PREFETCHT0 448(R11)  \
	PREFETCHT0 512(R11)  \
	PREFETCHT0 576(R11)  \
	PREFETCHT0 640(R11)  \
	PREFETCHT0 704(R11)  \
	PREFETCHT0 768(R11)  \
	ADDQ       $840, R11

// func q4KRows4AVX512(w *byte, rowBytes int, groups int, x *int8, xd *float32, dstride int, bs *int16, nsb int, out *float32)
// out[r] = row r (at w + r*rowBytes) times one token, for 4*groups rows;
// dstride is the byte step between the token's super-block scales (its
// 16-sums step 8 times as far).
TEXT ·q4KRows4AVX512(SB), NOSPLIT, $0-72
	MOVQ rowBytes+8(FP), R12
	LEAQ (R12)(R12*2), R13
	MOVQ groups+16(FP), R14
	MOVQ dstride+40(FP), R9
	MOVQ out+64(FP), R15
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64 kq4NibShift<>(SB), Z30
	VMOVDQU64 kq4HdrPerm<>(SB), Z28
	MOVQ w+0(FP), R10
	LEAQ (R10)(R12*8), R11

kq4group:
	MOVQ R10, SI
	MOVQ x+24(FP), DI
	MOVQ xd+32(FP), DX
	MOVQ bs+48(FP), BX
	MOVQ nsb+56(FP), CX
	VXORPS Y7, Y7, Y7

kq4loop:
	KQ4PF
	KQ4HDR
	KQ4ROW((SI), 0, Z8, Y12)
	KQ4ROW((SI)(R12*1), 1, Z9, Y13)
	KQ4ROW((SI)(R12*2), 2, Z10, Y14)
	KQ4ROW((SI)(R13*1), 3, Z11, Y15)
	KQFOLD4
	// sum += (dx*d)*isum - (dx*dmin)*msum, lanes 0, 2, 4, 6.
	VCVTDQ2PS    Y0, Y0
	VBROADCASTSS (DX), Y4
	VMULPS       Y4, Y3, Y3
	VMULPS       Y0, Y3, Y3
	VMOVSHDUP    Y3, Y4
	VSUBPS       Y4, Y3, Y3
	VADDPS       Y3, Y7, Y7

	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (BX)(R9*8), BX
	DECQ CX
	JNZ  kq4loop

	VPMOVQD Y7, X7
	VMOVUPS X7, (R15)
	ADDQ    $16, R15
	LEAQ    (R10)(R12*4), R10
	DECQ    R14
	JNZ     kq4group
	VZEROUPPER
	RET

// KQ6HALF is values 128h...128h+127 of row R8's Q6_K super-block against
// the activations at 128h(DI): ql at 64h, qh at 128+32h (in both halves, Z29
// shifting the upper by 2 so each half's bits 0-1 and 4-5 are the high
// bits of its values), scales from Z16 (the row's 16 scales as int16) by
// the VPERMW indices T0, T1, products added into ACC (the first by OP).
#define KQ6HALF(h, OP, T0, T1, ACC) \
	VMOVDQU64       64*h(R8), Z18            \
	VBROADCASTI64X4 128+32*h(R8), Z19        \
	VPSRLVW         Z29, Z19, Z19            \
	VPSLLW          $4, Z19, Z20             \
	VPANDD          Z27, Z20, Z20            \
	VPANDD          Z27, Z19, Z19            \
	VPANDD          Z31, Z18, Z21            \
	VPORD           Z20, Z21, Z21            \
	VPSRLW          $4, Z18, Z18             \
	VPANDD          Z31, Z18, Z18            \
	VPORD           Z19, Z18, Z18            \
	VPERMW          Z16, T0, Z22             \
	VPERMW          Z16, T1, Z23             \
	VPMADDUBSW      128*h(DI), Z21, Z21      \
	OP              Z22, Z21, ACC            \
	VPMADDUBSW      128*h+64(DI), Z18, Z18   \
	VPDPWSSD        Z23, Z18, ACC

// KQ6ROW is row ROW against one token's super-block. The values are stored
// plus 32: -32 times the scales times the 16-sums at (BX) go in MACC.
#define KQ6ROW(ROW, ACC, MACC) \
	LEAQ       ROW, R8                       \
	VPMOVSXBW  192(R8), Y16                  \
	VPMULLW    kq6M32<>(SB), Y16, Y17        \
	VPMADDWD   (BX), Y17, MACC               \
	KQ6HALF(0, VPMADDWD, Z24, Z25, ACC) \
	KQ6HALF(1, VPDPWSSD, Z26, Z28, ACC)

// KQ6CONST sets the constants of the Q6_K kernels.
#define KQ6CONST \
	MOVL $0x0f0f0f0f, AX                    \
	VPBROADCASTD AX, Z31                    \
	MOVL $0x30303030, AX                    \
	VPBROADCASTD AX, Z27                    \
	VMOVDQU64 kq6QhShift<>(SB), Z29         \
	VMOVDQU64 kq6ScIdx<>+0(SB), Z24         \
	VMOVDQU64 kq6ScIdx<>+64(SB), Z25        \
	VMOVDQU64 kq6ScIdx<>+128(SB), Z26       \
	VMOVDQU64 kq6ScIdx<>+192(SB), Z28

// func q6KRows4AVX512(w *byte, rowBytes int, groups int, x *int8, xd *float32, dstride int, bs *int16, nsb int, out *float32)
// q4KRows4AVX512 for Q6_K rows.
TEXT ·q6KRows4AVX512(SB), NOSPLIT, $0-72
	MOVQ rowBytes+8(FP), R12
	LEAQ (R12)(R12*2), R13
	MOVQ groups+16(FP), R14
	MOVQ dstride+40(FP), R9
	MOVQ out+64(FP), R15
	KQ6CONST
	MOVQ w+0(FP), R10
	LEAQ (R10)(R12*8), R11

kq6group:
	MOVQ R10, SI
	MOVQ x+24(FP), DI
	MOVQ xd+32(FP), DX
	MOVQ bs+48(FP), BX
	MOVQ nsb+56(FP), CX
	VXORPS X7, X7, X7

kq6loop:
	KQ6PF
	KQ6ROW((SI), Z8, Y12)
	KQ6ROW((SI)(R12*1), Z9, Y13)
	KQ6ROW((SI)(R12*2), Z10, Y14)
	KQ6ROW((SI)(R13*1), Z11, Y15)
	// isum of row r = its products plus its -32 part, in lane r of X0.
	VEXTRACTI64X4 $1, Z8, Y0
	VPADDD        Y0, Y8, Y8
	VEXTRACTI64X4 $1, Z9, Y1
	VPADDD        Y1, Y9, Y9
	VEXTRACTI64X4 $1, Z10, Y0
	VPADDD        Y0, Y10, Y10
	VEXTRACTI64X4 $1, Z11, Y1
	VPADDD        Y1, Y11, Y11
	VPADDD        Y12, Y8, Y8
	VPADDD        Y13, Y9, Y9
	VPADDD        Y14, Y10, Y10
	VPADDD        Y15, Y11, Y11
	VPHADDD       Y9, Y8, Y8
	VPHADDD       Y11, Y10, Y10
	VPHADDD       Y10, Y8, Y8
	VEXTRACTI128  $1, Y8, X0
	VPADDD        X0, X8, X0
	VCVTDQ2PS     X0, X0
	// sum += (dx*d)*isum.
	MOVWLZX       208(SI), AX
	VMOVD         AX, X3
	MOVWLZX       208(SI)(R12*1), AX
	VPINSRW       $1, AX, X3, X3
	MOVWLZX       208(SI)(R12*2), AX
	VPINSRW       $2, AX, X3, X3
	MOVWLZX       208(SI)(R13*1), AX
	VPINSRW       $3, AX, X3, X3
	VCVTPH2PS     X3, X3
	VBROADCASTSS  (DX), X4
	VMULPS        X4, X3, X3
	VMULPS        X0, X3, X3
	VADDPS        X3, X7, X7

	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (BX)(R9*8), BX
	DECQ CX
	JNZ  kq6loop

	VMOVUPS X7, (R15)
	ADDQ    $16, R15
	LEAQ    (R10)(R12*4), R10
	DECQ    R14
	JNZ     kq6group
	VZEROUPPER
	RET

// Dword shifts and masks of KQ4HDR (per lane: A, C, B, C>>4 and masks
// 63, 15, 63, 15; then 0, (A>>2)&0x30, 0, (B>>2)&0x30).
DATA kq4UnShift<>+0(SB)/8, $0
DATA kq4UnShift<>+8(SB)/8, $0x0000000400000000
DATA kq4UnShift<>+16(SB)/8, $0
DATA kq4UnShift<>+24(SB)/8, $0x0000000400000000
DATA kq4UnShift<>+32(SB)/8, $0
DATA kq4UnShift<>+40(SB)/8, $0x0000000400000000
DATA kq4UnShift<>+48(SB)/8, $0
DATA kq4UnShift<>+56(SB)/8, $0x0000000400000000
GLOBL kq4UnShift<>(SB), RODATA|NOPTR, $64

DATA kq4UnMask1<>+0(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4UnMask1<>+8(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4UnMask1<>+16(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4UnMask1<>+24(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4UnMask1<>+32(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4UnMask1<>+40(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4UnMask1<>+48(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4UnMask1<>+56(SB)/8, $0x0f0f0f0f3f3f3f3f
GLOBL kq4UnMask1<>(SB), RODATA|NOPTR, $64

DATA kq4UnMask2<>+0(SB)/8, $0x3030303000000000
DATA kq4UnMask2<>+8(SB)/8, $0x3030303000000000
DATA kq4UnMask2<>+16(SB)/8, $0x3030303000000000
DATA kq4UnMask2<>+24(SB)/8, $0x3030303000000000
DATA kq4UnMask2<>+32(SB)/8, $0x3030303000000000
DATA kq4UnMask2<>+40(SB)/8, $0x3030303000000000
DATA kq4UnMask2<>+48(SB)/8, $0x3030303000000000
DATA kq4UnMask2<>+56(SB)/8, $0x3030303000000000
GLOBL kq4UnMask2<>(SB), RODATA|NOPTR, $64

// VPERMD indices: dword 0 (d, dmin) of each lane into dwords 0-3.
DATA kq4HdrPerm<>+0(SB)/8, $0x0000000400000000
DATA kq4HdrPerm<>+8(SB)/8, $0x0000000c00000008
DATA kq4HdrPerm<>+16(SB)/8, $0
DATA kq4HdrPerm<>+24(SB)/8, $0
DATA kq4HdrPerm<>+32(SB)/8, $0
DATA kq4HdrPerm<>+40(SB)/8, $0
DATA kq4HdrPerm<>+48(SB)/8, $0
DATA kq4HdrPerm<>+56(SB)/8, $0
GLOBL kq4HdrPerm<>(SB), RODATA|NOPTR, $64

// Word shifts: 0 for the lower half, 4 for the upper.
DATA kq4NibShift<>+0(SB)/8, $0
DATA kq4NibShift<>+8(SB)/8, $0
DATA kq4NibShift<>+16(SB)/8, $0
DATA kq4NibShift<>+24(SB)/8, $0
DATA kq4NibShift<>+32(SB)/8, $0x0004000400040004
DATA kq4NibShift<>+40(SB)/8, $0x0004000400040004
DATA kq4NibShift<>+48(SB)/8, $0x0004000400040004
DATA kq4NibShift<>+56(SB)/8, $0x0004000400040004
GLOBL kq4NibShift<>(SB), RODATA|NOPTR, $64

// VPSHUFB tables: scale 2c (as int16) in the lower half, 2c+1 in the upper.
DATA kq4Sc<>+0(SB)/8, $0x8000800080008000
DATA kq4Sc<>+8(SB)/8, $0x8000800080008000
DATA kq4Sc<>+16(SB)/8, $0x8000800080008000
DATA kq4Sc<>+24(SB)/8, $0x8000800080008000
DATA kq4Sc<>+32(SB)/8, $0x8001800180018001
DATA kq4Sc<>+40(SB)/8, $0x8001800180018001
DATA kq4Sc<>+48(SB)/8, $0x8001800180018001
DATA kq4Sc<>+56(SB)/8, $0x8001800180018001
DATA kq4Sc<>+64(SB)/8, $0x8002800280028002
DATA kq4Sc<>+72(SB)/8, $0x8002800280028002
DATA kq4Sc<>+80(SB)/8, $0x8002800280028002
DATA kq4Sc<>+88(SB)/8, $0x8002800280028002
DATA kq4Sc<>+96(SB)/8, $0x8003800380038003
DATA kq4Sc<>+104(SB)/8, $0x8003800380038003
DATA kq4Sc<>+112(SB)/8, $0x8003800380038003
DATA kq4Sc<>+120(SB)/8, $0x8003800380038003
DATA kq4Sc<>+128(SB)/8, $0x8004800480048004
DATA kq4Sc<>+136(SB)/8, $0x8004800480048004
DATA kq4Sc<>+144(SB)/8, $0x8004800480048004
DATA kq4Sc<>+152(SB)/8, $0x8004800480048004
DATA kq4Sc<>+160(SB)/8, $0x8005800580058005
DATA kq4Sc<>+168(SB)/8, $0x8005800580058005
DATA kq4Sc<>+176(SB)/8, $0x8005800580058005
DATA kq4Sc<>+184(SB)/8, $0x8005800580058005
DATA kq4Sc<>+192(SB)/8, $0x8006800680068006
DATA kq4Sc<>+200(SB)/8, $0x8006800680068006
DATA kq4Sc<>+208(SB)/8, $0x8006800680068006
DATA kq4Sc<>+216(SB)/8, $0x8006800680068006
DATA kq4Sc<>+224(SB)/8, $0x8007800780078007
DATA kq4Sc<>+232(SB)/8, $0x8007800780078007
DATA kq4Sc<>+240(SB)/8, $0x8007800780078007
DATA kq4Sc<>+248(SB)/8, $0x8007800780078007
GLOBL kq4Sc<>(SB), RODATA|NOPTR, $256

// VPSHUFB table: each min (bytes 8-15) as int16, twice, for the 16-sums.
DATA kq4MinDup<>+0(SB)/8, $0x8009800980088008
DATA kq4MinDup<>+8(SB)/8, $0x800b800b800a800a
DATA kq4MinDup<>+16(SB)/8, $0x800d800d800c800c
DATA kq4MinDup<>+24(SB)/8, $0x800f800f800e800e
GLOBL kq4MinDup<>(SB), RODATA|NOPTR, $32

// Word shifts: 0 for the lower half, 2 for the upper.
DATA kq6QhShift<>+0(SB)/8, $0
DATA kq6QhShift<>+8(SB)/8, $0
DATA kq6QhShift<>+16(SB)/8, $0
DATA kq6QhShift<>+24(SB)/8, $0
DATA kq6QhShift<>+32(SB)/8, $0x0002000200020002
DATA kq6QhShift<>+40(SB)/8, $0x0002000200020002
DATA kq6QhShift<>+48(SB)/8, $0x0002000200020002
DATA kq6QhShift<>+56(SB)/8, $0x0002000200020002
GLOBL kq6QhShift<>(SB), RODATA|NOPTR, $64

// VPERMW indices: register k's lane j is scale 4k+j.
DATA kq6ScIdx<>+0(SB)/8, $0x0000000000000000
DATA kq6ScIdx<>+8(SB)/8, $0x0000000000000000
DATA kq6ScIdx<>+16(SB)/8, $0x0001000100010001
DATA kq6ScIdx<>+24(SB)/8, $0x0001000100010001
DATA kq6ScIdx<>+32(SB)/8, $0x0002000200020002
DATA kq6ScIdx<>+40(SB)/8, $0x0002000200020002
DATA kq6ScIdx<>+48(SB)/8, $0x0003000300030003
DATA kq6ScIdx<>+56(SB)/8, $0x0003000300030003
DATA kq6ScIdx<>+64(SB)/8, $0x0004000400040004
DATA kq6ScIdx<>+72(SB)/8, $0x0004000400040004
DATA kq6ScIdx<>+80(SB)/8, $0x0005000500050005
DATA kq6ScIdx<>+88(SB)/8, $0x0005000500050005
DATA kq6ScIdx<>+96(SB)/8, $0x0006000600060006
DATA kq6ScIdx<>+104(SB)/8, $0x0006000600060006
DATA kq6ScIdx<>+112(SB)/8, $0x0007000700070007
DATA kq6ScIdx<>+120(SB)/8, $0x0007000700070007
DATA kq6ScIdx<>+128(SB)/8, $0x0008000800080008
DATA kq6ScIdx<>+136(SB)/8, $0x0008000800080008
DATA kq6ScIdx<>+144(SB)/8, $0x0009000900090009
DATA kq6ScIdx<>+152(SB)/8, $0x0009000900090009
DATA kq6ScIdx<>+160(SB)/8, $0x000a000a000a000a
DATA kq6ScIdx<>+168(SB)/8, $0x000a000a000a000a
DATA kq6ScIdx<>+176(SB)/8, $0x000b000b000b000b
DATA kq6ScIdx<>+184(SB)/8, $0x000b000b000b000b
DATA kq6ScIdx<>+192(SB)/8, $0x000c000c000c000c
DATA kq6ScIdx<>+200(SB)/8, $0x000c000c000c000c
DATA kq6ScIdx<>+208(SB)/8, $0x000d000d000d000d
DATA kq6ScIdx<>+216(SB)/8, $0x000d000d000d000d
DATA kq6ScIdx<>+224(SB)/8, $0x000e000e000e000e
DATA kq6ScIdx<>+232(SB)/8, $0x000e000e000e000e
DATA kq6ScIdx<>+240(SB)/8, $0x000f000f000f000f
DATA kq6ScIdx<>+248(SB)/8, $0x000f000f000f000f
GLOBL kq6ScIdx<>(SB), RODATA|NOPTR, $256

DATA kq6M32<>+0(SB)/8, $0xffe0ffe0ffe0ffe0
DATA kq6M32<>+8(SB)/8, $0xffe0ffe0ffe0ffe0
DATA kq6M32<>+16(SB)/8, $0xffe0ffe0ffe0ffe0
DATA kq6M32<>+24(SB)/8, $0xffe0ffe0ffe0ffe0
GLOBL kq6M32<>(SB), RODATA|NOPTR, $32

// The two-row, four-token kernels keep the 16 integer accumulators of one
// super-block in Z16-Z23 (row r, token t: Z16+4r+t) and Y8-Y15 (the mins or
// the -32 parts, Y8+4r+t); the four tokens' activations are at (DI),
// (DI)(R8*1), (DI)(R8*2), (DI)(R10*1), their 16-sums 32 bytes apart at
// (BX), their scales 4 bytes apart at (DX).

// KQFOLD2X4 sets Yp (p = 4r+t) to the lower plus the upper half of Z16+p.
#define KQFOLD2X4 \
	VEXTRACTI64X4 $1, Z16, Y0 \
	VPADDD        Y16, Y0, Y0 \
	VEXTRACTI64X4 $1, Z17, Y1 \
	VPADDD        Y17, Y1, Y1 \
	VEXTRACTI64X4 $1, Z18, Y2 \
	VPADDD        Y18, Y2, Y2 \
	VEXTRACTI64X4 $1, Z19, Y3 \
	VPADDD        Y19, Y3, Y3 \
	VEXTRACTI64X4 $1, Z20, Y4 \
	VPADDD        Y20, Y4, Y4 \
	VEXTRACTI64X4 $1, Z21, Y5 \
	VPADDD        Y21, Y5, Y5 \
	VEXTRACTI64X4 $1, Z22, Y6 \
	VPADDD        Y22, Y6, Y6 \
	VEXTRACTI64X4 $1, Z23, Y7 \
	VPADDD        Y23, Y7, Y7

// KQ4C2X4 is chunk c of row R13 (its scales in every lane of Z27) against
// the four tokens, into Z16+4r... by OP (VPDPWSSD, or VPMADDWD to set).
#define KQ4C2X4(c, OP, A0, A1, A2, A3) \
	VBROADCASTI64X4 16+32*c(R13), Z28          \
	VPSRLVW         Z30, Z28, Z28              \
	VPANDD          Z31, Z28, Z28              \
	VPSHUFB         kq4Sc<>+64*c(SB), Z27, Z24 \
	VPMADDUBSW      64*c(DI), Z28, Z0          \
	OP              Z24, Z0, A0                \
	VPMADDUBSW      64*c(DI)(R8*1), Z28, Z1    \
	OP              Z24, Z1, A1                \
	VPMADDUBSW      64*c(DI)(R8*2), Z28, Z2    \
	OP              Z24, Z2, A2                \
	VPMADDUBSW      64*c(DI)(R10*1), Z28, Z3   \
	OP              Z24, Z3, A3

// KQ4R2X4 is row R13 (lane L of Z25) against the four tokens.
#define KQ4R2X4(L, A0, A1, A2, A3, M0, M1, M2, M3) \
	VSHUFI32X4 $(L*0x55), Z25, Z25, Z27  \
	VPSHUFB    kq4MinDup<>(SB), Y27, Y4  \
	VPMADDWD   (BX), Y4, M0              \
	VPMADDWD   32(BX), Y4, M1            \
	VPMADDWD   64(BX), Y4, M2            \
	VPMADDWD   96(BX), Y4, M3            \
	KQ4C2X4(0, VPMADDWD, A0, A1, A2, A3) \
	KQ4C2X4(1, VPDPWSSD, A0, A1, A2, A3) \
	KQ4C2X4(2, VPDPWSSD, A0, A1, A2, A3) \
	KQ4C2X4(3, VPDPWSSD, A0, A1, A2, A3)

// KQ4F2X4 adds row OFF's (dx*d)*isum - (dx*dmin)*msum for the four tokens
// (Y2 = their dx, each twice) to ACC (lanes 0, 2, 4, 6), the sums in V.
#define KQ4F2X4(OFF, V, ACC) \
	VCVTDQ2PS    V, V          \
	VPBROADCASTD OFF, X3       \
	VCVTPH2PS    X3, Y3        \
	VMULPS       Y2, Y3, Y3    \
	VMULPS       V, Y3, Y3     \
	VMOVSHDUP    Y3, Y4        \
	VSUBPS       Y4, Y3, Y3    \
	VADDPS       Y3, ACC, ACC

// KQSTORE2X4 stores row 0's four tokens (lanes 0-3 of X0) and row 1's (X1)
// at out (R15) + 4r + t*ostride and advances R15 by two rows.
#define KQSTORE2X4 \
	MOVQ       ostride+80(FP), AX       \
	LEAQ       (AX)(AX*2), R13          \
	VMOVSS     X0, (R15)                \
	VEXTRACTPS $1, X0, (R15)(AX*1)      \
	VEXTRACTPS $2, X0, (R15)(AX*2)      \
	VEXTRACTPS $3, X0, (R15)(R13*1)     \
	VMOVSS     X1, 4(R15)               \
	VEXTRACTPS $1, X1, 4(R15)(AX*1)     \
	VEXTRACTPS $2, X1, 4(R15)(AX*2)     \
	VEXTRACTPS $3, X1, 4(R15)(R13*1)    \
	ADDQ       $8, R15

// func q4KRows2x4AVX512(w *byte, rowBytes int, pairs int, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *float32, ostride int)
// Rows 2p and 2p+1 (at w + r*rowBytes) times tokens x, x+xstride, ... (their
// scales and 16-sums following token 0's, block-major, dstride bytes between
// super-blocks) into out + (2p+r)*4 + t*ostride bytes, for pairs p.
TEXT ·q4KRows2x4AVX512(SB), NOSPLIT, $0-88
	MOVQ rowBytes+8(FP), R12
	MOVQ pairs+16(FP), R14
	MOVQ xstride+32(FP), R8
	LEAQ (R8)(R8*2), R10
	MOVQ dstride+48(FP), R9
	MOVQ out+72(FP), R15
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	VMOVDQU64 kq4NibShift<>(SB), Z30
	MOVQ w+0(FP), R11

kq42x4pair:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ xd+40(FP), DX
	MOVQ bs+56(FP), BX
	MOVQ nsb+64(FP), CX
	VPXORD Z26, Z26, Z26
	VPXORD Z29, Z29, Z29

kq42x4loop:
	VMOVDQU32    (SI), X24
	VINSERTI32X4 $1, (SI)(R12*1), Y24, Y24
	VPSHUFD      $0xed, Z24, Z25
	VPSRLVD      kq4UnShift<>(SB), Z25, Z25
	VPANDD       kq4UnMask1<>(SB), Z25, Z25
	VPSHUFD      $0xa5, Z24, Z27
	VPSRLD       $2, Z27, Z27
	VPANDD       kq4UnMask2<>(SB), Z27, Z27
	VPORD        Z27, Z25, Z25
	MOVQ         SI, R13
	KQ4R2X4(0, Z16, Z17, Z18, Z19, Y8, Y9, Y10, Y11)
	LEAQ         (SI)(R12*1), R13
	KQ4R2X4(1, Z20, Z21, Z22, Z23, Y12, Y13, Y14, Y15)
	KQFOLD2X4
	VPHADDD      Y8, Y0, Y0
	VPHADDD      Y9, Y1, Y1
	VPHADDD      Y10, Y2, Y2
	VPHADDD      Y11, Y3, Y3
	VPHADDD      Y12, Y4, Y4
	VPHADDD      Y13, Y5, Y5
	VPHADDD      Y14, Y6, Y6
	VPHADDD      Y15, Y7, Y7
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y7, Y6, Y6
	VPERM2I128   $0x20, Y2, Y0, Y1
	VPERM2I128   $0x31, Y2, Y0, Y3
	VPADDD       Y3, Y1, Y1
	VPERM2I128   $0x20, Y6, Y4, Y5
	VPERM2I128   $0x31, Y6, Y4, Y7
	VPADDD       Y7, Y5, Y5
	VMOVUPS      (DX), X2
	VMOVDQU      kq4DxDup<>(SB), Y0
	VPERMPS      Y2, Y0, Y2
	KQ4F2X4((SI), Y1, Y26)
	KQ4F2X4((SI)(R12*1), Y5, Y29)

	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (BX)(R9*8), BX
	DECQ CX
	JNZ  kq42x4loop

	VPMOVQD Y26, X0
	VPMOVQD Y29, X1
	KQSTORE2X4
	LEAQ    (R11)(R12*2), R11
	DECQ    R14
	JNZ     kq42x4pair
	VZEROUPPER
	RET

DATA kq4DxDup<>+0(SB)/8, $0x0000000000000000
DATA kq4DxDup<>+8(SB)/8, $0x0000000100000001
DATA kq4DxDup<>+16(SB)/8, $0x0000000200000002
DATA kq4DxDup<>+24(SB)/8, $0x0000000300000003
GLOBL kq4DxDup<>(SB), RODATA|NOPTR, $32

// KQ6H2X4 is half h of row R13's Q6_K super-block (its scales as int16 in
// Z0) against the four tokens, into A0...A3 (the first products by OP);
// T0, T1 the VPERMW indices.
#define KQ6H2X4(h, OP, T0, T1, A0, A1, A2, A3) \
	VMOVDQU64       64*h(R13), Z2                  \
	VBROADCASTI64X4 128+32*h(R13), Z3              \
	VPSRLVW         kq6QhShift<>(SB), Z3, Z3       \
	VPSLLW          $4, Z3, Z4                     \
	VPANDD          kq6Mask30<>(SB), Z4, Z4        \
	VPANDD          kq6Mask30<>(SB), Z3, Z3        \
	VPANDD          kq6Mask0f<>(SB), Z2, Z5        \
	VPORD           Z4, Z5, Z5                     \
	VPSRLW          $4, Z2, Z2                     \
	VPANDD          kq6Mask0f<>(SB), Z2, Z2        \
	VPORD           Z3, Z2, Z2                     \
	VPERMW          Z0, T0, Z6                     \
	VPERMW          Z0, T1, Z7                     \
	VPMADDUBSW      128*h(DI), Z5, Z24             \
	OP              Z6, Z24, A0                    \
	VPMADDUBSW      128*h(DI)(R8*1), Z5, Z25       \
	OP              Z6, Z25, A1                    \
	VPMADDUBSW      128*h(DI)(R8*2), Z5, Z24       \
	OP              Z6, Z24, A2                    \
	VPMADDUBSW      128*h(DI)(R10*1), Z5, Z25      \
	OP              Z6, Z25, A3                    \
	VPMADDUBSW      128*h+64(DI), Z2, Z24          \
	VPDPWSSD        Z7, Z24, A0                    \
	VPMADDUBSW      128*h+64(DI)(R8*1), Z2, Z25    \
	VPDPWSSD        Z7, Z25, A1                    \
	VPMADDUBSW      128*h+64(DI)(R8*2), Z2, Z24    \
	VPDPWSSD        Z7, Z24, A2                    \
	VPMADDUBSW      128*h+64(DI)(R10*1), Z2, Z25   \
	VPDPWSSD        Z7, Z25, A3

// KQ6R2X4 is row R13 against the four tokens; -32 times its scales times
// the tokens' 16-sums go into M0...M3.
#define KQ6R2X4(A0, A1, A2, A3, M0, M1, M2, M3) \
	VPMOVSXBW  192(R13), Y0                   \
	VPMULLW    kq6M32<>(SB), Y0, Y1           \
	VPMADDWD   (BX), Y1, M0                   \
	VPMADDWD   32(BX), Y1, M1                 \
	VPMADDWD   64(BX), Y1, M2                 \
	VPMADDWD   96(BX), Y1, M3                 \
	KQ6H2X4(0, VPMADDWD, Z28, Z29, A0, A1, A2, A3) \
	KQ6H2X4(1, VPDPWSSD, Z30, Z31, A0, A1, A2, A3)

// KQ6F2X4 adds row OFF's (dx*d)*isum for the four tokens (X2 their dx) to
// ACC, the sums in X.
#define KQ6F2X4(OFF, X, ACC) \
	VCVTDQ2PS    X, X          \
	VPBROADCASTW OFF, X3       \
	VCVTPH2PS    X3, X3        \
	VMULPS       X2, X3, X3    \
	VMULPS       X, X3, X3     \
	VADDPS       X3, ACC, ACC

// func q6KRows2x4AVX512(w *byte, rowBytes int, pairs int, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *float32, ostride int)
// q4KRows2x4AVX512 for Q6_K rows.
TEXT ·q6KRows2x4AVX512(SB), NOSPLIT, $0-88
	MOVQ rowBytes+8(FP), R12
	MOVQ pairs+16(FP), R14
	MOVQ xstride+32(FP), R8
	LEAQ (R8)(R8*2), R10
	MOVQ dstride+48(FP), R9
	MOVQ out+72(FP), R15
	VMOVDQU64 kq6ScIdx<>+0(SB), Z28
	VMOVDQU64 kq6ScIdx<>+64(SB), Z29
	VMOVDQU64 kq6ScIdx<>+128(SB), Z30
	VMOVDQU64 kq6ScIdx<>+192(SB), Z31
	MOVQ w+0(FP), R11

kq62x4pair:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ xd+40(FP), DX
	MOVQ bs+56(FP), BX
	MOVQ nsb+64(FP), CX
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27

kq62x4loop:
	MOVQ         SI, R13
	KQ6R2X4(Z16, Z17, Z18, Z19, Y8, Y9, Y10, Y11)
	LEAQ         (SI)(R12*1), R13
	KQ6R2X4(Z20, Z21, Z22, Z23, Y12, Y13, Y14, Y15)
	KQFOLD2X4
	VPADDD       Y8, Y0, Y0
	VPADDD       Y9, Y1, Y1
	VPADDD       Y10, Y2, Y2
	VPADDD       Y11, Y3, Y3
	VPADDD       Y12, Y4, Y4
	VPADDD       Y13, Y5, Y5
	VPADDD       Y14, Y6, Y6
	VPADDD       Y15, Y7, Y7
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y7, Y6, Y6
	VPHADDD      Y2, Y0, Y0
	VPHADDD      Y6, Y4, Y4
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VEXTRACTI128 $1, Y4, X5
	VPADDD       X5, X4, X4
	VMOVUPS      (DX), X2
	KQ6F2X4(208(SI), X0, X26)
	KQ6F2X4(208(SI)(R12*1), X4, X27)

	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (BX)(R9*8), BX
	DECQ CX
	JNZ  kq62x4loop

	VMOVAPS X26, X0
	VMOVAPS X27, X1
	KQSTORE2X4
	LEAQ    (R11)(R12*2), R11
	DECQ    R14
	JNZ     kq62x4pair
	VZEROUPPER
	RET

DATA kq6Mask0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kq6Mask0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kq6Mask0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kq6Mask0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kq6Mask0f<>+32(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kq6Mask0f<>+40(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kq6Mask0f<>+48(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kq6Mask0f<>+56(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kq6Mask0f<>(SB), RODATA|NOPTR, $64

DATA kq6Mask30<>+0(SB)/8, $0x3030303030303030
DATA kq6Mask30<>+8(SB)/8, $0x3030303030303030
DATA kq6Mask30<>+16(SB)/8, $0x3030303030303030
DATA kq6Mask30<>+24(SB)/8, $0x3030303030303030
DATA kq6Mask30<>+32(SB)/8, $0x3030303030303030
DATA kq6Mask30<>+40(SB)/8, $0x3030303030303030
DATA kq6Mask30<>+48(SB)/8, $0x3030303030303030
DATA kq6Mask30<>+56(SB)/8, $0x3030303030303030
GLOBL kq6Mask30<>(SB), RODATA|NOPTR, $64
