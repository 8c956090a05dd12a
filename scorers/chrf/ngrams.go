package chrf

import (
	"math/bits"
	"unicode"
)

// workspace holds the scratch buffers of one scoring goroutine; CHRF pools
// them so that scoring a segment allocates nothing once warm.
type workspace struct {
	tab   table
	orig  []rune     // the segment's runes
	low   []rune     // orig lowercased, when asked
	text  []rune     // orig or low
	chars []rune     // text without whitespace, for character n-grams
	words []uint32   // token ids
	hyp   [][]uint32 // hypothesis n-gram ids per order
	ref   [][]uint32 // reference n-gram ids per order
	cnt   []int32    // reference counts indexed by n-gram id; all zero between uses
	cand  Stats      // statistics against one candidate reference
}

func newWorkspace(order int) *workspace {
	return &workspace{
		hyp:  make([][]uint32, order),
		ref:  make([][]uint32, order),
		cand: make(Stats, 3*order),
	}
}

// stats writes into dst the statistics of hyp against the best of refs
// (all non-empty), by sentence F-score; the first reference wins ties.
func (c *CHRF) stats(w *workspace, hyp string, refs []string, dst Stats) {
	w.tab.reset() // ids are shared by the hypothesis and all its references
	c.extract(w, hyp, w.hyp)
	if len(refs) == 1 {
		c.extract(w, refs[0], w.ref)
		w.match(dst)
		return
	}
	best := -1.0
	for _, r := range refs {
		c.extract(w, r, w.ref)
		w.match(w.cand)
		if f := c.FScore(w.cand); f > best {
			best = f
			copy(dst, w.cand)
		}
	}
}

// wordKey marks keys that chain word ids, keeping them apart from keys that
// chain a character onto an n-gram id (those have a rune, < 0x110000, in the
// low half and an id below 2^31 in the high half).
const wordKey = 1 << 63

// extract fills ids[o] with the ids of s's n-grams of order o+1: character
// orders first, then word orders, as in Stats.
func (c *CHRF) extract(w *workspace, s string, ids [][]uint32) {
	for o := range ids {
		ids[o] = ids[o][:0]
	}
	w.orig = w.orig[:0]
	for _, r := range s { // invalid UTF-8 bytes decode as U+FFFD
		w.orig = append(w.orig, r)
	}
	w.text = w.orig
	if c.opt.Lowercase {
		w.low = pyLower(w.low[:0], w.orig)
		w.text = w.low
	}

	chars := w.text
	if !c.opt.Whitespace {
		w.chars = w.chars[:0]
		for _, r := range w.text {
			if !isSpace(r) {
				w.chars = append(w.chars, r)
			}
		}
		chars = w.chars
	}
	// An n-gram's id is intern(id of its first n-1 runes, last rune), so every
	// distinct rune sequence gets one id and starting positions walk the
	// chain once for all orders.
	nc := c.opt.CharOrder
	for i := range chars {
		prev := uint32(0)
		for n := 0; n < nc && i+n < len(chars); n++ {
			prev = w.tab.intern(uint64(prev)<<32 | uint64(uint32(chars[i+n])))
			ids[n] = append(ids[n], prev)
		}
	}

	if c.opt.WordOrder == 0 {
		return
	}
	w.words = w.words[:0]
	forEachToken(w.text, func(tok []rune) {
		id := uint32(0)
		for _, r := range tok {
			id = w.tab.intern(uint64(id)<<32 | uint64(uint32(r)))
		}
		w.words = append(w.words, id)
	})
	for i, id := range w.words {
		ids[nc] = append(ids[nc], id)
		prev := id
		for n := 1; n < c.opt.WordOrder && i+n < len(w.words); n++ {
			prev = w.tab.intern(wordKey | uint64(prev)<<32 | uint64(w.words[i+n]))
			ids[nc+n] = append(ids[nc+n], prev)
		}
	}
}

// match writes the [hyp, ref, match] triples of w.hyp against w.ref: the
// clipped count sum_g min(hyp_g, ref_g) per order, and, as sacrebleu does, a
// hypothesis count of 0 where the reference has no n-gram of that order.
func (w *workspace) match(dst Stats) {
	if n := int(w.tab.next); len(w.cnt) < n {
		w.cnt = append(w.cnt, make([]int32, n-len(w.cnt))...)
	}
	for o := range w.hyp {
		h, r := w.hyp[o], w.ref[o]
		if len(r) == 0 {
			dst[3*o], dst[3*o+1], dst[3*o+2] = 0, 0, 0
			continue
		}
		for _, id := range r {
			w.cnt[id]++
		}
		m := 0
		for _, id := range h {
			if w.cnt[id] > 0 {
				w.cnt[id]--
				m++
			}
		}
		for _, id := range r {
			w.cnt[id] = 0
		}
		dst[3*o], dst[3*o+1], dst[3*o+2] = len(h), len(r), m
	}
}

// forEachToken calls f with sacrebleu's chrF++ word tokens of text: the
// whitespace-separated words, where a word of two or more characters has a
// final ASCII punctuation character split off, or else an initial one.
func forEachToken(text []rune, f func([]rune)) {
	for i := 0; i < len(text); {
		if isSpace(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		word := text[i:j]
		switch {
		case len(word) == 1:
			f(word)
		case isPunct(word[len(word)-1]):
			f(word[:len(word)-1])
			f(word[len(word)-1:])
		case isPunct(word[0]):
			f(word[:1])
			f(word[1:])
		default:
			f(word)
		}
		i = j
	}
}

// Tokens returns the chrF++ word tokens of s (after lowercasing when the
// metric is case-insensitive); for tests and debugging.
func (c *CHRF) Tokens(s string) []string {
	text := []rune(s)
	if c.opt.Lowercase {
		text = pyLower(nil, text)
	}
	var out []string
	forEachToken(text, func(tok []rune) { out = append(out, string(tok)) })
	return out
}

// isPunct reports membership in Python's string.punctuation.
func isPunct(r rune) bool {
	return r < 0x80 && (r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~')
}

// isSpace is Python's str.isspace, which str.split() splits on: Go's
// unicode.IsSpace plus the ASCII separators U+001C..U+001F.
func isSpace(r rune) bool {
	if r <= ' ' {
		return asciiSpace>>uint(r)&1 == 1
	}
	return r >= 0x85 && unicode.IsSpace(r)
}

// asciiSpace has bit r set for \t \n \v \f \r, U+001C..U+001F and ' '.
const asciiSpace = 1<<'\t' | 1<<'\n' | 1<<'\v' | 1<<'\f' | 1<<'\r' | 0xf<<0x1c | 1<<' '

// pyLower appends to dst the lowercasing of src as Python's str.lower does
// it: the simple lowercase mapping, except U+0130 (İ), which becomes "i̇", and
// U+03A3 (Σ), which becomes final ς when it ends a word (Final_Sigma).
func pyLower(dst, src []rune) []rune {
	for i, r := range src {
		switch {
		case r < 0x80:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			dst = append(dst, r)
		case r == 0x130:
			dst = append(dst, 'i', 0x307)
		case r == 0x3a3:
			if finalSigma(src, i) {
				dst = append(dst, 0x3c2)
			} else {
				dst = append(dst, 0x3c3)
			}
		default:
			dst = append(dst, unicode.ToLower(r))
		}
	}
	return dst
}

// finalSigma is Python's Final_Sigma test: a cased letter, then any
// case-ignorable characters, before position i, and no cased letter after
// the case-ignorable characters that follow it.
func finalSigma(s []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(s[j]) {
		j--
	}
	if j < 0 || !cased(s[j]) {
		return false
	}
	j = i + 1
	for j < len(s) && caseIgnorable(s[j]) {
		j++
	}
	return j == len(s) || !cased(s[j])
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func caseIgnorable(r rune) bool {
	switch r {
	// Word_Break MidLetter, MidNumLet and Single_Quote characters.
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// table interns 64-bit keys to dense ids 1, 2, ...; id 0 stands for the empty
// prefix. It is open addressing with linear probing; reset is O(1) thanks to
// per-slot generation stamps.
type table struct {
	slots []slot
	shift uint
	gen   uint32
	used  int
	next  uint32
}

type slot struct {
	key uint64
	id  uint32
	gen uint32
}

func (t *table) reset() {
	t.gen++
	if t.gen == 0 { // wrapped: stale stamps could look current
		clear(t.slots)
		t.gen = 1
	}
	t.used = 0
	t.next = 1
}

func (t *table) intern(key uint64) uint32 {
	if 2*(t.used+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := (key * 0x9e3779b97f4a7c15) >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.gen != t.gen {
			*s = slot{key: key, id: t.next, gen: t.gen}
			t.next++
			t.used++
			return s.id
		}
		if s.key == key {
			return s.id
		}
	}
}

func (t *table) grow() {
	old, oldGen := t.slots, t.gen
	n := max(1024, 2*len(old))
	t.slots = make([]slot, n)
	t.shift = uint(64 - bits.TrailingZeros(uint(n)))
	t.gen = 1
	mask := uint64(n - 1)
	for _, s := range old {
		if s.gen != oldGen {
			continue
		}
		i := (s.key * 0x9e3779b97f4a7c15) >> t.shift
		for t.slots[i].gen == t.gen {
			i = (i + 1) & mask
		}
		t.slots[i] = slot{key: s.key, id: s.id, gen: t.gen}
	}
}
