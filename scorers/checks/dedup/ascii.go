package dedup

import (
	"encoding/binary"
	"math/bits"
)

// The all-ASCII document path of Matcher.Doc. One branch-free pass marks
// every word byte (ASCII letters and digits: the tokenizer's words, as
// the document has no other) in a bitmap, 8 bytes per step. The bitmap
// gives the word count, which tightens the Jaccard miss bound to the
// document's own shingle count, and the words' starts and lengths, so
// both the Jaccard part and the samples of the exact part read a word's
// key with one load and no parsing.

// wordBits fills m.bits with the word bytes of raw and reports whether raw
// is all ASCII (else m.bits is not valid and the general path runs).
func (m *Matcher) wordBits(raw []byte) bool {
	nw := (len(raw) + 63) / 64
	if cap(m.bits) < nw+1 {
		m.bits = make([]uint64, nw+1)
	}
	b := m.bits[:nw+1] // b[nw] stays 0: a word never runs past the end
	clear(b)
	var high uint64
	full := len(raw) / 8
	for c := 0; c < full; c++ {
		v := binary.LittleEndian.Uint64(raw[8*c:])
		high |= v
		b[c>>3] |= wordByteMask(v) << (8 * (c & 7))
	}
	if full*8 < len(raw) {
		var t [8]byte // zero bytes are not word bytes
		copy(t[:], raw[full*8:])
		v := binary.LittleEndian.Uint64(t[:])
		high |= v
		b[full>>3] |= wordByteMask(v) << (8 * (full & 7))
	}
	m.bits = b
	return high&highs == 0
}

// wordByteMask has bit k set when byte k of v is an ASCII letter or digit.
func wordByteMask(v uint64) uint64 {
	return ((^nonWordBytes(v) & highs) >> 7) * 0x0102040810204080 >> 56
}

// nextStart returns the first word start at or after byte p (-1: none).
func (m *Matcher) nextStart(p int) int {
	b := m.bits
	w := p >> 6
	if w >= len(b)-1 {
		return -1
	}
	prev := uint64(0)
	if w > 0 {
		prev = b[w-1] >> 63
	}
	starts := (b[w] &^ (b[w]<<1 | prev)) >> (p & 63) << (p & 63)
	for starts == 0 {
		w++
		if w >= len(b)-1 {
			return -1
		}
		starts = b[w] &^ (b[w]<<1 | b[w-1]>>63)
	}
	return w<<6 + bits.TrailingZeros64(starts)
}

// wordEnd returns the end of the word that starts at s.
func (m *Matcher) wordEnd(s int) int {
	b := m.bits
	w := s >> 6
	gap := ^b[w] >> (s & 63) // zero bits of the word from s on
	if gap != 0 {
		return s + bits.TrailingZeros64(gap)
	}
	e := (w + 1) << 6
	for w++; ^b[w] == 0; w++ {
		e += 64
	}
	return e + bits.TrailingZeros64(^b[w])
}

// keyOf is the wordKey of the ASCII word raw[s:e].
func keyOf(raw []byte, s, e int) uint64 {
	var v uint64
	if s+8 <= len(raw) {
		v = binary.LittleEndian.Uint64(raw[s:])
	} else {
		var t [8]byte
		copy(t[:], raw[s:])
		v = binary.LittleEndian.Uint64(t[:])
	}
	l := e - s
	if l < 8 {
		v &= ^uint64(0) >> (64 - 8*l)
	}
	return wordKey(v|or20&(^uint64(0)>>(64-8*min(l, 8))), l)
}

// docASCII is Doc's word-by-word part and samples for an all-ASCII
// document whose word bitmap is in m.bits.
func (m *Matcher) docASCII(raw []byte, off int64, exact, jaccard bool) {
	x := m.idx
	n := x.opt.ShingleN
	words := 0
	for w := 0; w < len(m.bits)-1; w++ {
		prev := uint64(0)
		if w > 0 {
			prev = m.bits[w-1] >> 63
		}
		words += bits.OnesCount64(m.bits[w] &^ (m.bits[w]<<1 | prev))
	}
	maxMiss := 0
	if jaccard {
		// The document has at most words-n+1 distinct shingles.
		if size := words - n + 1; size <= 0 || float64(size) < x.opt.Jaccard*float64(x.minShingles)-1e-9 {
			jaccard = false
		} else {
			maxMiss = maxMisses(min(x.jlimit, size), x.opt.Jaccard)
			m.missed.reset(maxMiss + 1)
		}
	}
	outRot := (shingleRot * n) % 64
	keys, starts := m.words[:0], m.starts[:0]
	var roll uint64
	for s := m.nextStart(0); s >= 0 && (jaccard || x.dense); {
		e := m.wordEnd(s)
		key := keyOf(raw, s, e)
		k := len(keys)
		keys = append(keys, key)
		starts = append(starts, s)
		s = m.nextStart(e)
		if x.bigrams != nil && k > 0 {
			if pk := pairHash(keys[k-1], key); x.bigrams.mayHave(pk) {
				for _, v := range x.bigrams.get(pk) {
					m.verifyExact(int32(v), raw, off)
				}
			}
		}
		if x.unigrams != nil {
			for _, v := range x.unigrams.lookup(key) {
				m.verifyExact(int32(v), raw, off)
			}
		}
		if !jaccard {
			continue
		}
		if k < n {
			roll = bits.RotateLeft64(roll, shingleRot) ^ key
			if k < n-1 {
				continue
			}
		} else {
			roll = bits.RotateLeft64(roll, shingleRot) ^ bits.RotateLeft64(keys[k-n], outRot) ^ key
		}
		if sh := fastMix(roll); !x.keyShingles.mayHave(sh) && m.missed.add(sh) && m.missed.n > maxMiss {
			jaccard = false // no item can reach the threshold
		}
	}
	m.words, m.starts = keys, starts
	if jaccard {
		// Read to the end and not ruled out: the Jaccard test proper.
		m.jaccardFull(raw, off)
		return
	}
	if !exact || x.dense || len(keys) == words {
		return
	}
	// Sampled, as in Doc.
	p := 0
	if len(keys) >= 2 {
		p = starts[len(keys)-2]
	} else if len(keys) == 1 {
		p = starts[0]
	}
	for p < len(raw) {
		s := m.nextStart(p + 1)
		if s < 0 {
			break
		}
		p = s + x.stride - 1 // see Doc
		e := m.wordEnd(s)
		key := keyOf(raw, s, e)
		if x.unigrams != nil {
			for _, v := range x.unigrams.lookup(key) {
				m.verifyExact(int32(v), raw, off)
			}
		}
		if x.bigrams == nil {
			continue
		}
		s2 := m.nextStart(e)
		if s2 < 0 {
			continue
		}
		for _, v := range x.bigrams.lookup(pairHash(key, keyOf(raw, s2, m.wordEnd(s2)))) {
			m.verifyExact(int32(v), raw, off)
		}
	}
}
