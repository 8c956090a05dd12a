package dedup

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Byte classes for the ASCII fast path of the normaliser and the tokenizer.
const (
	clsOther = iota // copied as is, not part of a word (punctuation)
	clsSpace        // collapsed
	clsWord         // letter or digit, lower-cased
)

var (
	asciiClass [128]uint8
	asciiLower [128]byte
)

func init() {
	for c := 0; c < 128; c++ {
		asciiLower[c] = byte(c)
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			asciiClass[c] = clsSpace
		case c >= 'A' && c <= 'Z':
			asciiClass[c] = clsWord
			asciiLower[c] = byte(c + 'a' - 'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			asciiClass[c] = clsWord
		default:
			asciiClass[c] = clsOther
		}
	}
}

// appendNorm appends the normalised form of src to dst: every run of
// (Unicode) whitespace becomes one space, leading and trailing whitespace is
// dropped, and letters are case-folded (simple lower-casing). Invalid UTF-8
// bytes are copied unchanged, so the function never fails.
//
// When lines is not nil, the length of the output at every '\n' of src is
// appended to it: the normalised text of line k is then out[lines[k-1]:lines[k]]
// with surrounding spaces trimmed. That lets one pass serve both the document
// and its lines.
func appendNorm(dst, src []byte, lines *[]int32) []byte {
	start := len(dst)
	space := false // a space is owed before the next non-space byte
	for i := 0; i < len(src); {
		c := src[i]
		if c < utf8.RuneSelf {
			if asciiClass[c] == clsSpace {
				if c == '\n' && lines != nil {
					*lines = append(*lines, int32(len(dst)-start))
				}
				space = true
				i++
				continue
			}
			if space {
				if len(dst) > start {
					dst = append(dst, ' ')
				}
				space = false
			}
			// Copy a run of plain ASCII in one go: the common case.
			j := i + 1
			for j < len(src) && src[j] < utf8.RuneSelf && asciiClass[src[j]] != clsSpace {
				j++
			}
			for _, b := range src[i:j] {
				dst = append(dst, asciiLower[b])
			}
			i = j
			continue
		}
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n == 1 {
			if space {
				if len(dst) > start {
					dst = append(dst, ' ')
				}
				space = false
			}
			dst = append(dst, c)
			i++
			continue
		}
		i += n
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			if len(dst) > start {
				dst = append(dst, ' ')
			}
			space = false
		}
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}

// Normalize returns the normalised form of s used for exact matching:
// whitespace collapsed to single spaces and trimmed, letters lower-cased.
func Normalize(s string) string {
	return string(appendNorm(nil, []byte(s), nil))
}

const (
	k0 = 0x9E3779B97F4A7C15
	k1 = 0xBF58476D1CE4E5B9
	k2 = 0x94D049BB133111EB
)

// mix64 is the splitmix64 finaliser: a cheap full-avalanche mix.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= k1
	x ^= x >> 27
	x *= k2
	x ^= x >> 31
	return x
}

// hashBytes is a fast, deterministic 64-bit hash (same value in every process,
// so results never depend on a random seed).
func hashBytes(b []byte) uint64 {
	h := uint64(k0) ^ uint64(len(b))
	for len(b) >= 8 {
		h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b))*k1, 31)
		b = b[8:]
	}
	if len(b) > 0 {
		var t uint64
		for i, c := range b {
			t |= uint64(c) << (8 * i)
		}
		h = bits.RotateLeft64((h^t)*k1, 31)
	}
	return mix64(h)
}

// hash32 hashes exactly 32 bytes; the anchor window in the common case.
func hash32(b []byte) uint64 {
	_ = b[31]
	h := uint64(k0) ^ 32
	h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b))*k1, 31)
	h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b[8:]))*k1, 31)
	h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b[16:]))*k1, 31)
	h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b[24:]))*k1, 31)
	return mix64(h)
}

// isWordRune reports whether a non-ASCII rune belongs to a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// appendWordHashes appends one hash per word of the normalised text norm.
// A word is a maximal run of letters, digits and combining marks;
// punctuation and spaces separate words and are otherwise ignored, so
// "kucing," and "kucing" are the same word. It stops once max hashes are in
// out (max < 0: no limit) and reports whether it stopped early.
func appendWordHashes(out []uint64, norm []byte, max int) ([]uint64, bool) {
	var acc, h uint64
	shift := uint(0)
	n := 0
	inWord := false
	flush := func() {
		if shift > 0 {
			h = bits.RotateLeft64((h^acc)*k1, 31)
		}
		out = append(out, mix64(h^uint64(n)))
		acc, shift, n, h, inWord = 0, 0, 0, k0, false
	}
	h = k0
	for i := 0; i < len(norm); {
		c := norm[i]
		var word bool
		size := 1
		if c < utf8.RuneSelf {
			word = asciiClass[c] == clsWord
		} else {
			r, sz := utf8.DecodeRune(norm[i:])
			size = sz
			word = r != utf8.RuneError && isWordRune(r)
		}
		if !word {
			if inWord {
				flush()
				if max >= 0 && len(out) >= max {
					return out, true
				}
			}
			i += size
			continue
		}
		inWord = true
		for k := 0; k < size; k++ {
			acc |= uint64(norm[i+k]) << shift
			shift += 8
			n++
			if shift == 64 {
				h = bits.RotateLeft64((h^acc)*k1, 31)
				acc, shift = 0, 0
			}
		}
		i += size
	}
	if inWord {
		flush()
	}
	return out, false
}

// shingleHash combines n consecutive word hashes into the hash of a word
// n-gram. Order matters: "a b" and "b a" differ.
func shingleHash(words []uint64) uint64 {
	h := uint64(k2)
	for _, w := range words {
		h = bits.RotateLeft64(h, 23) ^ w
		h *= k0
	}
	return mix64(h)
}

// appendShingles appends the hash of every word n-gram of words (none when
// there are fewer than n words).
func appendShingles(out, words []uint64, n int) []uint64 {
	for j := 0; j+n <= len(words); j++ {
		out = append(out, shingleHash(words[j:j+n]))
	}
	return out
}
