//go:build amd64 && !purego

package dedup

import "golang.org/x/sys/cpu"

// An AVX2 kernel for the word-byte bitmap of all-ASCII documents
// (wordBits), the one pass over every byte of the matcher; the pure-Go
// loop remains for other CPUs and for the tail.

// wordBlocksAVX2 is wordBlocksGo for n 64-byte blocks at raw, except that
// it returns only whether a byte had its high bit set.
//
//go:noescape
func wordBlocksAVX2(raw *byte, b *uint64, n int) (high bool)

// hasAVX2 is whether the CPU has AVX2 and the OS saves its registers.
var hasAVX2 = cpu.X86.HasAVX2

// wordBlocks is wordBlocksGo, with AVX2 where the CPU has it.
func wordBlocks(raw []byte, b []uint64) (high uint64) {
	n := len(raw) / 64
	if !hasAVX2 || n == 0 {
		return wordBlocksGo(raw, b)
	}
	_ = b[n-1]
	if wordBlocksAVX2(&raw[0], &b[0], n) {
		return highs
	}
	return 0
}
