package dedup

import (
	"encoding/binary"
	"math/bits"
)

// The all-ASCII document path of Matcher.Doc. One branch-free pass marks
// every word byte (ASCII letters and digits: the tokenizer's words, as
// the document has no other) in a bitmap: with AVX2 64 bytes per step,
// the tail zero-padded to one more block; else 8 loads of 8 bytes per
// step and the tail 8 bytes at a time. The bitmap gives the word count,
// which tightens the Jaccard miss bound to the document's own shingle
// count, and the words' starts and lengths, so both the Jaccard part and
// the samples of the exact part read a word's key with one load and no
// parsing.

// wordBits fills m.bits with the word bytes of raw and reports whether raw
// is all ASCII (else m.bits is not valid and the general path runs).
func (m *Matcher) wordBits(raw []byte) bool {
	nw := (len(raw) + 63) / 64
	if cap(m.bits) < nw+1 {
		m.bits = make([]uint64, nw+1)
	}
	b := m.bits[:nw+1] // b[nw] stays 0: a word never runs past the end
	w := len(raw) / 64
	high := wordBlocks(raw[:64*w], b)
	clear(b[w:]) // the tail's words are ORed in
	switch {
	case 64*w == len(raw):
	case hasAVX2:
		// The tail as one more block: zero bytes are not word bytes.
		var t [64]byte
		copy(t[:], raw[64*w:])
		high |= wordBlocks(t[:], b[w:w+1])
	default:
		c := 8 * w
		for ; 8*c+8 <= len(raw); c++ {
			v := binary.LittleEndian.Uint64(raw[8*c:])
			high |= v
			b[c>>3] |= wordByteMask(v) << (8 * (c & 7))
		}
		if 8*c < len(raw) {
			var t [8]byte // zero bytes are not word bytes
			copy(t[:], raw[8*c:])
			v := binary.LittleEndian.Uint64(t[:])
			high |= v
			b[c>>3] |= wordByteMask(v) << (8 * (c & 7))
		}
	}
	m.bits = b
	return high&highs == 0
}

// wordBlocksGo sets b[w] to the word bytes of the 64-byte block w of raw,
// whose length is a multiple of 64, and returns the OR of raw's bytes as
// uint64s: its high bits are set when raw has a non-ASCII byte.
func wordBlocksGo(raw []byte, b []uint64) (high uint64) {
	// 8 loads a step whose masks are independent.
	for w := 0; 64*w+64 <= len(raw); w++ {
		q := raw[64*w : 64*w+64]
		v0, v1 := binary.LittleEndian.Uint64(q[0:]), binary.LittleEndian.Uint64(q[8:])
		v2, v3 := binary.LittleEndian.Uint64(q[16:]), binary.LittleEndian.Uint64(q[24:])
		v4, v5 := binary.LittleEndian.Uint64(q[32:]), binary.LittleEndian.Uint64(q[40:])
		v6, v7 := binary.LittleEndian.Uint64(q[48:]), binary.LittleEndian.Uint64(q[56:])
		high |= v0 | v1 | v2 | v3 | v4 | v5 | v6 | v7
		b[w] = wordByteMask(v0) | wordByteMask(v1)<<8 | wordByteMask(v2)<<16 | wordByteMask(v3)<<24 |
			wordByteMask(v4)<<32 | wordByteMask(v5)<<40 | wordByteMask(v6)<<48 | wordByteMask(v7)<<56
	}
	return high
}

// wordByteMask has bit k set when byte k of v is an ASCII letter or digit.
func wordByteMask(v uint64) uint64 {
	return ((^nonWordBytes(v) & highs) >> 7) * 0x0102040810204080 >> 56
}

// markStarts marks the word starts of the bitmap in m.wstarts and returns
// how many words there are.
func (m *Matcher) markStarts() int {
	if cap(m.wstarts) < len(m.bits) {
		m.wstarts = make([]uint64, len(m.bits))
	}
	m.wstarts = m.wstarts[:len(m.bits)]
	words := 0
	prev := uint64(0)
	for w, b := range m.bits {
		st := b &^ (b<<1 | prev)
		m.wstarts[w] = st
		words += bits.OnesCount64(st)
		prev = b >> 63
	}
	return words
}

// nextStart returns the first word start at or after byte p (-1: none),
// from the word starts markStarts marks in m.wstarts.
func (m *Matcher) nextStart(p int) int {
	st := m.wstarts
	w := p >> 6
	if w >= len(st) {
		return -1
	}
	s := st[w] >> (p & 63) << (p & 63)
	for s == 0 {
		w++
		if w >= len(st) {
			return -1
		}
		s = st[w]
	}
	return w<<6 + bits.TrailingZeros64(s)
}

// wordEnd returns the end of the word that starts at s. The bitmap word
// of s and the next one give the end in one step unless the word is 64
// bytes or longer: a word that crosses into the next bitmap word costs no
// mispredicted branch.
func (m *Matcher) wordEnd(s int) int {
	b := m.bits
	w, r := s>>6, uint(s&63)
	gap := ^(b[w]>>r | b[w+1]<<(64-r)) // zero bits of the word from s on (b[w+1] exists: wordBits)
	if gap != 0 {
		return s + bits.TrailingZeros64(gap)
	}
	e := (w + 1) << 6
	for w++; ^b[w] == 0; w++ {
		e += 64
	}
	return e + bits.TrailingZeros64(^b[w])
}

// pairAfter returns the first word starting after byte p and the word
// after it, [s, e) and [s2, e2), when the 64 bitmap bits from p hold both
// (s = -1: they do not). One window of bits gives all four in registers,
// where nextStart and wordEnd twice are a chain of dependent loads.
func (m *Matcher) pairAfter(p int) (s, e, s2, e2 int) {
	b := m.bits
	w, r := p>>6, uint(p&63)
	win := b[w]>>r | b[w+1]<<(64-r) // bit j: byte p+j is a word byte (b[w+1] exists: wordBits)
	starts := win &^ (win<<1 | 1)   // bit 0 is p itself, not after it
	ends := ^win & (win << 1)
	d := uint(bits.TrailingZeros64(starts))
	d1 := uint(bits.TrailingZeros64(ends >> d << d))
	d2 := uint(bits.TrailingZeros64(starts >> d1 << d1))
	d3 := uint(bits.TrailingZeros64(ends >> d2 << d2))
	if d3 == 64 { // no start, end, start or end in the window: 64 stays
		return -1, 0, 0, 0
	}
	return p + int(d), p + int(d1), p + int(d2), p + int(d3)
}

// keyOf is the wordKey of the ASCII word raw[s:e]. Words of under and over
// 8 bytes take one branch-free path (their lengths alternate at random).
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
	keep := ^uint64(0) >> (64 - 8*min(l, 8)) // the word's first min(l, 8) bytes
	return wordKey((v|or20)&keep, l)
}

// docASCII is Doc's word-by-word part and samples for an all-ASCII
// document whose word bitmap is in m.bits. The samples come first and
// cover the whole document: besides the exact part, each word pair they
// meet that is in no item (pairs, a filter over the consecutive word
// pairs of every prompt with shingles) shows that the shingle ending with
// it is in no item, so with the words' count they often rule Jaccard out
// before any word is read one by one. Misses are counted by the key of
// their shingle's last word pair, a function of the shingle, so distinct
// counts stay lower bounds of distinct shingles.
func (m *Matcher) docASCII(raw []byte, off int64, exact, jaccard bool) {
	x := m.idx
	n := x.opt.ShingleN
	words := m.markStarts()
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
	certs := jaccard && n >= 2
	minCert := 0 // start of word n-2: a pair from there on ends a shingle
	if certs {
		for k, s := 0, m.nextStart(0); k < n-2; k++ {
			s = m.nextStart(m.wordEnd(s))
			minCert = s
		}
	}
	if exact || certs {
		// Every position from p to the start s of the word after it maps
		// to that word, so the next sample may be stride-1 bytes past s.
		for p := 0; p < len(raw); {
			s, e, s2, e2 := m.pairAfter(p)
			if s < 0 {
				s = m.nextStart(p + 1)
				if s < 0 {
					break
				}
				e = m.wordEnd(s)
				if s2 = m.nextStart(e); s2 >= 0 {
					e2 = m.wordEnd(s2)
				}
			}
			p = s + x.stride - 1
			key := keyOf(raw, s, e)
			if x.unigrams != nil {
				for _, v := range x.unigrams.lookup(key) {
					m.verifyExact(int32(v), raw, off)
				}
			}
			if s2 < 0 {
				break
			}
			pk := pairHash(key, keyOf(raw, s2, e2))
			if x.bigrams != nil && x.bigrams.mayHave(pk) {
				for _, v := range x.bigrams.get(pk) {
					m.verifyExact(int32(v), raw, off)
				}
			}
			if certs && s >= minCert && !x.pairs.mayHave(pk) && m.missed.add(pk) && m.missed.n > maxMiss {
				certs, jaccard = false, false // no item can reach the threshold
				if !exact {
					break
				}
			}
		}
	}
	if !jaccard {
		return
	}
	// Word by word from the start, for Jaccard only.
	outRot := (shingleRot * n) % 64
	keys := m.words[:0]
	var roll uint64
	for s := m.nextStart(0); s >= 0; {
		e := m.wordEnd(s)
		key := keyOf(raw, s, e)
		k := len(keys)
		keys = append(keys, key)
		s = m.nextStart(e)
		if roll = rollKey(roll, keys, k, n, outRot); k < n-1 {
			continue
		}
		if x.keyShingles.mayHave(fastMix(roll)) {
			continue
		}
		id := key // the shingle's last word (n = 1) or word pair
		if n > 1 {
			id = pairHash(keys[k-1], key)
		}
		if m.missed.add(id) && m.missed.n > maxMiss {
			jaccard = false // no item can reach the threshold
			break
		}
	}
	m.words = keys
	if jaccard {
		// Read to the end and not ruled out: the Jaccard test proper.
		m.jaccardFull(raw, off)
	}
}
