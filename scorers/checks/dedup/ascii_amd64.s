//go:build amd64 && !purego

#include "textflag.h"

// WORDMASK sets Y to 0xff in every byte of Y that is an ASCII letter or
// digit (nonWordBytes' classes), using Y8-Y12 as set up below and Y13 as
// scratch. Each range test adds the offset that moves the range to the
// bottom of the signed bytes, -128.., and compares; a byte with its high
// bit set lands in neither range.
#define WORDMASK(y) \
	VPOR     y, Y8, Y13; \
	VPADDB   Y9, Y13, Y13; \
	VPCMPGTB Y13, Y10, Y13; \
	VPADDB   Y11, y, y; \
	VPCMPGTB y, Y12, y; \
	VPOR     Y13, y, y

#define BCAST(c, y) \
	MOVL $c, AX; \
	MOVD AX, X14; \
	VPBROADCASTB X14, y

// func wordBlocksAVX2(raw *byte, b *uint64, n int) (high bool)
TEXT ·wordBlocksAVX2(SB), NOSPLIT, $0-25
	MOVQ raw+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	BCAST(0x20, Y8)       // lower-cases ASCII letters
	BCAST(0x1f, Y9)       // 0x80 - 'a'
	BCAST(0x9a, Y10)      // -128 + 26: below it, a letter
	BCAST(0x50, Y11)      // 0x80 - '0'
	BCAST(0x8a, Y12)      // -128 + 10: below it, a digit
	VPXOR Y15, Y15, Y15   // OR of all bytes

loop:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VPOR    Y0, Y15, Y15
	VPOR    Y1, Y15, Y15
	WORDMASK(Y0)
	WORDMASK(Y1)
	VPMOVMSKB Y0, AX
	VPMOVMSKB Y1, BX
	SHLQ    $32, BX
	ORQ     BX, AX
	MOVQ    AX, (DI)
	ADDQ    $64, SI
	ADDQ    $8, DI
	DECQ    CX
	JNZ     loop

	VPMOVMSKB Y15, AX
	VZEROUPPER
	TESTL   AX, AX
	SETNE   high+24(FP)
	RET
