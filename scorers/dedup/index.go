package dedup

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/glossobench/glossobench/scorers"
)

// Defaults; see the package documentation for why.
const (
	DefaultMinExactLen = 50
	DefaultShingleN    = 5
	DefaultJaccard     = 0.8
)

// Options configure what counts as contamination.
type Options struct {
	// MinExactLen is the shortest normalised prompt, in characters, that is
	// searched as a substring of corpus documents. Shorter prompts match only
	// a whole normalised document or line. 0 means DefaultMinExactLen.
	MinExactLen int `json:"min_exact_len"`
	// ShingleN is the word n-gram size of the Jaccard shingles. 0 means
	// DefaultShingleN.
	ShingleN int `json:"shingle_n"`
	// Jaccard is the shingle Jaccard similarity at or above which a corpus
	// document contaminates an item. 0 means DefaultJaccard.
	Jaccard float64 `json:"jaccard"`
	// NoJaccard turns the shingle check off (exact matching only).
	NoJaccard bool `json:"no_jaccard,omitempty"`
}

func (o Options) withDefaults() (Options, error) {
	if o.MinExactLen == 0 {
		o.MinExactLen = DefaultMinExactLen
	}
	if o.ShingleN == 0 {
		o.ShingleN = DefaultShingleN
	}
	if o.Jaccard == 0 {
		o.Jaccard = DefaultJaccard
	}
	switch {
	case o.MinExactLen < 1:
		return o, fmt.Errorf("dedup: min_exact_len %d: must be at least 1", o.MinExactLen)
	case o.ShingleN < 1 || o.ShingleN > 64:
		return o, fmt.Errorf("dedup: shingle_n %d: must be in 1..64", o.ShingleN)
	case !(o.Jaccard > 0 && o.Jaccard <= 1):
		return o, fmt.Errorf("dedup: jaccard %v: must be in (0, 1]", o.Jaccard)
	}
	return o, nil
}

// group is one distinct normalised prompt and the items that share it.
type group struct {
	norm     []byte
	long     bool     // searched as a substring (else whole document/line only)
	items    []int32  // indexes into Index.ids
	shingles []uint64 // sorted distinct shingle hashes
}

// Index holds the eval items in the form the corpus scan needs. It is
// read-only once built and safe for concurrent scans.
type Index struct {
	opt     Options
	ids     []string
	taskIDs []string
	axes    []string
	byID    map[string]int32 // item id -> group
	groups  []group

	// Exact substring part: anchors sampled every anchorS bytes of a
	// document, anchorW bytes wide. Each long prompt stores the hashes of
	// anchorS consecutive windows, so any occurrence puts one of them on a
	// sampled position.
	anchorW, anchorS int
	minLong          int       // shortest long prompt, bytes
	anchors          *multiMap // window hash -> group<<8 | offset in prompt

	// Whole-document/line part for short prompts.
	whole        *multiMap // hash of normalised text -> group
	maxShort     int       // longest short prompt, bytes
	shortLenMask []uint64  // bitset of short prompt byte lengths

	// Jaccard part: each item's rarest shingles ("prefix filter"): a
	// document reaching the threshold must contain at least one of them.
	postings    *multiMap // shingle hash -> group
	maxShingles int       // largest distinct shingle count of an item
}

// NewIndex indexes items. Each item must have a non-empty ID, unique among
// items, and a prompt that is not empty after normalisation.
func NewIndex(items []scorers.Item, opt Options) (*Index, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	idx := &Index{opt: opt, byID: make(map[string]int32, len(items))}
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
		if task == "" {
			task = it.ID
		}
		idx.taskIDs = append(idx.taskIDs, task)
		idx.axes = append(idx.axes, it.Axis)
		idx.byID[it.ID] = g
		idx.groups[g].items = append(idx.groups[g].items, int32(i))
	}
	idx.buildExact()
	if !opt.NoJaccard {
		idx.buildJaccard()
	}
	return idx, nil
}

// Options returns the options in effect, defaults filled in.
func (x *Index) Options() Options { return x.opt }

// Len returns the number of indexed items.
func (x *Index) Len() int { return len(x.ids) }

func (x *Index) buildExact() {
	// Sampling stride S and window W: any occurrence of a prompt of L >= W+S-1
	// bytes covers a sampled position q with a full window inside it.
	// Every long prompt has at least MinExactLen bytes (a character is at
	// least one byte).
	m := x.opt.MinExactLen
	x.anchorS = min(16, max(1, m/4))
	x.anchorW = min(32, m-x.anchorS+1)
	W, S := x.anchorW, x.anchorS

	var wholePairs []kv
	sketch := newCountSketch(22)
	x.minLong = math.MaxInt
	for gi := range x.groups {
		g := &x.groups[gi]
		if !g.long {
			wholePairs = append(wholePairs, kv{hashBytes(g.norm), uint64(gi)})
			x.maxShort = max(x.maxShort, len(g.norm))
			continue
		}
		x.minLong = min(x.minLong, len(g.norm))
		for o := 0; o+W <= len(g.norm); o++ {
			sketch.add(x.windowHash(g.norm[o:]))
		}
	}
	if len(wholePairs) > 0 {
		x.whole = newMultiMap(wholePairs)
		x.shortLenMask = make([]uint64, x.maxShort/64+1)
		for _, g := range x.groups {
			if !g.long {
				x.shortLenMask[len(g.norm)/64] |= 1 << (len(g.norm) % 64)
			}
		}
	}

	var pairs []kv
	var counts []int
	for gi := range x.groups {
		g := &x.groups[gi]
		if !g.long {
			continue
		}
		// Choose the block of S windows whose hashes are rarest among all
		// prompts, so a template shared by many prompts (an instruction
		// line, say) does not become everyone's anchor.
		counts = counts[:0]
		for o := 0; o+W <= len(g.norm); o++ {
			counts = append(counts, sketch.count(x.windowHash(g.norm[o:])))
		}
		best, bestSum, sum := 0, math.MaxInt, 0
		for o := range counts {
			sum += counts[o]
			if o >= S {
				sum -= counts[o-S]
			}
			if o >= S-1 && sum < bestSum {
				best, bestSum = o-S+1, sum
			}
		}
		for o := best; o < best+S; o++ {
			pairs = append(pairs, kv{x.windowHash(g.norm[o:]), uint64(gi)<<8 | uint64(o)})
		}
	}
	if len(pairs) > 0 {
		x.anchors = newMultiMap(pairs)
	}
}

// windowHash hashes the anchor window starting at b[0].
func (x *Index) windowHash(b []byte) uint64 {
	if x.anchorW == 32 {
		return hash32(b)
	}
	return hashBytes(b[:x.anchorW])
}

func (x *Index) buildJaccard() {
	n := x.opt.ShingleN
	var words []uint64
	sketch := newCountSketch(22)
	for gi := range x.groups {
		g := &x.groups[gi]
		words, _ = appendWordHashes(words[:0], g.norm, -1)
		sh := appendShingles(nil, words, n)
		slices.Sort(sh)
		g.shingles = slices.Compact(sh)
		for _, h := range g.shingles {
			sketch.add(h)
		}
		x.maxShingles = max(x.maxShingles, len(g.shingles))
	}
	var pairs []kv
	var order []uint64
	for gi := range x.groups {
		g := &x.groups[gi]
		if len(g.shingles) == 0 {
			continue // fewer than n words: screened by the exact part only
		}
		// J(I,D) >= t implies |I∩D| >= t|I|, so D holds at least one of any
		// |I| - ceil(t|I|) + 1 shingles of I. Index only that many, the
		// rarest ones, to keep postings short.
		need := minOverlap(len(g.shingles), x.opt.Jaccard)
		keep := len(g.shingles) - need + 1
		order = append(order[:0], g.shingles...)
		slices.SortFunc(order, func(a, b uint64) int {
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
		})
		for _, h := range order[:keep] {
			pairs = append(pairs, kv{h, uint64(gi)})
		}
	}
	if len(pairs) > 0 {
		x.postings = newMultiMap(pairs)
	}
}

// minOverlap is the least |I∩D| compatible with J(I,D) >= t for |I| = size.
func minOverlap(size int, t float64) int {
	need := int(math.Ceil(t*float64(size) - 1e-9))
	return max(1, min(size, need))
}
