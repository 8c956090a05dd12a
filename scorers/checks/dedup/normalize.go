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

// isWordRune reports whether a non-ASCII rune belongs to a word.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// Byte classes of the tokenizer.
const (
	tkSep     = iota // ASCII space or punctuation
	tkWord           // ASCII letter or digit
	tkNewline        // '\n'
	tkHigh           // first byte of a non-ASCII sequence
)

var tokClass [256]uint8

func init() {
	for c := 0; c < 256; c++ {
		switch {
		case c >= utf8.RuneSelf:
			tokClass[c] = tkHigh
		case c == '\n':
			tokClass[c] = tkNewline
		case asciiClass[c] == clsWord:
			tokClass[c] = tkWord
		default:
			tokClass[c] = tkSep
		}
	}
}

// hashWord hashes the lower-cased bytes of one word. or20 is ORed into every
// byte: 0x20 lower-cases ASCII letters and leaves digits alone, so an
// all-ASCII word can be hashed straight from the raw text; the non-ASCII
// path passes already lower-cased bytes and or20 = 0. A word of under 8
// bytes is its little-endian bytes, mixed: a bijection, so no two short
// words collide.
func hashWord(b []byte, or20 uint64) uint64 {
	if len(b) < 8 {
		var t uint64
		for i, c := range b {
			t |= uint64(c) << (8 * i)
		}
		return mix64((t | or20&(^uint64(0)>>(64-8*len(b)))) ^ k0)
	}
	h := uint64(k0)
	n := len(b)
	for len(b) >= 8 {
		h = bits.RotateLeft64((h^(binary.LittleEndian.Uint64(b)|or20))*k1, 31)
		b = b[8:]
	}
	if len(b) > 0 {
		var t uint64
		for i, c := range b {
			t |= uint64(c) << (8 * i)
		}
		t |= or20 & (1<<(8*len(b)) - 1)
		h = bits.RotateLeft64((h^t)*k1, 31)
	}
	return mix64(h ^ uint64(n))
}

// tokenizer splits text into words: maximal runs of letters, digits and
// combining marks, lower-cased. Punctuation and spaces separate words and
// are otherwise ignored, so "Kucing," and "kucing" are the same word, and
// tokenizing a text or its normalised form gives the same words. It also
// notes, for each '\n', how many words came before it and where it is.
type tokenizer struct {
	words []uint64 // word hashes
	lines []lineEnd
	low   []byte // scratch for non-ASCII words
}

type lineEnd struct {
	words int32 // words before the newline
	at    int32 // byte offset of the newline
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
	or20  = 0x2020202020202020
)

// nonWordBytes marks (0x80 in the byte) every byte of v that is not an
// ASCII letter or digit: eight class lookups in a few arithmetic steps.
// Bytes are first cut to 7 bits so no step carries into the next byte.
func nonWordBytes(v uint64) uint64 {
	x := v &^ highs
	l := x | or20 // ASCII letters lower-cased (and nothing new lands in a-z)
	letter := (l + (0x80-'a')*ones) & ((0x80+'z')*ones - l)
	digit := (x + (0x80-'0')*ones) & ((0x80+'9')*ones - x)
	word := (letter | digit) & highs &^ v
	return word ^ highs
}

// longWord hashes the ASCII word of 8 or more bytes at raw[i], whose first
// 8 bytes are v, 8 bytes at a time; the value equals hashWord's. ok is false
// when the word runs into non-ASCII (the caller takes the slow path).
func longWord(raw []byte, i int, v uint64) (h uint64, end int, ok bool) {
	h = k0
	p := i
	for {
		h = bits.RotateLeft64((h^(v|or20))*k1, 31)
		p += 8
		if p+8 > len(raw) {
			break
		}
		v = binary.LittleEndian.Uint64(raw[p:])
		nw := nonWordBytes(v)
		if nw == 0 {
			continue
		}
		l := bits.TrailingZeros64(nw) >> 3
		if tokClass[raw[p+l]] == tkHigh {
			return 0, 0, false
		}
		if l > 0 {
			h = bits.RotateLeft64((h^((v|or20)&(^uint64(0)>>(64-8*l))))*k1, 31)
		}
		return mix64(h ^ uint64(p+l-i)), p + l, true
	}
	// Near the end of the buffer: finish byte by byte.
	j := p
	for j < len(raw) && tokClass[raw[j]] == tkWord {
		j++
	}
	if j < len(raw) && tokClass[raw[j]] == tkHigh {
		return 0, 0, false
	}
	return hashWord(raw[i:j], or20), j, true
}

func (t *tokenizer) run(raw []byte, wantLines bool) {
	// Locals, not t's fields, in the loop: the compiler keeps them in
	// registers.
	words := t.words[:0]
	lines := t.lines[:0]
	n := len(raw)
	for i := 0; i < n; {
		c := tokClass[raw[i]]
		if c == tkSep {
			i++
			continue
		}
		if c == tkWord {
			if i+8 <= n {
				// Find the word's end in the next 8 bytes without a
				// byte loop; the load is also the hash input.
				v := binary.LittleEndian.Uint64(raw[i:])
				if nw := nonWordBytes(v); nw != 0 {
					l := bits.TrailingZeros64(nw) >> 3
					if tokClass[raw[i+l]] != tkHigh {
						words = append(words, mix64((v|or20)&(^uint64(0)>>(64-8*l))^k0))
						i += l
						continue
					}
				} else if h, end, ok := longWord(raw, i, v); ok {
					words = append(words, h)
					i = end
					continue
				}
			} else {
				j := i + 1
				for j < n && tokClass[raw[j]] == tkWord {
					j++
				}
				if j == n || tokClass[raw[j]] != tkHigh {
					words = append(words, hashWord(raw[i:j], or20))
					i = j
					continue
				}
			}
		} else if c == tkNewline {
			if wantLines {
				lines = append(lines, lineEnd{int32(len(words)), int32(i)})
			}
			i++
			continue
		}
		// A word that contains (or a run that starts with) non-ASCII.
		t.words = words
		i = t.slowWord(raw, i)
		words = t.words
	}
	t.words, t.lines = words, lines
}

// slowWord reads the word (if any) at raw[i], which is or is followed by a
// non-ASCII rune, and returns the index after it.
func (t *tokenizer) slowWord(raw []byte, i int) int {
	t.low = t.low[:0]
	for i < len(raw) {
		c := raw[i]
		if c < utf8.RuneSelf {
			if tokClass[c] != tkWord {
				break
			}
			t.low = append(t.low, asciiLower[c])
			i++
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		if (r == utf8.RuneError && n == 1) || !isWordRune(r) {
			if len(t.low) == 0 {
				return i + n // a non-word rune: skip it
			}
			break
		}
		t.low = utf8.AppendRune(t.low, unicode.ToLower(r))
		i += n
	}
	t.words = append(t.words, hashWord(t.low, 0))
	return i
}

// shingleRoller yields the hashes of consecutive word n-grams in O(1) per
// word (a cyclic polynomial over word hashes).
const shingleRot = 7

func shingleKey(h uint64, n int) uint64 { return mix64(h ^ uint64(n)*k2) }

// rollKey moves roll, the rolling hash of the n word keys before keys[k],
// on by one word: keys[k] comes in and, once k >= n, keys[k-n] goes out
// (outRot is (shingleRot*n) % 64). Index and scan roll alike through it.
func rollKey(roll uint64, keys []uint64, k, n, outRot int) uint64 {
	roll = bits.RotateLeft64(roll, shingleRot) ^ keys[k]
	if k >= n {
		roll ^= bits.RotateLeft64(keys[k-n], outRot)
	}
	return roll
}

// shingleHash is the hash of one n-gram (len(words) = n), as appendShingles
// computes it.
func shingleHash(words []uint64) uint64 {
	var h uint64
	for _, w := range words {
		h = bits.RotateLeft64(h, shingleRot) ^ w
	}
	return shingleKey(h, len(words))
}

// appendShingles appends the hash of every word n-gram of words (none when
// there are fewer than n words).
func appendShingles(out, words []uint64, n int) []uint64 {
	if len(words) < n {
		return out
	}
	var h uint64
	for _, w := range words[:n] {
		h = bits.RotateLeft64(h, shingleRot) ^ w
	}
	out = append(out, shingleKey(h, n))
	outRot := (shingleRot * n) % 64
	for j := n; j < len(words); j++ {
		h = bits.RotateLeft64(h, shingleRot) ^ bits.RotateLeft64(words[j-n], outRot) ^ words[j]
		out = append(out, shingleKey(h, n))
	}
	return out
}

// seqHash hashes a whole word sequence (short prompts, lines, documents).
func seqHash(words []uint64) uint64 {
	h := uint64(k2)
	for _, w := range words {
		h = bits.RotateLeft64((h^w)*k1, 27)
	}
	return mix64(h ^ uint64(len(words)))
}

// next returns the hash and key (wordKey) of the first word that starts
// at or after raw[i] (i on a rune boundary), with the word's start and
// end; start is -1 when there is none. It splits and hashes exactly as
// run does (FuzzTokenize checks they agree), one word at a time, so a
// scan can stop early or jump ahead.
func (t *tokenizer) next(raw []byte, i int) (h, key uint64, start, end int) {
	n := len(raw)
	for i < n {
		c := tokClass[raw[i]]
		if c == tkSep || c == tkNewline {
			i++
			continue
		}
		if c == tkWord {
			if i+8 <= n {
				v := binary.LittleEndian.Uint64(raw[i:])
				if nw := nonWordBytes(v); nw != 0 {
					l := bits.TrailingZeros64(nw) >> 3
					if tokClass[raw[i+l]] != tkHigh {
						w := (v | or20) & (^uint64(0) >> (64 - 8*l))
						return mix64(w ^ k0), wordKey(w, l), i, i + l
					}
				} else if h, end, ok := longWord(raw, i, v); ok {
					return h, wordKey(v|or20, end-i), i, end
				}
			} else {
				j := i + 1
				for j < n && tokClass[raw[j]] == tkWord {
					j++
				}
				if j == n || tokClass[raw[j]] != tkHigh {
					return hashWord(raw[i:j], or20), shortKey(raw[i:j], or20), i, j
				}
			}
		}
		// A word that contains (or a run that starts with) non-ASCII.
		w0 := len(t.words)
		e := t.slowWord(raw, i)
		if len(t.words) > w0 {
			h = t.words[w0]
			t.words = t.words[:w0]
			return h, shortKey(t.low, 0), i, e
		}
		i = e
	}
	return 0, 0, -1, n
}

// nextKey is next without the hash: the key alone, which needs no
// multiplication and, for a long word, only its end found.
func (t *tokenizer) nextKey(raw []byte, i int) (key uint64, start, end int) {
	n := len(raw)
	for i < n {
		c := tokClass[raw[i]]
		if c == tkSep || c == tkNewline {
			i++
			continue
		}
		if c == tkWord && i+8 <= n {
			v := binary.LittleEndian.Uint64(raw[i:])
			if nw := nonWordBytes(v); nw != 0 {
				l := bits.TrailingZeros64(nw) >> 3
				if tokClass[raw[i+l]] != tkHigh {
					return wordKey((v|or20)&(^uint64(0)>>(64-8*l)), l), i, i + l
				}
			} else {
				p := i + 8
				for p+8 <= n {
					if nw := nonWordBytes(binary.LittleEndian.Uint64(raw[p:])); nw != 0 {
						p += bits.TrailingZeros64(nw) >> 3
						break
					}
					p += 8
				}
				for p < n && tokClass[raw[p]] == tkWord {
					p++
				}
				if p == n || tokClass[raw[p]] != tkHigh {
					return wordKey(v|or20, p-i), i, p
				}
			}
		}
		_, key, start, end = t.next(raw, i)
		return key, start, end
	}
	return 0, -1, n
}

// keyAt is nextKey with a fast path for the common case: at most 7
// ASCII separator bytes, then an ASCII word of under 16 bytes, found with
// two or three 8-byte loads and no byte loop.
func (t *tokenizer) keyAt(raw []byte, i int) (key uint64, start, end int) {
	if i+24 <= len(raw) {
		v := binary.LittleEndian.Uint64(raw[i:])
		if word := ^nonWordBytes(v) & highs; word != 0 {
			sl := bits.TrailingZeros64(word) >> 3
			if v&highs&(1<<(8*sl)-1) == 0 { // the separators are ASCII
				s := i + sl
				w := binary.LittleEndian.Uint64(raw[s:])
				l := 0
				if nw := nonWordBytes(w); nw != 0 {
					l = bits.TrailingZeros64(nw) >> 3
					w &= ^uint64(0) >> (64 - 8*l)
				} else if nw := nonWordBytes(binary.LittleEndian.Uint64(raw[s+8:])); nw != 0 {
					l = 8 + bits.TrailingZeros64(nw)>>3
				}
				if l > 0 && raw[s+l] < utf8.RuneSelf {
					return wordKey(w|or20&(^uint64(0)>>(64-8*min(l, 8))), l), s, s + l
				}
			}
		}
	}
	return t.nextKey(raw, i)
}

// appendKeys appends the keys and starts of the words from raw[i] on
// until keys holds want words or raw ends, and returns where it stopped:
// keyAt in a loop, inlined.
func (t *tokenizer) appendKeys(raw []byte, i, want int, keys []uint64, starts []int) ([]uint64, []int, int) {
	n := len(raw)
	for len(keys) < want && i < n {
		if i+24 <= n {
			v := binary.LittleEndian.Uint64(raw[i:])
			if word := ^nonWordBytes(v) & highs; word != 0 {
				sl := bits.TrailingZeros64(word) >> 3
				if v&highs&(1<<(8*sl)-1) == 0 {
					s := i + sl
					w := binary.LittleEndian.Uint64(raw[s:])
					l := 0
					if nw := nonWordBytes(w); nw != 0 {
						l = bits.TrailingZeros64(nw) >> 3
						w &= ^uint64(0) >> (64 - 8*l)
					} else if nw := nonWordBytes(binary.LittleEndian.Uint64(raw[s+8:])); nw != 0 {
						l = 8 + bits.TrailingZeros64(nw)>>3
					}
					if l > 0 && raw[s+l] < utf8.RuneSelf {
						keys = append(keys, wordKey(w|or20&(^uint64(0)>>(64-8*min(l, 8))), l))
						starts = append(starts, s)
						i = s + l
						continue
					}
				}
			}
		}
		key, s, e := t.nextKey(raw, i)
		if s < 0 {
			return keys, starts, n
		}
		keys = append(keys, key)
		starts = append(starts, s)
		i = e
	}
	return keys, starts, i
}

// wordKey is the sampled exact scan's key of a word: its first 8
// lower-cased bytes (zero-padded) and its length. Words that share both
// share the key, which only costs a verification.
func wordKey(first8 uint64, n int) uint64 { return first8 ^ uint64(n)*k1 }

// shortKey is wordKey of a word given as bytes, each ORed with or20 (as
// hashWord).
func shortKey(b []byte, or20 uint64) uint64 {
	var w uint64
	for i, c := range b[:min(8, len(b))] {
		w |= uint64(c) << (8 * i)
	}
	return wordKey(w|or20&(^uint64(0)>>(64-8*min(8, len(b)))), len(b))
}

// after returns the first word that starts after raw[p] (the next() of
// the word following the one p may be inside): for p in
// [start of word j-1, start of word j) it is word j, wherever p falls in
// a rune. A scan that looks at every S-th byte this way meets word j+1
// of any run of words whose start-to-start span is at least S bytes.
func (t *tokenizer) after(raw []byte, p int) (key uint64, start, end int) {
	// The rune holding p ends at r1; inWord: it belongs to a word.
	r1, inWord := p+1, false
	if c := raw[p]; c < utf8.RuneSelf {
		inWord = tokClass[c] == tkWord
		if inWord && p+8 <= len(raw) {
			// Skip the word's ASCII rest with one load when it ends in
			// 8 bytes at an ASCII byte.
			if nw := nonWordBytes(binary.LittleEndian.Uint64(raw[p:])); nw != 0 {
				if q := p + bits.TrailingZeros64(nw)>>3; raw[q] < utf8.RuneSelf {
					return t.keyAt(raw, q)
				}
			}
		}
	} else {
		// The rune holding p starts at most 3 bytes before it, at a byte
		// that is not a continuation byte (such a byte always starts a
		// rune when decoding from the start). If none covers p, p is a
		// stray continuation byte: a rune of its own, not in a word.
		l := p
		for l > 0 && l > p-3 && raw[l]&0xc0 == 0x80 {
			l--
		}
		if raw[l]&0xc0 != 0x80 {
			if r, w := utf8.DecodeRune(raw[l:]); l+w > p {
				r1 = l + w
				inWord = !(r == utf8.RuneError && w == 1) && isWordRune(r)
			}
		}
	}
	key, start, end = t.keyAt(raw, r1)
	if inWord && start == r1 {
		// The word p is in goes on at r1: skip its rest.
		key, start, end = t.keyAt(raw, end)
	}
	return key, start, end
}
