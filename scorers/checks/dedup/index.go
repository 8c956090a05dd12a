package dedup

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
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
	o.MinExactLen = cmp.Or(o.MinExactLen, DefaultMinExactLen)
	o.ShingleN = cmp.Or(o.ShingleN, DefaultShingleN)
	o.Jaccard = cmp.Or(o.Jaccard, DefaultJaccard)
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

	// Exact, long prompts of 3 or more words. Any occurrence of the prompt
	// holds its interior words (not the first and last, which the corpus
	// may extend: "bathe cat" contains "the cat") as words of the
	// document. A prompt of 4 or more words stores a run of consecutive
	// interior word pairs in bigrams, one of 3 words its middle word in
	// unigrams; each run spans at least stride bytes of any raw
	// occurrence, so the scan that looks up the word pair after every
	// stride-th byte meets one (tokenizer.after). dense: the stride is too
	// short to pay; every word pair is looked up instead.
	bigrams  *multiMap // hash of two interior words -> group
	unigrams *multiMap // interior word hash -> group
	stride   int
	dense    bool

	// anchors index long prompts of at most two words, which have no
	// interior word pair: scripts written without spaces (Thai, Khmer, Lao,
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

	// Jaccard: jkeys maps each prompt's prefix-filter shingles to the
	// group.
	jkeys       *multiMap
	keyShingles bloom // over the shingles of word keys (wordKey) of every prompt
	pairs       bloom // over the pairHash of consecutive word keys of the same prompts
	maxShingles int   // largest distinct shingle count of an item
	// maxMiss is the most distinct document shingles outside every prompt
	// that a document reaching the threshold can have (maxMisses).
	jlimit, maxMiss int
	minShingles     int // smallest distinct shingle count of a prompt with shingles
}

// Strides of the sampled exact scan, in bytes.
const (
	minStride = 8  // below this, every word pair is looked up
	maxStride = 64 // longer strides would index more pairs per prompt
)

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
		task = cmp.Or(task, it.ID)
		idx.taskIDs = append(idx.taskIDs, task)
		idx.axes = append(idx.axes, it.Axis)
		idx.byID[it.ID] = g
		idx.groups[g].items = append(idx.groups[g].items, int32(i))
	}
	idx.build()
	return idx, nil
}

// Options returns the options in effect, defaults filled in.
func (x *Index) Options() Options { return x.opt }

// Len returns the number of indexed items.
func (x *Index) Len() int { return len(x.ids) }

func (x *Index) build() {
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
	var pairs, unigrams, whole, anchors, jkeys []kv
	var all, allPairs, order []uint64
	x.anchorS = min(16, max(1, x.opt.MinExactLen/4))
	x.anchorW = min(32, x.opt.MinExactLen-x.anchorS+1)
	x.minAnchored = math.MaxInt
	spans := make([]wordSpans, len(x.groups))
	x.stride = maxStride
	for gi := range x.groups {
		g := &x.groups[gi]
		spans[gi] = newWordSpans(&tok, g.norm)
		if !g.long {
			tok.run(g.norm, false)
			whole = append(whole, kv{seqHash(tok.words), uint64(gi)})
			x.maxShortWords = max(x.maxShortWords, len(tok.words))
			continue
		}
		if s := spans[gi].interior(); s > 0 {
			x.stride = min(x.stride, s)
		} else {
			anchors = append(anchors, x.anchorPairs(gi)...)
			x.minAnchored = min(x.minAnchored, len(g.norm))
		}
	}
	if x.stride < minStride {
		x.dense, x.stride = true, 1
	}
	psketch := newCountSketch(20)
	for gi := range x.groups {
		if x.groups[gi].long {
			for _, k := range spans[gi].keys {
				psketch.add(k)
			}
		}
	}
	for gi := range x.groups {
		ws := spans[gi]
		if !x.groups[gi].long || len(ws.keys) == 0 {
			continue
		}
		a, b := ws.run(x.stride, psketch)
		for _, k := range ws.keys[a : b+1] {
			if len(ws.hashes) == 3 {
				unigrams = append(unigrams, kv{k, uint64(gi)})
			} else {
				pairs = append(pairs, kv{k, uint64(gi)})
			}
		}
	}
	for gi := range x.groups {
		g := &x.groups[gi]
		if x.opt.NoJaccard || len(g.shingles) == 0 {
			continue // fewer than n words: screened by the exact part only
		}
		all = appendKeyShingles(all, spans[gi].hashes, n)
		for j := 1; j < len(spans[gi].hashes); j++ {
			allPairs = append(allPairs, pairHash(spans[gi].hashes[j-1], spans[gi].hashes[j]))
		}
		if x.minShingles == 0 || len(g.shingles) < x.minShingles {
			x.minShingles = len(g.shingles)
		}
		// J(I,D) >= t implies |I∩D| >= t|I|, so D holds at least one of any
		// |I| - ceil(t|I|) + 1 shingles of I. Index only that many, the
		// rarest ones, to keep postings short.
		need := minOverlap(len(g.shingles), x.opt.Jaccard)
		order = append(order[:0], g.shingles...)
		slices.SortFunc(order, rarer)
		for _, h := range order[:len(g.shingles)-need+1] {
			jkeys = append(jkeys, kv{h, uint64(gi)})
		}
	}
	if len(pairs) > 0 {
		x.bigrams = newMultiMap(pairs)
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
	if len(jkeys) > 0 {
		x.jkeys = newMultiMap(jkeys)
		x.keyShingles = newBloom(all)
		x.pairs = newBloom(allPairs)
		x.jlimit = jaccardLimit(x.maxShingles, x.opt.Jaccard)
		x.maxMiss = maxMisses(x.jlimit, x.opt.Jaccard)
	}
}

// jaccardLimit is the most distinct shingles a document can have and
// reach Jaccard t with an item of at most maxShingles: J <= |I|/|D|.
func jaccardLimit(maxShingles int, t float64) int { return int(float64(maxShingles)/t) + 1 }

// maxMisses bounds the distinct shingles of a document that are in no
// item when it reaches Jaccard t with some item I: |D∩I| >= t|D∪I| >= t|D|
// leaves at most (1-t)|D| outside I, and |D| <= size (jaccardLimit, or the
// document's shingle positions once it is read to the end). So once a
// document shows more such shingles, the Jaccard part can stop reading it.
// The small slack covers the 1e-12 tolerance of the final comparison.
func maxMisses(size int, t float64) int {
	return int(math.Floor((1-t)*float64(size)*(1+1e-9) + 1e-6))
}

// wordSpans is a long prompt's words as the sampled exact scan sees them.
type wordSpans struct {
	hashes []uint64 // word keys (wordKey)
	runes  []int    // runes of the normalised prompt before each word
	keys   []uint64 // the lookup key of interior word j (pair j, j+1; or word j of 3), at keys[j-1]
}

func newWordSpans(tok *tokenizer, norm []byte) wordSpans {
	var ws wordSpans
	for i := 0; ; {
		_, key, s, e := tok.next(norm, i)
		if s < 0 {
			break
		}
		ws.hashes = append(ws.hashes, key)
		ws.runes = append(ws.runes, utf8.RuneCount(norm[:s]))
		i = e
	}
	m := len(ws.hashes)
	switch {
	case m == 3:
		ws.keys = []uint64{ws.hashes[1]}
	case m >= 4:
		for j := 1; j <= m-3; j++ {
			ws.keys = append(ws.keys, pairHash(ws.hashes[j], ws.hashes[j+1]))
		}
	}
	return ws
}

// span is the least raw byte length over which the scan finds one of the
// keys a..b (0-based, key k is interior word k+1): from the start of word
// k, the word before word k+1, to the start of word b+1. Every rune of
// the normalised prompt is at least one byte of the raw text (whitespace
// runs only collapse), so the rune count is a lower bound.
func (ws wordSpans) span(a, b int) int { return ws.runes[b+1] - ws.runes[a] }

// interior is the span of all the keys (0: the prompt has none).
func (ws wordSpans) interior() int {
	if len(ws.keys) == 0 {
		return 0
	}
	return ws.span(0, len(ws.keys)-1)
}

// run picks the keys to index: the run a..b of consecutive keys spanning
// at least stride bytes whose keys are rarest among the prompts, then the
// shortest such run.
func (ws wordSpans) run(stride int, sketch countSketch) (int, int) {
	bestA, bestB, bestCost := 0, len(ws.keys)-1, math.MaxInt
	for a := range ws.keys {
		cost := 0
		for b := a; b < len(ws.keys); b++ {
			cost += sketch.count(ws.keys[b])<<8 + 1
			if ws.span(a, b) >= stride {
				if cost < bestCost {
					bestA, bestB, bestCost = a, b, cost
				}
				break
			}
		}
	}
	return bestA, bestB
}

// pairHash is the key of two consecutive words (keys): only a filter
// and table key, so one multiplication will do.
func pairHash(a, b uint64) uint64 { return fastMix(bits.RotateLeft64(a, 17) ^ b) }

// fastMix spreads x over all 64 bits with one multiplication.
func fastMix(x uint64) uint64 {
	x *= k1
	return x ^ x>>29
}

// appendKeyShingles appends the key of every n-gram of word keys, as
// Matcher.Doc rolls them (appendShingles with fastMix for shingleKey).
func appendKeyShingles(out, keys []uint64, n int) []uint64 {
	if len(keys) < n {
		return out
	}
	var h uint64
	outRot := (shingleRot * n) % 64
	for j := range keys {
		if h = rollKey(h, keys, j, n, outRot); j >= n-1 {
			out = append(out, fastMix(h))
		}
	}
	return out
}

// anchorPairs returns the anchor windows of group gi: anchorS consecutive
// windows, the block with the most distinct bytes, so a run of one
// repeated character does not become the anchor.
func (x *Index) anchorPairs(gi int) []kv {
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

// minOverlap is the least |I∩D| compatible with J(I,D) >= t for |I| = size.
func minOverlap(size int, t float64) int {
	need := int(math.Ceil(t*float64(size) - 1e-9))
	return max(1, min(size, need))
}
