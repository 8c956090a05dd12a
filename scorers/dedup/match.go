package dedup

import (
	"bytes"
	"slices"
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

// groupMatch is a match of a prompt group, before expansion to items.
type groupMatch struct {
	kind    string
	offset  int64
	jaccard float64
}

// matcher screens documents one at a time against an index. It owns scratch
// buffers, so each goroutine needs its own.
type matcher struct {
	idx   *Index
	found map[int32]groupMatch

	norm  []byte
	lines []int32
	words []uint64
	sh    []uint64
	cands []int32
}

func newMatcher(idx *Index) *matcher {
	return &matcher{idx: idx, found: make(map[int32]groupMatch)}
}

func (m *matcher) record(g int32, gm groupMatch) {
	if _, ok := m.found[g]; !ok {
		m.found[g] = gm
	}
}

// doc screens one raw document that starts at offset off.
func (m *matcher) doc(raw []byte, off int64) {
	x := m.idx
	var lines *[]int32
	if x.whole != nil {
		m.lines = m.lines[:0]
		lines = &m.lines
	}
	m.norm = appendNorm(m.norm[:0], raw, lines)
	norm := m.norm
	if len(norm) == 0 {
		return
	}
	if x.whole != nil {
		m.matchWhole(norm, off)
		prev := int32(0)
		for _, end := range m.lines {
			m.matchWhole(bytes.TrimSpace(norm[prev:end]), off)
			prev = end
		}
		if prev > 0 {
			m.matchWhole(bytes.TrimSpace(norm[prev:]), off)
		}
	}
	if x.anchors != nil && len(norm) >= x.minLong {
		m.matchExact(norm, off)
	}
	if x.postings != nil {
		m.matchJaccard(norm, off)
	}
}

func (m *matcher) matchWhole(s []byte, off int64) {
	x := m.idx
	if len(s) == 0 || len(s) > x.maxShort || x.shortLenMask[len(s)/64]&(1<<(len(s)%64)) == 0 {
		return
	}
	for _, v := range x.whole.lookup(hashBytes(s)) {
		g := int32(v)
		if bytes.Equal(x.groups[g].norm, s) {
			m.record(g, groupMatch{kind: KindWhole, offset: off})
		}
	}
}

func (m *matcher) matchExact(norm []byte, off int64) {
	x := m.idx
	W, S := x.anchorW, x.anchorS
	a := x.anchors
	for q := 0; q+W <= len(norm); q += S {
		var h uint64
		if W == 32 {
			h = hash32(norm[q:])
		} else {
			h = hashBytes(norm[q : q+W])
		}
		if !a.mayHave(h) {
			continue
		}
		for _, v := range a.get(h) {
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

func (m *matcher) matchJaccard(norm []byte, off int64) {
	x := m.idx
	n := x.opt.ShingleN
	// A document with more distinct shingles than maxShingles/t cannot reach
	// the threshold with any item: stop reading its words early. Long
	// documents are thus cheap, and memory stays bounded by the index.
	limit := int(float64(x.maxShingles)/x.opt.Jaccard) + 1
	var stopped bool
	m.words, stopped = appendWordHashes(m.words[:0], norm, 4*limit+n)
	m.sh = appendShingles(m.sh[:0], m.words, n)
	if stopped {
		// Maybe a repetitive document: decide on distinct shingles.
		slices.Sort(m.sh)
		if len(slices.Compact(m.sh)) > limit {
			return
		}
		m.words, _ = appendWordHashes(m.words[:0], norm, -1)
		m.sh = appendShingles(m.sh[:0], m.words, n)
	}
	m.cands = m.cands[:0]
	p := x.postings
	for _, h := range m.sh {
		if !p.mayHave(h) {
			continue
		}
		for _, v := range p.get(h) {
			m.cands = append(m.cands, int32(v))
		}
	}
	if len(m.cands) == 0 {
		return
	}
	slices.Sort(m.cands)
	m.cands = slices.Compact(m.cands)
	slices.Sort(m.sh)
	d := slices.Compact(m.sh)
	t := x.opt.Jaccard
	for _, g := range m.cands {
		if _, done := m.found[g]; done {
			continue
		}
		is := x.groups[g].shingles
		// Size filter: J <= min/max of the two sizes.
		if float64(min(len(is), len(d))) < t*float64(max(len(is), len(d)))-1e-9 {
			continue
		}
		inter := intersectCount(is, d)
		j := float64(inter) / float64(len(is)+len(d)-inter)
		if j >= t-1e-12 {
			m.record(g, groupMatch{kind: KindJaccard, offset: off, jaccard: j})
		}
	}
}

// intersectCount counts common values of two sorted distinct slices.
func intersectCount(a, b []uint64) int {
	n := 0
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			a = a[1:]
		case a[0] > b[0]:
			b = b[1:]
		default:
			n++
			a, b = a[1:], b[1:]
		}
	}
	return n
}

// matches expands the groups found so far to per-item matches, sorted by id.
func (m *matcher) matches(uri string) []Match {
	var out []Match
	for g, gm := range m.found {
		for _, i := range m.idx.groups[g].items {
			out = append(out, Match{ItemID: m.idx.ids[i], Kind: gm.kind, URI: uri, Offset: gm.offset, Jaccard: gm.jaccard})
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		if a.ItemID < b.ItemID {
			return -1
		}
		if a.ItemID > b.ItemID {
			return 1
		}
		return 0
	})
	return out
}
