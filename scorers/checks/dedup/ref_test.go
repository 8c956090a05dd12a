package dedup

// The matcher as it was before the sampled scan (main d963d15): the
// reference the differential tests compare the matcher with, match for
// match (kind, offset and Jaccard value).

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/glossobench/glossobench/scorers"
)

// Tags of the values in refIndex.keys.
const (
	refTagExact   = 0
	refTagJaccard = 1
)

// refIndex holds the eval items in the form the corpus scan needs. It is
// read-only once built and safe for concurrent scans.
type refIndex struct {
	opt     Options
	ids     []string
	taskIDs []string
	axes    []string
	byID    map[string]int32 // item id -> group
	groups  []group

	// keys maps a word n-gram hash to group<<1 | tag. refTagExact: one interior
	// shingle of a long prompt (one without its first and last word, which
	// may be cut mid-word in the corpus), so every occurrence of the prompt
	// puts it in the document. refTagJaccard: the prefix-filter shingles.
	keys *multiMap
	// unigrams maps an interior word hash to the long prompts with too few
	// words for an interior shingle (3 to n+1 words).
	unigrams *multiMap
	// anchors index long prompts of at most two words, which have no
	// interior word: scripts written without spaces (Thai, Khmer, Lao,
	// Burmese) or long tokens. A document is then normalised and hashed at
	// every anchorS-th byte over anchorW bytes; each such prompt stores the
	// hashes of anchorS consecutive windows, so any occurrence puts one on
	// a sampled position. Only indexes that hold such prompts pay for this.
	anchors          *multiMap // window hash -> group<<8 | offset in prompt
	anchorW, anchorS int
	minAnchored      int // shortest anchored prompt, bytes

	// whole maps the hash of a short prompt's word sequence to the group;
	// a document or line with the same words is then compared in full.
	whole         *multiMap
	maxShortWords int // most words in a short prompt

	maxShingles int // largest distinct shingle count of an item
}

// newRefIndex indexes items. Each item must have a non-empty ID, unique among
// items, and a prompt that is not empty after normalisation.
func newRefIndex(items []scorers.Item, opt Options) (*refIndex, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	idx := &refIndex{opt: opt, byID: make(map[string]int32, len(items))}
	byNorm := make(map[string]int32)
	for i, it := range items {
		if it.ID == "" {
			return nil, fmt.Errorf("dedup: item %d: empty id", i)
		}
		if _, dup := idx.byID[it.ID]; dup {
			return nil, fmt.Errorf("dedup: item %q: duplicate id", it.ID)
		}
		norm := appendNorm(nil, []byte(it.Prompt), nil)
		if len(norm) == 0 {
			return nil, fmt.Errorf("dedup: item %q: empty prompt", it.ID)
		}
		g, ok := byNorm[string(norm)]
		if !ok {
			g = int32(len(idx.groups))
			byNorm[string(norm)] = g
			idx.groups = append(idx.groups, group{
				norm: norm,
				long: utf8.RuneCount(norm) >= opt.MinExactLen,
			})
		}
		idx.ids = append(idx.ids, it.ID)
		task := it.TaskID
		task = cmp.Or(task, it.ID)
		idx.taskIDs = append(idx.taskIDs, task)
		idx.axes = append(idx.axes, it.Axis)
		idx.byID[it.ID] = g
		idx.groups[g].items = append(idx.groups[g].items, int32(i))
	}
	idx.build()
	return idx, nil
}

func (x *refIndex) build() {
	n := x.opt.ShingleN
	var tok tokenizer
	sketch := newCountSketch(20)
	for gi := range x.groups {
		g := &x.groups[gi]
		tok.run(g.norm, false)
		sh := appendShingles(nil, tok.words, n)
		slices.Sort(sh)
		g.shingles = slices.Compact(sh)
		for _, h := range g.shingles {
			sketch.add(h)
		}
		x.maxShingles = max(x.maxShingles, len(g.shingles))
	}
	rarer := func(a, b uint64) int {
		ca, cb := sketch.count(a), sketch.count(b)
		if ca != cb {
			return ca - cb
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	}
	var keys, unigrams, whole, anchors []kv
	var order []uint64
	x.anchorS = min(16, max(1, x.opt.MinExactLen/4))
	x.anchorW = min(32, x.opt.MinExactLen-x.anchorS+1)
	x.minAnchored = math.MaxInt
	for gi := range x.groups {
		g := &x.groups[gi]
		tok.run(g.norm, false)
		words := tok.words
		if !g.long {
			whole = append(whole, kv{seqHash(words), uint64(gi)})
			x.maxShortWords = max(x.maxShortWords, len(words))
		} else if len(words) >= n+2 {
			// Of the interior shingles, the rarest among the prompts; of
			// those, the one with the longest words, as long words are
			// rarer in running text, so the prompt is verified in fewer
			// documents.
			lens := refWordLens(g.norm, len(words))
			best, bestKey := -1, [2]int{}
			for j := 1; j+n <= len(words)-1; j++ {
				h := shingleHash(words[j : j+n])
				span := 0
				for _, l := range lens[j : j+n] {
					span += l
				}
				if key := [2]int{sketch.count(h), -span}; best < 0 || key[0] < bestKey[0] || (key[0] == bestKey[0] && key[1] < bestKey[1]) {
					best, bestKey = j, key
				}
			}
			keys = append(keys, kv{shingleHash(words[best : best+n]), uint64(gi)<<1 | refTagExact})
		} else if len(words) >= 3 {
			// The longest interior word.
			lens := refWordLens(g.norm, len(words))
			best := 1
			for j := 2; j < len(words)-1; j++ {
				if lens[j] > lens[best] {
					best = j
				}
			}
			unigrams = append(unigrams, kv{words[best], uint64(gi)})
		} else {
			anchors = append(anchors, x.anchorPairs(gi)...)
			x.minAnchored = min(x.minAnchored, len(g.norm))
		}
		if x.opt.NoJaccard || len(g.shingles) == 0 {
			continue // fewer than n words: screened by the exact part only
		}
		// J(I,D) >= t implies |I∩D| >= t|I|, so D holds at least one of any
		// |I| - ceil(t|I|) + 1 shingles of I. refIndex only that many, the
		// rarest ones, to keep postings short.
		need := minOverlap(len(g.shingles), x.opt.Jaccard)
		order = append(order[:0], g.shingles...)
		slices.SortFunc(order, rarer)
		for _, h := range order[:len(g.shingles)-need+1] {
			keys = append(keys, kv{h, uint64(gi)<<1 | refTagJaccard})
		}
	}
	if len(keys) > 0 {
		x.keys = newMultiMap(keys)
	}
	if len(unigrams) > 0 {
		x.unigrams = newMultiMap(unigrams)
	}
	if len(whole) > 0 {
		x.whole = newMultiMap(whole)
	}
	if len(anchors) > 0 {
		x.anchors = newMultiMap(anchors)
	}
}

// anchorPairs returns the anchor windows of group gi: anchorS consecutive
// windows, the block with the most distinct bytes, so a run of one
// repeated character does not become the anchor.
func (x *refIndex) anchorPairs(gi int) []kv {
	W, S := x.anchorW, x.anchorS
	norm := x.groups[gi].norm
	best, bestScore := 0, -1
	for o := 0; o+W+S-1 <= len(norm); o++ {
		var seen [256]bool
		score := 0
		for _, c := range norm[o : o+W+S-1] {
			if !seen[c] {
				seen[c] = true
				score++
			}
		}
		if score > bestScore {
			best, bestScore = o, score
		}
	}
	var out []kv
	for o := best; o < best+S; o++ {
		out = append(out, kv{hashBytes(norm[o : o+W]), uint64(gi)<<8 | uint64(o)})
	}
	return out
}

// refWordLens returns the byte length of each word of a normalised prompt, in
// the tokenizer's order (the same split as the tokenizer, by definition;
// FuzzTokenize checks they agree). It only guides which key to index, so
// on a disagreement it returns equal lengths.
func refWordLens(norm []byte, want int) []int {
	ws := strings.FieldsFunc(string(norm), func(r rune) bool {
		return !isWordRune(r) || r == utf8.RuneError
	})
	lens := make([]int, want)
	if len(ws) != want {
		return lens
	}
	for i, w := range ws {
		lens[i] = len(w)
	}
	return lens
}

// refMatcher screens documents one at a time against an index and keeps the
// first match of each prompt group. It owns scratch buffers, so each
// goroutine needs its own. The corpus scanner (infra/corpus) feeds it the
// documents of a shard in order.
type refMatcher struct {
	idx   *refIndex
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

func newRefMatcher(idx *refIndex) *refMatcher {
	return &refMatcher{idx: idx, found: make(map[int32]groupMatch), checked: make([]uint32, len(idx.groups))}
}

// Record restores a match found before (one of a checkpoint's), so that a
// resumed screen keeps it as the item's first occurrence. It reports false
// when the index has no item mt.ItemID.
func (m *refMatcher) Record(mt Match) bool {
	g, ok := m.idx.byID[mt.ItemID]
	if !ok {
		return false
	}
	m.record(g, groupMatch{kind: mt.Kind, offset: mt.Offset, jaccard: mt.Jaccard})
	return true
}

func (m *refMatcher) record(g int32, gm groupMatch) {
	if _, ok := m.found[g]; !ok {
		m.found[g] = gm
	}
}

// normDoc returns the normalised document, computing it on first use.
func (m *refMatcher) normDoc(raw []byte) []byte {
	if !m.normOK {
		m.norm = appendNorm(m.norm[:0], raw, nil)
		m.normOK = true
	}
	return m.norm
}

// verifyExact checks a long prompt against the document once per document.
func (m *refMatcher) verifyExact(g int32, raw []byte, off int64) {
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
func (m *refMatcher) Doc(raw []byte, off int64) {
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
func (m *refMatcher) matchAnchors(raw []byte, off int64) {
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
func (m *refMatcher) matchWhole(words []uint64, raw []byte, off int64) {
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
func (m *refMatcher) matchShingles(words []uint64, raw []byte, off int64) {
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
			if v&1 == refTagExact {
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
func (m *refMatcher) verifyJaccard(off int64) {
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

// Matches expands the groups found so far to per-item matches in the
// corpus file uri, sorted by item id.
func (m *refMatcher) Matches(uri string) []Match {
	var out []Match
	for g, gm := range m.found {
		for _, i := range m.idx.groups[g].items {
			out = append(out, Match{ItemID: m.idx.ids[i], Kind: gm.kind, URI: uri, Offset: gm.offset, Jaccard: gm.jaccard})
		}
	}
	slices.SortFunc(out, byItemID)
	return out
}
