package dedup

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
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

// Tags of the values in Index.keys.
const (
	tagExact   = 0
	tagJaccard = 1
)

// Index holds the eval items in the form the corpus scan needs. It is
// read-only once built and safe for concurrent scans.
type Index struct {
	opt     Options
	ids     []string
	taskIDs []string
	axes    []string
	byID    map[string]int32 // item id -> group
	groups  []group

	// keys maps a word n-gram hash to group<<1 | tag. tagExact: one interior
	// shingle of a long prompt (one without its first and last word, which
	// may be cut mid-word in the corpus), so every occurrence of the prompt
	// puts it in the document. tagJaccard: the prefix-filter shingles.
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
			lens := wordLens(g.norm, len(words))
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
			keys = append(keys, kv{shingleHash(words[best : best+n]), uint64(gi)<<1 | tagExact})
		} else if len(words) >= 3 {
			// The longest interior word.
			lens := wordLens(g.norm, len(words))
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
		// |I| - ceil(t|I|) + 1 shingles of I. Index only that many, the
		// rarest ones, to keep postings short.
		need := minOverlap(len(g.shingles), x.opt.Jaccard)
		order = append(order[:0], g.shingles...)
		slices.SortFunc(order, rarer)
		for _, h := range order[:len(g.shingles)-need+1] {
			keys = append(keys, kv{h, uint64(gi)<<1 | tagJaccard})
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

// wordLens returns the byte length of each word of a normalised prompt, in
// the tokenizer's order (the same split as the tokenizer, by definition;
// FuzzTokenize checks they agree). It only guides which key to index, so
// on a disagreement it returns equal lengths.
func wordLens(norm []byte, want int) []int {
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

// minOverlap is the least |I∩D| compatible with J(I,D) >= t for |I| = size.
func minOverlap(size int, t float64) int {
	need := int(math.Ceil(t*float64(size) - 1e-9))
	return max(1, min(size, need))
}
