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
	sh      []uint64
	set     u64set
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
func (m *Matcher) Doc(raw []byte, off int64) {
	x := m.idx
	m.docNo++
	if m.docNo == 0 { // wrapped: forget old stamps
		clear(m.checked)
		m.docNo = 1
	}
	m.normOK = false
	m.tok.run(raw, x.whole != nil)
	words := m.tok.words
	if x.whole != nil {
		m.matchWhole(words, raw, off)
	}
	if x.unigrams != nil {
		for _, w := range words {
			for _, v := range x.unigrams.lookup(w) {
				m.verifyExact(int32(v), raw, off)
			}
		}
	}
	if x.anchors != nil {
		m.matchAnchors(raw, off)
	}
	if x.keys != nil {
		m.matchShingles(words, raw, off)
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

// matchWhole looks for short prompts equal to the whole document or a line.
func (m *Matcher) matchWhole(words []uint64, raw []byte, off int64) {
	x := m.idx
	try := func(ws []uint64, text []byte) {
		if len(ws) > x.maxShortWords {
			return // more words than any short prompt
		}
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
	try(words, raw)
	if len(m.tok.lines) == 0 {
		return
	}
	w0, b0 := int32(0), int32(0)
	for _, le := range m.tok.lines {
		try(words[w0:le.words], raw[b0:le.at])
		w0, b0 = le.words, le.at+1
	}
	try(words[w0:], raw[b0:])
}

// matchShingles probes every word n-gram of the document: interior
// shingles of long prompts (exact candidates) over the whole document, and
// prefix shingles (Jaccard candidates) while the document is small enough
// to reach the threshold with some item.
func (m *Matcher) matchShingles(words []uint64, raw []byte, off int64) {
	x := m.idx
	n := x.opt.ShingleN
	m.sh = appendShingles(m.sh[:0], words, n)
	m.cands = m.cands[:0]
	k := x.keys
	for _, h := range m.sh {
		if !k.mayHave(h) {
			continue
		}
		for _, v := range k.get(h) {
			g := int32(v >> 1)
			if v&1 == tagExact {
				m.verifyExact(g, raw, off)
			} else {
				m.cands = append(m.cands, g)
			}
		}
	}
	if len(m.cands) > 0 {
		m.verifyJaccard(off)
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
