package dedup

import (
	"bytes"
	"math/bits"
	"slices"
	"strings"
)

// Match kinds.
const (
	KindExact   = "exact"   // normalised prompt is a substring of a document
	KindWhole   = "whole"   // short prompt equals a whole normalised document or line
	KindJaccard = "jaccard" // shingle Jaccard reached the threshold
	KindTask    = "task"    // dropped because another item of its task matched (reports only)
)

func kindRank(k string) int {
	switch k {
	case KindExact:
		return 0
	case KindWhole:
		return 1
	}
	return 2
}

// Match records where an item was found.
type Match struct {
	ItemID  string  `json:"item_id"`
	Kind    string  `json:"kind"`
	URI     string  `json:"uri"`
	Offset  int64   `json:"offset"` // start of the document, in the (decompressed) file
	Jaccard float64 `json:"jaccard,omitempty"`
}

// before orders matches of the same item: the first occurrence in the
// corpus wins, so the result does not depend on how the corpus was sharded.
func (m Match) before(o Match) bool {
	if m.URI != o.URI {
		return m.URI < o.URI
	}
	if m.Offset != o.Offset {
		return m.Offset < o.Offset
	}
	return kindRank(m.Kind) < kindRank(o.Kind)
}

// MergeMatches merges shard results into one match per item (its first
// occurrence in the corpus), sorted by item id. The outcome does not depend
// on how the corpus was split.
func MergeMatches(lists ...[]Match) []Match {
	best := map[string]Match{}
	for _, l := range lists {
		for _, m := range l {
			if b, ok := best[m.ItemID]; !ok || m.before(b) {
				best[m.ItemID] = m
			}
		}
	}
	out := make([]Match, 0, len(best))
	for _, m := range best {
		out = append(out, m)
	}
	slices.SortFunc(out, byItemID)
	return out
}

// byItemID orders matches by item id, bytewise.
func byItemID(a, b Match) int { return strings.Compare(a.ItemID, b.ItemID) }

// groupMatch is a match of a prompt group, before expansion to items.
type groupMatch struct {
	kind    string
	offset  int64
	jaccard float64
}

// Matcher screens documents one at a time against an index and keeps the
// first match of each prompt group. It owns scratch buffers, so each
// goroutine needs its own. The corpus scanner (infra/corpus) feeds it the
// documents of a shard in order.
type Matcher struct {
	idx   *Index
	found map[int32]groupMatch

	tok     tokenizer
	norm    []byte // normalised document, made only when a candidate needs it
	normOK  bool
	words   []uint64 // word keys of the part of the document read word by word
	starts  []int    // and where they start
	bits    []uint64 // word bytes of an all-ASCII document (ascii.go)
	wstarts []uint64 // and the starts of its words
	sh      []uint64
	set     u64set
	missed  u64set // distinct shingles found in no item
	cands   []int32
	checked []uint32 // per group: the doc number it was last verified in
	docNo   uint32
}

func NewMatcher(idx *Index) *Matcher {
	return &Matcher{idx: idx, found: make(map[int32]groupMatch), checked: make([]uint32, len(idx.groups))}
}

// Record restores a match found before (one of a checkpoint's), so that a
// resumed screen keeps it as the item's first occurrence. It reports false
// when the index has no item mt.ItemID.
func (m *Matcher) Record(mt Match) bool {
	g, ok := m.idx.byID[mt.ItemID]
	if !ok {
		return false
	}
	m.record(g, groupMatch{kind: mt.Kind, offset: mt.Offset, jaccard: mt.Jaccard})
	return true
}

func (m *Matcher) record(g int32, gm groupMatch) {
	if _, ok := m.found[g]; !ok {
		m.found[g] = gm
	}
}

// normDoc returns the normalised document, computing it on first use.
func (m *Matcher) normDoc(raw []byte) []byte {
	if !m.normOK {
		m.norm = appendNorm(m.norm[:0], raw, nil)
		m.normOK = true
	}
	return m.norm
}

// verifyExact checks a long prompt against the document once per document.
func (m *Matcher) verifyExact(g int32, raw []byte, off int64) {
	if m.checked[g] == m.docNo {
		return
	}
	m.checked[g] = m.docNo
	if _, done := m.found[g]; done {
		return
	}
	if bytes.Contains(m.normDoc(raw), m.idx.groups[g].norm) {
		m.record(g, groupMatch{kind: KindExact, offset: off})
	}
}

// Doc screens one raw document that starts at offset off.
//
// The document is read word by word from its start while the Jaccard
// part can still match (every word pair looked up for the exact part on
// the way); once more distinct shingles than Index.maxMiss are in no item,
// no item can reach the threshold, and the rest is only sampled for the
// exact part: the word pair after every stride-th byte.
func (m *Matcher) Doc(raw []byte, off int64) {
	x := m.idx
	m.docNo++
	if m.docNo == 0 { // wrapped: forget old stamps
		clear(m.checked)
		m.docNo = 1
	}
	m.normOK = false
	if x.whole != nil {
		m.matchWhole(raw, off)
	}
	if x.anchors != nil {
		m.matchAnchors(raw, off)
	}
	exact := x.bigrams != nil || x.unigrams != nil
	jaccard := x.jkeys != nil
	if !exact && !jaccard {
		return
	}
	if m.wordBits(raw) {
		m.docASCII(raw, off, exact, jaccard)
		return
	}
	// Word by word, by key (wordKey): shingles of keys stand for the
	// shingles of words in the miss count, as two shingles with different
	// keys differ, and one whose keys are in no item is in no item.
	n := x.opt.ShingleN
	outRot := (shingleRot * n) % 64
	keys := m.words[:0]
	if jaccard {
		m.missed.reset(x.maxMiss + 1)
	}
	var roll uint64
	i := 0
	eof := false
	starts := m.starts[:0]
	done := 0 // words processed
	for (jaccard || x.dense) && !eof {
		// Read as many words as it takes to rule Jaccard out if each
		// brings a new miss (at least 8).
		want := len(keys) + 8
		if jaccard {
			want = max(want, len(keys)+x.maxMiss+1-m.missed.n+max(0, n-1-len(keys)))
		}
		keys, starts, i = m.tok.appendKeys(raw, i, want, keys, starts)
		eof = len(keys) < want
		for k := done; k < len(keys); k++ {
			key := keys[k]
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
			if roll = rollKey(roll, keys, k, n, outRot); k < n-1 {
				continue
			}
			if sh := fastMix(roll); !x.keyShingles.mayHave(sh) && m.missed.add(sh) && m.missed.n > x.maxMiss {
				jaccard = false // no item can reach the threshold
			}
		}
		done = len(keys)
	}
	m.starts = starts
	m.words = keys
	if jaccard && m.missed.n > maxMisses(min(x.jlimit, len(keys)-n+1), x.opt.Jaccard) {
		// Read to the end: the bound on the distinct shingles is now
		// their positions, so a short document is ruled out here.
		jaccard = false
	}
	if jaccard {
		// Read to the end and not ruled out: the Jaccard test proper.
		m.jaccardFull(raw, off)
		return
	}
	if !exact || x.dense || eof {
		return
	}
	// Sampled. Word pairs starting at word len(keys)-2 and before were
	// looked up, so an occurrence not met yet starts at or after word
	// len(keys)-2; from there on every stride bytes hold a sample.
	p := 0
	if len(keys) >= 2 {
		p = starts[len(keys)-2]
	} else if len(keys) == 1 {
		p = starts[0]
	}
	for p < len(raw) {
		h, s, e := m.tok.after(raw, p)
		if s < 0 {
			break
		}
		// Every position from p to s maps to this word: the next sample
		// may be as far as stride-1 bytes past s.
		p = s + x.stride - 1
		h2, s2, _ := m.tok.keyAt(raw, e)
		if x.unigrams != nil {
			for _, v := range x.unigrams.lookup(h) {
				m.verifyExact(int32(v), raw, off)
			}
		}
		if s2 >= 0 && x.bigrams != nil {
			for _, v := range x.bigrams.lookup(pairHash(h, h2)) {
				m.verifyExact(int32(v), raw, off)
			}
		}
	}
}

// jaccardFull is the Jaccard test of a document not ruled out by the
// miss bound: every shingle, the candidates by prefix filter, and their
// exact Jaccard values.
func (m *Matcher) jaccardFull(raw []byte, off int64) {
	x := m.idx
	m.tok.run(raw, false)
	m.sh = appendShingles(m.sh[:0], m.tok.words, x.opt.ShingleN)
	m.cands = m.cands[:0]
	for _, sh := range m.sh {
		for _, v := range x.jkeys.lookup(sh) {
			m.cands = append(m.cands, int32(v))
		}
	}
	if len(m.cands) > 0 {
		m.verifyJaccard(off)
	}
}

// matchAnchors finds the long prompts without interior words by sampled
// byte windows of the normalised document.
func (m *Matcher) matchAnchors(raw []byte, off int64) {
	x := m.idx
	norm := m.normDoc(raw)
	if len(norm) < x.minAnchored {
		return
	}
	W, S := x.anchorW, x.anchorS
	for q := 0; q+W <= len(norm); q += S {
		for _, v := range x.anchors.lookup(hashBytes(norm[q : q+W])) {
			g, o := int32(v>>8), int(v&0xff)
			if _, done := m.found[g]; done {
				continue
			}
			p := q - o
			pat := x.groups[g].norm
			if p >= 0 && p+len(pat) <= len(norm) && bytes.Equal(norm[p:p+len(pat)], pat) {
				m.record(g, groupMatch{kind: KindExact, offset: off})
			}
		}
	}
}

// matchWhole looks for short prompts equal to the whole document or a
// line. Only texts of at most maxShortWords words are hashed.
func (m *Matcher) matchWhole(raw []byte, off int64) {
	x := m.idx
	try := func(text []byte) {
		ws := m.words[:0]
		for i := 0; ; {
			h, _, s, e := m.tok.next(text, i)
			if s < 0 {
				break
			}
			if len(ws) == x.maxShortWords {
				return // more words than any short prompt
			}
			ws = append(ws, h)
			i = e
		}
		m.words = ws
		for _, v := range x.whole.lookup(seqHash(ws)) {
			g := int32(v)
			if _, done := m.found[g]; done {
				continue
			}
			if bytes.Equal(appendNorm(m.tok.low[:0], text, nil), x.groups[g].norm) {
				m.record(g, groupMatch{kind: KindWhole, offset: off})
			}
		}
	}
	try(raw)
	if bytes.IndexByte(raw, '\n') < 0 {
		return
	}
	for rest := raw; ; {
		j := bytes.IndexByte(rest, '\n')
		if j < 0 {
			try(rest)
			return
		}
		try(rest[:j])
		rest = rest[j+1:]
	}
}

// verifyJaccard computes the Jaccard similarity of the document (its
// shingles are in m.sh) with each candidate group.
func (m *Matcher) verifyJaccard(off int64) {
	x := m.idx
	t := x.opt.Jaccard
	total := len(m.sh) // an upper bound of the distinct count
	cands := m.cands[:0]
	for _, g := range m.cands {
		if _, done := m.found[g]; !done && float64(total) >= t*float64(len(x.groups[g].shingles))-1e-9 {
			cands = append(cands, g)
		}
	}
	if len(cands) == 0 {
		return
	}
	// A document with more distinct shingles than maxShingles/t cannot
	// reach the threshold with any item; stop counting there.
	limit := int(float64(x.maxShingles)/t) + 1
	d := m.set.reset(min(total, limit+1))
	for _, h := range m.sh {
		if d.add(h) && d.n > limit {
			return
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	for _, g := range cands {
		if _, done := m.found[g]; done {
			continue
		}
		is := x.groups[g].shingles
		// Size filter: J <= min/max of the two sizes.
		if float64(min(len(is), d.n)) < t*float64(max(len(is), d.n))-1e-9 {
			continue
		}
		inter := 0
		for _, h := range is {
			if d.has(h) {
				inter++
			}
		}
		j := float64(inter) / float64(len(is)+d.n-inter)
		if j >= t-1e-12 {
			m.record(g, groupMatch{kind: KindJaccard, offset: off, jaccard: j})
		}
	}
}

// u64set is a reusable open-addressing set of hashes.
type u64set struct {
	slots []uint64 // 0 = empty; hash 0 is stored as 1
	mask  uint64
	n     int // distinct values added
}

// reset empties the set and sizes it for about size values.
func (s *u64set) reset(size int) *u64set {
	want := 1 << max(4, bits.Len(uint(size*2)))
	if cap(s.slots) >= want {
		s.slots = s.slots[:want]
		clear(s.slots)
	} else {
		s.slots = make([]uint64, want)
	}
	s.mask = uint64(want - 1)
	s.n = 0
	return s
}

// add inserts h and reports whether it was new. The set grows as needed.
func (s *u64set) add(h uint64) bool {
	h = fixKey(h)
	for i := h & s.mask; ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case h:
			return false
		case 0:
			s.slots[i] = h
			s.n++
			if s.n*2 > len(s.slots) {
				s.grow()
			}
			return true
		}
	}
}

func (s *u64set) grow() {
	old := s.slots
	s.slots = make([]uint64, 2*len(old))
	s.mask = uint64(len(s.slots) - 1)
	for _, h := range old {
		if h != 0 {
			for i := h & s.mask; ; i = (i + 1) & s.mask {
				if s.slots[i] == 0 {
					s.slots[i] = h
					break
				}
			}
		}
	}
}

func (s *u64set) has(h uint64) bool {
	h = fixKey(h)
	for i := h & s.mask; ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// Matches expands the groups found so far to per-item matches in the
// corpus file uri, sorted by item id.
func (m *Matcher) Matches(uri string) []Match {
	var out []Match
	for g, gm := range m.found {
		for _, i := range m.idx.groups[g].items {
			out = append(out, Match{ItemID: m.idx.ids[i], Kind: gm.kind, URI: uri, Offset: gm.offset, Jaccard: gm.jaccard})
		}
	}
	slices.SortFunc(out, byItemID)
	return out
}
