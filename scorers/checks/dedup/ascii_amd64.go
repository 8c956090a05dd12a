//go:build amd64 && !purego

package dedup

// An AVX2 kernel for the word-byte bitmap of all-ASCII documents
// (wordBits), the one pass over every byte of the matcher; the pure-Go
// loop remains for other CPUs and for the tail.

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// wordBlocksAVX2 is wordBlocksGo for n 64-byte blocks at raw, except that
// it returns only whether a byte had its high bit set.
//
//go:noescape
func wordBlocksAVX2(raw *byte, b *uint64, n int) (high bool)

var hasAVX2 = func() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, c, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if c&osxsave == 0 || c&avx == 0 {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 { // the OS saves XMM and YMM state
		return false
	}
	_, b, _, _ := cpuid(7, 0)
	return b&(1<<5) != 0
}()

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
