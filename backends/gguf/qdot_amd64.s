//go:build amd64 && !purego

#include "textflag.h"

// Integer kernels for Q8_0 x Q8_0, Q4_K x Q8_K and Q6_K x Q8_K (see qdot.go
// for the order of the float arithmetic, which the portable loops repeat).
// Products of unsigned and signed bytes are VPMADDUBSW (Q8_0 weights made
// unsigned by VPABSB, their sign moved to the activations by VPSIGNB, as
// ggml does), pairs of those summed by VPMADDWD.

// Q8B4 is block k of a 4-token group: the four tokens' block sums into X2,
// then ACC += (dw*dx) * float(sums).
#define Q8B4(woff, xoff, ACC) \
	VMOVDQU    woff+2(SI), Y0         \
	VPABSB     Y0, Y1                 \
	VMOVDQU    xoff(DI), Y2           \
	VMOVDQU    xoff(DI)(R8*1), Y3     \
	VMOVDQU    xoff(DI)(R8*2), Y4     \
	VMOVDQU    xoff(DI)(R10*1), Y5    \
	VPSIGNB    Y0, Y2, Y2             \
	VPSIGNB    Y0, Y3, Y3             \
	VPSIGNB    Y0, Y4, Y4             \
	VPSIGNB    Y0, Y5, Y5             \
	VPMADDUBSW Y2, Y1, Y2             \
	VPMADDUBSW Y3, Y1, Y3             \
	VPMADDUBSW Y4, Y1, Y4             \
	VPMADDUBSW Y5, Y1, Y5             \
	VPMADDWD   Y15, Y2, Y2            \
	VPMADDWD   Y15, Y3, Y3            \
	VPMADDWD   Y15, Y4, Y4            \
	VPMADDWD   Y15, Y5, Y5            \
	VPHADDD    Y3, Y2, Y2             \
	VPHADDD    Y5, Y4, Y4             \
	VPHADDD    Y4, Y2, Y2             \
	VEXTRACTI128 $1, Y2, X3           \
	VPADDD     X3, X2, X2             \
	VCVTDQ2PS  X2, X2                 \
	MOVWLZX    woff(SI), AX           \
	VMOVD      AX, X6                 \
	VCVTPH2PS  X6, X6                 \
	VBROADCASTSS X6, X6               \
	VMULPS     (DX), X6, X6           \
	ADDQ       R9, DX                 \
	VMULPS     X2, X6, X6             \
	VADDPS     X6, ACC, ACC

// func q8Dot4AVX2(w *byte, x *int8, xstride int, xd *float32, dstride int, nb int, acc *[16]float32)
// Four tokens (x, x+xstride, ...) against one Q8_0 row; nb is a multiple of 4;
// acc[4*k+t] is token t's accumulator k.
TEXT ·q8Dot4AVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xstride+16(FP), R8
	MOVQ xd+24(FP), DX
	MOVQ dstride+32(FP), R9
	MOVQ nb+40(FP), CX
	MOVQ acc+48(FP), R11
	LEAQ (R8)(R8*2), R10
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	VXORPS   X8, X8, X8
	VXORPS   X9, X9, X9
	VXORPS   X10, X10, X10
	VXORPS   X11, X11, X11
	SHRQ     $2, CX

q8d4loop:
	Q8B4(0, 0, X8)
	Q8B4(34, 32, X9)
	Q8B4(68, 64, X10)
	Q8B4(102, 96, X11)
	ADDQ $136, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  q8d4loop

	VMOVUPS X8, (R11)
	VMOVUPS X9, 16(R11)
	VMOVUPS X10, 32(R11)
	VMOVUPS X11, 48(R11)
	VZEROUPPER
	RET

// Q8TOK2 is token XM (an address) against the two rows' blocks: products
// with row 0 into P0, row 1 into P1.
#define Q8TOK2(XM, P0, P1) \
	VMOVDQU    XM, Y2          \
	VPSIGNB    Y0, Y2, P0      \
	VPSIGNB    Y1, Y2, P1      \
	VPMADDUBSW P0, Y12, P0     \
	VPMADDUBSW P1, Y13, P1     \
	VPMADDWD   Y15, P0, P0     \
	VPMADDWD   Y15, P1, P1

// Q8B2X4 is one block of two rows (SI, SI+R12) against four tokens, added
// into ACC: lanes 0-3 row 0's tokens, 4-7 row 1's.
#define Q8B2X4(woff, xoff, ACC) \
	VMOVDQU    woff+2(SI), Y0                \
	VMOVDQU    woff+2(SI)(R12*1), Y1         \
	VPABSB     Y0, Y12                       \
	VPABSB     Y1, Y13                       \
	Q8TOK2(xoff(DI), Y4, Y8)                 \
	Q8TOK2(xoff(DI)(R8*1), Y5, Y9)           \
	Q8TOK2(xoff(DI)(R8*2), Y6, Y10)          \
	Q8TOK2(xoff(DI)(R10*1), Y7, Y11)         \
	VPHADDD    Y5, Y4, Y4                    \
	VPHADDD    Y7, Y6, Y6                    \
	VPHADDD    Y9, Y8, Y8                    \
	VPHADDD    Y11, Y10, Y10                 \
	VPHADDD    Y6, Y4, Y4                    \
	VPHADDD    Y10, Y8, Y8                   \
	VPERM2I128 $0x20, Y8, Y4, Y5             \
	VPERM2I128 $0x31, Y8, Y4, Y6             \
	VPADDD     Y6, Y5, Y5                    \
	VCVTDQ2PS  Y5, Y5                        \
	MOVWLZX    woff(SI), AX                  \
	MOVWLZX    woff(SI)(R12*1), R13          \
	VMOVD      AX, X6                        \
	VPINSRW    $1, R13, X6, X6               \
	VCVTPH2PS  X6, X6                        \
	VPERMPS    Y6, Y14, Y6                   \
	VBROADCASTF128 (DX), Y7                  \
	ADDQ       R9, DX                        \
	VMULPS     Y7, Y6, Y6                    \
	VMULPS     Y5, Y6, Y6                    \
	VADDPS     Y6, ACC, ACC

// func q8Dot2x4AVX2(w *byte, rowBytes int, x *int8, xstride int, xd *float32, dstride int, nb int, acc *[32]float32, sum int)
// Two Q8_0 rows (w, w+rowBytes) against four tokens; nb is a multiple of 4;
// acc[8*k+4*r+t] is row r's, token t's accumulator k, or with sum != 0
// acc[4*r+t] their total (acc0+acc1)+(acc2+acc3). The accumulators are the
// AVX-512 registers Y16-Y19 (this kernel needs AVX512VL).
TEXT ·q8Dot2x4AVX2(SB), NOSPLIT, $0-72
	MOVQ w+0(FP), SI
	MOVQ rowBytes+8(FP), R12
	MOVQ x+16(FP), DI
	MOVQ xstride+24(FP), R8
	MOVQ xd+32(FP), DX
	MOVQ dstride+40(FP), R9
	MOVQ nb+48(FP), CX
	MOVQ acc+56(FP), R11
	LEAQ (R8)(R8*2), R10
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	VMOVDQU  q8Pairs<>(SB), Y14
	VXORPS   Y16, Y16, Y16
	VXORPS   Y17, Y17, Y17
	VXORPS   Y18, Y18, Y18
	VXORPS   Y19, Y19, Y19
	SHRQ     $2, CX

q8d2x4loop:
	Q8B2X4(0, 0, Y16)
	Q8B2X4(34, 32, Y17)
	Q8B2X4(68, 64, Y18)
	Q8B2X4(102, 96, Y19)
	ADDQ $136, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  q8d2x4loop

	MOVQ sum+64(FP), AX
	TESTQ AX, AX
	JZ   q8d2x4acc
	VADDPS  Y17, Y16, Y16
	VADDPS  Y19, Y18, Y18
	VADDPS  Y18, Y16, Y16
	VMOVUPS Y16, (R11)
	VZEROUPPER
	RET

q8d2x4acc:
	VMOVUPS Y16, (R11)
	VMOVUPS Y17, 32(R11)
	VMOVUPS Y18, 64(R11)
	VMOVUPS Y19, 96(R11)
	VZEROUPPER
	RET

DATA q8Pairs<>+0(SB)/8, $0
DATA q8Pairs<>+8(SB)/8, $0
DATA q8Pairs<>+16(SB)/8, $0x0000000100000001
DATA q8Pairs<>+24(SB)/8, $0x0000000100000001
GLOBL q8Pairs<>(SB), RODATA|NOPTR, $32

// Q8B1 is block k of one token's group of four blocks: its sum vector into Yk.
#define Q8B1(woff, xoff, YK) \
	VMOVDQU    woff+2(SI), Y0 \
	VMOVDQU    xoff(DI), YK   \
	VPSIGNB    Y0, YK, YK     \
	VPABSB     Y0, Y0         \
	VPMADDUBSW YK, Y0, YK     \
	VPMADDWD   Y15, YK, YK

// func q8Dot1AVX2(w *byte, x *int8, xd *float32, dstride int, nb int, acc *[4]float32)
// One token against one Q8_0 row; nb is a multiple of 4; acc[k] is
// accumulator k.
TEXT ·q8Dot1AVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xd+16(FP), DX
	MOVQ dstride+24(FP), R9
	MOVQ nb+32(FP), CX
	MOVQ acc+40(FP), R11
	LEAQ (R9)(R9*2), R10
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	VXORPS   X8, X8, X8
	SHRQ     $2, CX

q8d1loop:
	Q8B1(0, 0, Y2)
	Q8B1(34, 32, Y3)
	Q8B1(68, 64, Y4)
	Q8B1(102, 96, Y5)
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y4, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPADDD       X3, X2, X2
	VCVTDQ2PS    X2, X2
	MOVWLZX      0(SI), AX
	MOVWLZX      34(SI), BX
	MOVWLZX      68(SI), R12
	MOVWLZX      102(SI), R13
	VMOVD        AX, X6
	VPINSRW      $1, BX, X6, X6
	VPINSRW      $2, R12, X6, X6
	VPINSRW      $3, R13, X6, X6
	VCVTPH2PS    X6, X6
	VMOVSS       (DX), X7
	VINSERTPS    $0x10, (DX)(R9*1), X7, X7
	VINSERTPS    $0x20, (DX)(R9*2), X7, X7
	VINSERTPS    $0x30, (DX)(R10*1), X7, X7
	VMULPS       X7, X6, X6
	VMULPS       X2, X6, X6
	VADDPS       X6, X8, X8
	LEAQ         (DX)(R9*4), DX
	ADDQ         $136, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          q8d1loop

	VMOVUPS X8, (R11)
	VZEROUPPER
	RET

// Q4KCHUNK is 64 values j of a Q4_K super-block: low nibbles (scale k) and
// high nibbles (scale k+1) against the activations, added into Y2.
#define Q4KCHUNK(j, k) \
	VMOVDQU    16+32*j(SI), Y3          \
	VPSRLW     $4, Y3, Y4               \
	VPAND      Y15, Y3, Y3              \
	VPAND      Y15, Y4, Y4              \
	VPMADDUBSW 64*j(DI), Y3, Y3         \
	VPMADDUBSW 64*j+32(DI), Y4, Y4      \
	VPSHUFB    q4kScale<>+32*k(SB), Y0, Y5 \
	VPSHUFB    q4kScale<>+32*k+32(SB), Y0, Y6 \
	VPMADDWD   Y5, Y3, Y3               \
	VPMADDWD   Y6, Y4, Y4               \
	VPADDD     Y3, Y2, Y2               \
	VPADDD     Y4, Y2, Y2

// func q4KDotAVX2(w *byte, x *int8, xd *float32, dstride int, bs *int16, nsb int) float32
TEXT ·q4KDotAVX2(SB), NOSPLIT, $0-52
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xd+16(FP), DX
	MOVQ dstride+24(FP), R9
	MOVQ bs+32(FP), R8
	MOVQ nsb+40(FP), CX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS X14, X14, X14
	VMOVDQU q4kMinDup<>(SB), Y13

q4kloop:
	// The 12 bytes of 6-bit scales and mins as ggml unpacks them: bytes
	// 0-7 the scales, 8-15 the mins.
	MOVL 4(SI), AX
	MOVL 8(SI), BX
	MOVL 12(SI), R10
	MOVL R10, R11
	SHRL $4, R11
	ANDL $0x0f0f0f0f, R11
	MOVL BX, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL  R12, R11
	MOVL BX, R13
	ANDL $0x3f3f3f3f, R13
	MOVL R10, BX
	ANDL $0x0f0f0f0f, BX
	MOVL AX, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL  R12, BX
	ANDL $0x3f3f3f3f, AX
	VMOVD   AX, X0
	VPINSRD $1, BX, X0, X0
	VPINSRD $2, R13, X0, X0
	VPINSRD $3, R11, X0, X0
	VINSERTI128 $1, X0, Y0, Y0

	// Mins times the activations' 32-sums.
	VPSHUFB  Y13, Y0, Y1
	VPMADDWD (R8), Y1, Y1

	VPXOR Y2, Y2, Y2
	Q4KCHUNK(0, 0)
	Q4KCHUNK(1, 2)
	Q4KCHUNK(2, 4)
	Q4KCHUNK(3, 6)

	VEXTRACTI128 $1, Y2, X3
	VPADDD       X3, X2, X2
	VEXTRACTI128 $1, Y1, X3
	VPADDD       X3, X1, X1
	VPHADDD      X1, X2, X2
	VPHADDD      X2, X2, X2
	VCVTDQ2PS    X2, X2
	VMOVD        (SI), X3
	VCVTPH2PS    X3, X3
	VBROADCASTSS (DX), X4
	VMULPS       X3, X4, X3
	VMULPS       X2, X3, X3
	VMOVSHDUP    X3, X4
	VSUBSS       X4, X3, X3
	VADDSS       X3, X14, X14

	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (R8)(R9*8), R8
	DECQ CX
	JNZ  q4kloop

	VMOVSS X14, ret+48(FP)
	VZEROUPPER
	RET

// Q4K4TOK adds token t's products with chunk j (nibbles in Y3, Y4, scales
// in Y5, Y6) into ACC; M1 and M2 address the token's two 32 values.
#define Q4K4TOK(M1, M2, ACC) \
	VPMADDUBSW M1, Y3, Y7         \
	VPMADDWD   Y5, Y7, Y7         \
	VPADDD     Y7, ACC, ACC       \
	VPMADDUBSW M2, Y4, Y7         \
	VPMADDWD   Y6, Y7, Y7         \
	VPADDD     Y7, ACC, ACC

#define Q4K4CHUNK(j, k) \
	VMOVDQU    16+32*j(SI), Y3          \
	VPSRLW     $4, Y3, Y4               \
	VPAND      Y15, Y3, Y3              \
	VPAND      Y15, Y4, Y4              \
	VPSHUFB    q4kScale<>+32*k(SB), Y0, Y5 \
	VPSHUFB    q4kScale<>+32*k+32(SB), Y0, Y6 \
	Q4K4TOK(64*j(DI), 64*j+32(DI), Y8)  \
	Q4K4TOK(64*j(DI)(R8*1), 64*j+32(DI)(R8*1), Y9) \
	Q4K4TOK(64*j(DI)(R8*2), 64*j+32(DI)(R8*2), Y10) \
	Q4K4TOK(64*j(DI)(R10*1), 64*j+32(DI)(R10*1), Y11)

// func q4KDot4AVX2(w *byte, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *[4]float32)
// Four tokens against one Q4_K row: xd and bs address token 0's scale and
// 16-sums of super-block 0, the other tokens' follow (block-major).
TEXT ·q4KDot4AVX2(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xstride+16(FP), R8
	MOVQ xd+24(FP), DX
	MOVQ dstride+32(FP), R9
	MOVQ bs+40(FP), R11
	MOVQ nsb+48(FP), CX
	LEAQ (R8)(R8*2), R10
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS X14, X14, X14

q4k4loop:
	MOVL 4(SI), AX
	MOVL 8(SI), BX
	MOVL 12(SI), R12
	MOVL AX, R13
	SHRL $6, R13
	ANDL $0x03030303, R13
	SHLL $4, R13
	ANDL $0x3f3f3f3f, AX
	VMOVD AX, X0
	MOVL R12, AX
	ANDL $0x0f0f0f0f, AX
	ORL  R13, AX
	VPINSRD $1, AX, X0, X0
	MOVL BX, AX
	ANDL $0x3f3f3f3f, AX
	VPINSRD $2, AX, X0, X0
	MOVL R12, AX
	SHRL $4, AX
	ANDL $0x0f0f0f0f, AX
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, AX
	VPINSRD $3, AX, X0, X0
	VINSERTI128 $1, X0, Y0, Y0
	VPSHUFB q4kMinDup<>(SB), Y0, Y1

	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	Q4K4CHUNK(0, 0)
	Q4K4CHUNK(1, 2)
	Q4K4CHUNK(2, 4)
	Q4K4CHUNK(3, 6)

	VPHADDD      Y9, Y8, Y8
	VPHADDD      Y11, Y10, Y10
	VPHADDD      Y10, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD       X9, X8, X8
	VPMADDWD     (R11), Y1, Y2
	VPMADDWD     32(R11), Y1, Y3
	VPMADDWD     64(R11), Y1, Y4
	VPMADDWD     96(R11), Y1, Y5
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y4, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPADDD       X3, X2, X2
	VCVTDQ2PS    X8, X8
	VCVTDQ2PS    X2, X2
	VMOVD        (SI), X3
	VCVTPH2PS    X3, X3
	VBROADCASTSS X3, X4
	VMOVSHDUP    X3, X5
	VBROADCASTSS X5, X5
	VMOVUPS      (DX), X6
	VMULPS       X4, X6, X4
	VMULPS       X5, X6, X5
	VMULPS       X8, X4, X4
	VMULPS       X2, X5, X5
	VSUBPS       X5, X4, X4
	VADDPS       X4, X14, X14

	ADDQ $144, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (R11)(R9*8), R11
	DECQ CX
	JNZ  q4k4loop

	MOVQ    out+56(FP), AX
	VMOVUPS X14, (AX)
	VZEROUPPER
	RET

// Q6KCHUNK adds chunk c (32 values, in Y6) of a Q6_K super-block, scaled
// by its two 16-value scales (table bytes C...C+15), into Y2.
#define Q6KCHUNK(xoff, C) \
	VPMADDUBSW xoff(DI), Y6, Y6         \
	VPSHUFB    q6kScale<>+C(SB), X0, X7 \
	VPMOVSXBW  X7, Y7                   \
	VPMADDWD   Y7, Y6, Y6               \
	VPADDD     Y6, Y2, Y2

// Q6KHALF is values 128*h... of a super-block: ql at ql0 and ql0+32, qh
// at qh0, activations at x0, scale table entries c0...c0+3.
#define Q6KHALF(ql0, ql1, qh0, x0, x1, x2, x3, c0, c1, c2, c3) \
	VMOVDQU ql0(SI), Y3         \
	VMOVDQU ql1(SI), Y4         \
	VMOVDQU qh0(SI), Y5         \
	VPAND   Y15, Y3, Y6         \
	VPAND   Y14, Y5, Y7         \
	VPSLLW  $4, Y7, Y7          \
	VPOR    Y7, Y6, Y6          \
	Q6KCHUNK(x0, c0)            \
	VPAND   Y15, Y4, Y6         \
	VPAND   Y13, Y5, Y7         \
	VPSLLW  $2, Y7, Y7          \
	VPOR    Y7, Y6, Y6          \
	Q6KCHUNK(x1, c1)            \
	VPSRLW  $4, Y3, Y6          \
	VPAND   Y15, Y6, Y6         \
	VPAND   Y12, Y5, Y7         \
	VPOR    Y7, Y6, Y6          \
	Q6KCHUNK(x2, c2)            \
	VPSRLW  $4, Y4, Y6          \
	VPAND   Y15, Y6, Y6         \
	VPAND   Y11, Y5, Y7         \
	VPSRLW  $2, Y7, Y7          \
	VPOR    Y7, Y6, Y6          \
	Q6KCHUNK(x3, c3)

// func q6KDotAVX2(w *byte, x *int8, xd *float32, dstride int, bs *int16, nsb int) float32
TEXT ·q6KDotAVX2(SB), NOSPLIT, $0-52
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xd+16(FP), DX
	MOVQ dstride+24(FP), R9
	MOVQ bs+32(FP), R8
	MOVQ nsb+40(FP), CX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x03030303, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x0c0c0c0c, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x30303030, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0xc0c0c0c0, AX
	VMOVD AX, X11
	VPBROADCASTD X11, Y11
	VXORPS X8, X8, X8

q6kloop:
	// The values are stored plus 32: subtract 32 times each scale times
	// the activations' 16-sums.
	VMOVDQU   192(SI), X0
	VPMOVSXBW X0, Y1
	VPMADDWD  (R8), Y1, Y1
	VPSLLD    $5, Y1, Y1
	VPXOR     Y2, Y2, Y2
	Q6KHALF(0, 32, 128, 0, 32, 64, 96, 0, 16, 32, 48)
	Q6KHALF(64, 96, 160, 128, 160, 192, 224, 64, 80, 96, 112)
	VPSUBD       Y1, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPADDD       X3, X2, X2
	VPHADDD      X2, X2, X2
	VPHADDD      X2, X2, X2
	VCVTDQ2PS    X2, X2
	MOVWLZX      208(SI), AX
	VMOVD        AX, X3
	VCVTPH2PS    X3, X3
	VMULSS       (DX), X3, X3
	VMULSS       X2, X3, X3
	VADDSS       X3, X8, X8

	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (R8)(R9*8), R8
	DECQ CX
	JNZ  q6kloop

	VMOVSS X8, ret+48(FP)
	VZEROUPPER
	RET

DATA q4kScale<>+0(SB)/8, $0x8000800080008000
DATA q4kScale<>+8(SB)/8, $0x8000800080008000
DATA q4kScale<>+16(SB)/8, $0x8000800080008000
DATA q4kScale<>+24(SB)/8, $0x8000800080008000
DATA q4kScale<>+32(SB)/8, $0x8001800180018001
DATA q4kScale<>+40(SB)/8, $0x8001800180018001
DATA q4kScale<>+48(SB)/8, $0x8001800180018001
DATA q4kScale<>+56(SB)/8, $0x8001800180018001
DATA q4kScale<>+64(SB)/8, $0x8002800280028002
DATA q4kScale<>+72(SB)/8, $0x8002800280028002
DATA q4kScale<>+80(SB)/8, $0x8002800280028002
DATA q4kScale<>+88(SB)/8, $0x8002800280028002
DATA q4kScale<>+96(SB)/8, $0x8003800380038003
DATA q4kScale<>+104(SB)/8, $0x8003800380038003
DATA q4kScale<>+112(SB)/8, $0x8003800380038003
DATA q4kScale<>+120(SB)/8, $0x8003800380038003
DATA q4kScale<>+128(SB)/8, $0x8004800480048004
DATA q4kScale<>+136(SB)/8, $0x8004800480048004
DATA q4kScale<>+144(SB)/8, $0x8004800480048004
DATA q4kScale<>+152(SB)/8, $0x8004800480048004
DATA q4kScale<>+160(SB)/8, $0x8005800580058005
DATA q4kScale<>+168(SB)/8, $0x8005800580058005
DATA q4kScale<>+176(SB)/8, $0x8005800580058005
DATA q4kScale<>+184(SB)/8, $0x8005800580058005
DATA q4kScale<>+192(SB)/8, $0x8006800680068006
DATA q4kScale<>+200(SB)/8, $0x8006800680068006
DATA q4kScale<>+208(SB)/8, $0x8006800680068006
DATA q4kScale<>+216(SB)/8, $0x8006800680068006
DATA q4kScale<>+224(SB)/8, $0x8007800780078007
DATA q4kScale<>+232(SB)/8, $0x8007800780078007
DATA q4kScale<>+240(SB)/8, $0x8007800780078007
DATA q4kScale<>+248(SB)/8, $0x8007800780078007
GLOBL q4kScale<>(SB), RODATA|NOPTR, $256

DATA q4kMinDup<>+0(SB)/8, $0x8009800980088008
DATA q4kMinDup<>+8(SB)/8, $0x800b800b800a800a
DATA q4kMinDup<>+16(SB)/8, $0x800d800d800c800c
DATA q4kMinDup<>+24(SB)/8, $0x800f800f800e800e
GLOBL q4kMinDup<>(SB), RODATA|NOPTR, $32

DATA q6kScale<>+0(SB)/8, $0x0000000000000000
DATA q6kScale<>+8(SB)/8, $0x0101010101010101
DATA q6kScale<>+16(SB)/8, $0x0202020202020202
DATA q6kScale<>+24(SB)/8, $0x0303030303030303
DATA q6kScale<>+32(SB)/8, $0x0404040404040404
DATA q6kScale<>+40(SB)/8, $0x0505050505050505
DATA q6kScale<>+48(SB)/8, $0x0606060606060606
DATA q6kScale<>+56(SB)/8, $0x0707070707070707
DATA q6kScale<>+64(SB)/8, $0x0808080808080808
DATA q6kScale<>+72(SB)/8, $0x0909090909090909
DATA q6kScale<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA q6kScale<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA q6kScale<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA q6kScale<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA q6kScale<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA q6kScale<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q6kScale<>(SB), RODATA|NOPTR, $128

// Q6K4TOK adds token XM's products with the chunk in Y6 (scales in Y7)
// into ACC.
#define Q6K4TOK(XM, ACC) \
	VPMADDUBSW XM, Y6, Y2  \
	VPMADDWD   Y7, Y2, Y2  \
	VPADDD     Y2, ACC, ACC

#define Q6K4CHUNK(xoff, C) \
	VPSHUFB   q6kScale<>+C(SB), X0, X7 \
	VPMOVSXBW X7, Y7                   \
	Q6K4TOK(xoff(DI), Y8)              \
	Q6K4TOK(xoff(DI)(R8*1), Y9)        \
	Q6K4TOK(xoff(DI)(R8*2), Y10)       \
	Q6K4TOK(xoff(DI)(R10*1), Y11)

// Q6K4HALF is Q6KHALF for four tokens, with only the 0x0f and 0x03 masks.
#define Q6K4HALF(ql0, ql1, qh0, x0, x1, x2, x3, c0, c1, c2, c3) \
	VMOVDQU ql0(SI), Y3         \
	VMOVDQU ql1(SI), Y4         \
	VMOVDQU qh0(SI), Y5         \
	VPAND   Y15, Y3, Y6         \
	VPAND   Y14, Y5, Y7         \
	VPSLLW  $4, Y7, Y7          \
	VPOR    Y7, Y6, Y6          \
	Q6K4CHUNK(x0, c0)           \
	VPAND   Y15, Y4, Y6         \
	VPSRLW  $2, Y5, Y7          \
	VPAND   Y14, Y7, Y7         \
	VPSLLW  $4, Y7, Y7          \
	VPOR    Y7, Y6, Y6          \
	Q6K4CHUNK(x1, c1)           \
	VPSRLW  $4, Y3, Y6          \
	VPAND   Y15, Y6, Y6         \
	VPSRLW  $4, Y5, Y7          \
	VPAND   Y14, Y7, Y7         \
	VPSLLW  $4, Y7, Y7          \
	VPOR    Y7, Y6, Y6          \
	Q6K4CHUNK(x2, c2)           \
	VPSRLW  $4, Y4, Y6          \
	VPAND   Y15, Y6, Y6         \
	VPSRLW  $6, Y5, Y7          \
	VPAND   Y14, Y7, Y7         \
	VPSLLW  $4, Y7, Y7          \
	VPOR    Y7, Y6, Y6          \
	Q6K4CHUNK(x3, c3)

// Q6K4OFF subtracts 32 * scales . 16-sums of a token (at boff(R11)) from ACC.
#define Q6K4OFF(boff, ACC) \
	VPMADDWD boff(R11), Y1, Y2 \
	VPSLLD   $5, Y2, Y2        \
	VPSUBD   Y2, ACC, ACC

// func q6KDot4AVX2(w *byte, x *int8, xstride int, xd *float32, dstride int, bs *int16, nsb int, out *[4]float32)
TEXT ·q6KDot4AVX2(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xstride+16(FP), R8
	MOVQ xd+24(FP), DX
	MOVQ dstride+32(FP), R9
	MOVQ bs+40(FP), R11
	MOVQ nsb+48(FP), CX
	LEAQ (R8)(R8*2), R10
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x03030303, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	VXORPS X12, X12, X12

q6k4loop:
	VMOVDQU   192(SI), X0
	VPMOVSXBW X0, Y1
	VPXOR     Y8, Y8, Y8
	VPXOR     Y9, Y9, Y9
	VPXOR     Y10, Y10, Y10
	VPXOR     Y11, Y11, Y11
	Q6K4HALF(0, 32, 128, 0, 32, 64, 96, 0, 16, 32, 48)
	Q6K4HALF(64, 96, 160, 128, 160, 192, 224, 64, 80, 96, 112)
	Q6K4OFF(0, Y8)
	Q6K4OFF(32, Y9)
	Q6K4OFF(64, Y10)
	Q6K4OFF(96, Y11)
	VPHADDD      Y9, Y8, Y8
	VPHADDD      Y11, Y10, Y10
	VPHADDD      Y10, Y8, Y8
	VEXTRACTI128 $1, Y8, X9
	VPADDD       X9, X8, X8
	VCVTDQ2PS    X8, X8
	MOVWLZX      208(SI), AX
	VMOVD        AX, X3
	VCVTPH2PS    X3, X3
	VBROADCASTSS X3, X3
	VMULPS       (DX), X3, X3
	VMULPS       X8, X3, X3
	VADDPS       X3, X12, X12

	ADDQ $210, SI
	ADDQ $256, DI
	ADDQ R9, DX
	LEAQ (R11)(R9*8), R11
	DECQ CX
	JNZ  q6k4loop

	MOVQ    out+56(FP), AX
	VMOVUPS X12, (AX)
	VZEROUPPER
	RET

// func f16AccAVX2(acc, v *float32, s float32, n int)
// acc[i] = f16(float32(float64(acc[i]) + float64(v[i])*float64(s))): the
// product exact and the sum rounded once in float64, as the Go loop does;
// n is a multiple of 8.
TEXT ·f16AccAVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	MOVQ         v+8(FP), SI
	VCVTSS2SD    s+16(FP), X15, X15
	VBROADCASTSD X15, Y15
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX

f16accloop:
	VCVTPS2PD   (DI), Y0
	VCVTPS2PD   16(DI), Y1
	VCVTPS2PD   (SI), Y2
	VCVTPS2PD   16(SI), Y3
	VMULPD      Y15, Y2, Y2
	VMULPD      Y15, Y3, Y3
	VADDPD      Y2, Y0, Y0
	VADDPD      Y3, Y1, Y1
	VCVTPD2PSY  Y0, X0
	VCVTPD2PSY  Y1, X1
	VINSERTF128 $1, X1, Y0, Y0
	VCVTPS2PH   $0, Y0, X0
	VCVTPH2PS   X0, Y0
	VMOVUPS     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	DECQ        CX
	JNZ         f16accloop
	VZEROUPPER
	RET

// func f16ScaleAVX2(acc *float32, s float32, n int)
// acc[i] = f16(acc[i]*s); n is a multiple of 8.
TEXT ·f16ScaleAVX2(SB), NOSPLIT, $0-24
	MOVQ         acc+0(FP), DI
	VBROADCASTSS s+8(FP), Y15
	MOVQ         n+16(FP), CX
	SHRQ         $3, CX

f16scaleloop:
	VMULPS    (DI), Y15, Y0
	VCVTPS2PH $0, Y0, X0
	VCVTPH2PS X0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, DI
	DECQ      CX
	JNZ       f16scaleloop
	VZEROUPPER
	RET

// func quantQ8AVX2(x *float32, q *int8, amax *float32, nb int)
// Quantises nb blocks of 32 as quantQ8Block does, writing each block's
// max |x| to amax[b] (the caller derives the f16 scale).
TEXT ·quantQ8AVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	MOVQ amax+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVL $0x7fffffff, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x42fe0000, AX // 127.0
	VMOVD AX, X14
	VMOVDQU q8PackPerm<>(SB), Y13

quantq8loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS  Y15, Y0, Y4
	VANDPS  Y15, Y1, Y5
	VANDPS  Y15, Y2, Y6
	VANDPS  Y15, Y3, Y7
	VMAXPS  Y5, Y4, Y4
	VMAXPS  Y7, Y6, Y6
	VMAXPS  Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS  X5, X4, X4
	VMOVHLPS X4, X4, X5
	VMAXPS  X5, X4, X4
	VMOVSHDUP X4, X5
	VMAXSS  X5, X4, X4
	VMOVSS  X4, (DX)
	VXORPS  X5, X5, X5
	VUCOMISS X5, X4
	JEQ     quantq8zero
	VDIVSS  X4, X14, X4 // 127 / amax
	VBROADCASTSS X4, Y4
	VMULPS  Y4, Y0, Y0
	VMULPS  Y4, Y1, Y1
	VMULPS  Y4, Y2, Y2
	VMULPS  Y4, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y13, Y0
	VMOVDQU   Y0, (DI)
	JMP       quantq8next

quantq8zero:
	VPXOR   Y0, Y0, Y0
	VMOVDQU Y0, (DI)

quantq8next:
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, DX
	DECQ CX
	JNZ  quantq8loop
	VZEROUPPER
	RET

DATA q8PackPerm<>+0(SB)/8, $0x0000000400000000
DATA q8PackPerm<>+8(SB)/8, $0x0000000500000001
DATA q8PackPerm<>+16(SB)/8, $0x0000000600000002
DATA q8PackPerm<>+24(SB)/8, $0x0000000700000003
GLOBL q8PackPerm<>(SB), RODATA|NOPTR, $32

// func q8KRangeAVX2(x *float32) (hi, lo float32)
// The largest and smallest of 256 values.
TEXT ·q8KRangeAVX2(SB), NOSPLIT, $0-16
	MOVQ    x+0(FP), SI
	VMOVUPS (SI), Y0
	VMOVUPS Y0, Y1
	MOVQ    $31, CX
	ADDQ    $32, SI

q8krangeloop:
	VMOVUPS (SI), Y2
	VMAXPS  Y2, Y0, Y0
	VMINPS  Y2, Y1, Y1
	ADDQ    $32, SI
	DECQ    CX
	JNZ     q8krangeloop
	VEXTRACTF128 $1, Y0, X2
	VMAXPS  X2, X0, X0
	VMOVHLPS X0, X0, X2
	VMAXPS  X2, X0, X0
	VMOVSHDUP X0, X2
	VMAXSS  X2, X0, X0
	VEXTRACTF128 $1, Y1, X2
	VMINPS  X2, X1, X1
	VMOVHLPS X1, X1, X2
	VMINPS  X2, X1, X1
	VMOVSHDUP X1, X2
	VMINSS  X2, X1, X1
	VMOVSS  X0, hi+8(FP)
	VMOVSS  X1, lo+12(FP)
	VZEROUPPER
	RET

// func q8KQuantAVX2(x *float32, q *int8, bs *int16, iscale float32)
// q[i] = min(127, round-half-even(iscale*x[i])) for 256 values, and bs[g]
// the sums of each 16.
TEXT ·q8KQuantAVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         q+8(FP), DI
	MOVQ         bs+16(FP), DX
	VBROADCASTSS iscale+24(FP), Y15
	MOVL         $127, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	VMOVDQU      q8PackPerm<>(SB), Y13
	MOVL         $0x01010101, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	VPCMPEQW     Y11, Y11, Y11
	VPSRLW       $15, Y11, Y11
	MOVQ         $8, CX

q8kquantloop:
	VMULPS     (SI), Y15, Y0
	VMULPS     32(SI), Y15, Y1
	VMULPS     64(SI), Y15, Y2
	VMULPS     96(SI), Y15, Y3
	VCVTPS2DQ  Y0, Y0
	VCVTPS2DQ  Y1, Y1
	VCVTPS2DQ  Y2, Y2
	VCVTPS2DQ  Y3, Y3
	VPMINSD    Y14, Y0, Y0
	VPMINSD    Y14, Y1, Y1
	VPMINSD    Y14, Y2, Y2
	VPMINSD    Y14, Y3, Y3
	VPACKSSDW  Y1, Y0, Y0
	VPACKSSDW  Y3, Y2, Y2
	VPACKSSWB  Y2, Y0, Y0
	VPERMD     Y0, Y13, Y0
	VMOVDQU    Y0, (DI)
	VPMADDUBSW Y0, Y12, Y1
	VPMADDWD   Y11, Y1, Y1
	VPHADDD    Y1, Y1, Y1
	VPHADDD    Y1, Y1, Y1
	VMOVD      X1, AX
	MOVW       AX, (DX)
	VEXTRACTI128 $1, Y1, X1
	VMOVD      X1, AX
	MOVW       AX, 2(DX)
	ADDQ       $128, SI
	ADDQ       $32, DI
	ADDQ       $4, DX
	DECQ       CX
	JNZ        q8kquantloop
	VZEROUPPER
	RET
