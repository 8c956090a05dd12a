// Package chrf computes chrF (Popović 2015) and chrF++ (Popović 2017) exactly
// as sacrebleu 2.x's CHRF metric does, so that a number printed here can be
// compared with one printed by `sacrebleu -m chrf`.
//
// The sacrebleu semantics reproduced here:
//   - character n-grams of order 1..CharOrder over the segment with every
//     whitespace character removed (Python str.split() whitespace), unless
//     Whitespace is set;
//   - word n-grams of order 1..WordOrder over whitespace tokens, where a token
//     longer than one character has one ASCII punctuation character split off
//     its end, or else off its start (so "(hi)" becomes "(hi" and ")");
//   - per order, the hypothesis count is reported as 0 when the reference has
//     no n-gram of that order;
//   - the default "effective order" F-score: precision and recall are averaged
//     over the orders where both hypothesis and reference have n-grams, then
//     combined with F-beta; EpsSmoothing selects the chrF++.py/NLTK variant;
//   - corpus scores sum the per-segment statistics before the F-score;
//   - with several references, each segment keeps the statistics of the
//     reference with the highest sentence F-score (first one wins ties), and
//     empty references are skipped (a variable number of references);
//   - lowercasing, when asked, follows Python's str.lower() (İ becomes i̇, and
//     Σ becomes ς at the end of a word).
//
// N-grams are identified exactly, by interning rune sequences in a small hash
// table, never by a lossy hash, so match counts equal sacrebleu's Counter
// intersections.
package chrf

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// SacrebleuVersion is the sacrebleu release whose chrF this package
// reproduces; it is the version field of the signature. The chrF code path
// has been unchanged since 2.0.0.
const SacrebleuVersion = "2.5.1"

// Default parameters, as in sacrebleu.
const (
	DefaultCharOrder = 6
	DefaultBeta      = 2
)

// Options configure the metric. The zero value of CharOrder and Beta selects
// sacrebleu's defaults (6 and 2); WordOrder 0 is plain chrF and 2 is chrF++.
type Options struct {
	CharOrder int
	WordOrder int
	Beta      int
	// Lowercase makes the metric case-insensitive (sacrebleu's lowercase).
	Lowercase bool
	// Whitespace keeps whitespace inside character n-grams.
	Whitespace bool
	// EpsSmoothing selects the chrF++.py / NLTK / Moses epsilon smoothing
	// instead of sacrebleu's default effective-order averaging.
	EpsSmoothing bool
}

// ChrFPlusPlus are the options of sacrebleu's CHRF(word_order=2).
var ChrFPlusPlus = Options{CharOrder: 6, WordOrder: 2, Beta: 2}

// Validate reports options New would reject.
func (o Options) Validate() error {
	if o.CharOrder < 0 || o.WordOrder < 0 || o.Beta < 0 {
		return fmt.Errorf("chrf: orders and beta must not be negative (char order %d, word order %d, beta %d)", o.CharOrder, o.WordOrder, o.Beta)
	}
	return nil
}

// CHRF is a configured metric. It is safe for concurrent use.
type CHRF struct {
	opt   Options
	order int // CharOrder + WordOrder
	name  string
	sig1  string // the signature with nrefs:1, the common case
	pool  sync.Pool
	// nrefs is the reference count of the most recent scoring call, for
	// Signature, as sacrebleu's metric object records it (-1 = variable).
	nrefs atomic.Int64
}

// New returns the metric for opts. It panics if opts.Validate fails, like
// regexp.MustCompile: options are program constants, not user data; commands
// call Validate first.
func New(opts Options) *CHRF {
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	opts.CharOrder = cmp.Or(opts.CharOrder, DefaultCharOrder)
	opts.Beta = cmp.Or(opts.Beta, DefaultBeta)
	c := &CHRF{opt: opts, order: opts.CharOrder + opts.WordOrder}
	c.name = "chrF" + strconv.Itoa(opts.Beta) + strings.Repeat("+", opts.WordOrder)
	c.sig1 = c.signature(-2)
	c.nrefs.Store(1)
	c.pool.New = func() any { return newWorkspace(c.order) }
	return c
}

// Options returns the effective options (defaults filled in).
func (c *CHRF) Options() Options { return c.opt }

// Name is the metric name sacrebleu prints: "chrF2" for chrF, "chrF2++" for
// word order 2 (one "+" per word order).
func (c *CHRF) Name() string { return c.name }

// Signature is sacrebleu's reproducibility signature, e.g.
// "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:2.5.1". As in
// sacrebleu, nrefs is that of the most recent Corpus or Sentence call ("var"
// when segments had different numbers of non-empty references); before any
// call it reads 1.
func (c *CHRF) Signature() string { return c.signature(int(c.nrefs.Load())) }

func (c *CHRF) signature(nrefs int) string {
	n := strconv.Itoa(nrefs)
	switch {
	case nrefs == 1 && c.sig1 != "":
		return c.sig1
	case nrefs == -2: // building sig1
		n = "1"
	case nrefs < 0:
		n = "var"
	}
	cs := "mixed"
	if c.opt.Lowercase {
		cs = "lc"
	}
	return "nrefs:" + n + "|case:" + cs + "|eff:" + yesNo(!c.opt.EpsSmoothing) +
		"|nc:" + strconv.Itoa(c.opt.CharOrder) + "|nw:" + strconv.Itoa(c.opt.WordOrder) +
		"|space:" + yesNo(c.opt.Whitespace) + "|version:" + SacrebleuVersion
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Stats are one segment's (or a corpus's summed) sufficient statistics:
// for each order — character orders 1..CharOrder, then word orders
// 1..WordOrder — the triple [hypothesis n-grams, reference n-grams, matches],
// the layout sacrebleu uses.
type Stats []int

// Add adds o to s element-wise; o must have s's length.
func (s Stats) Add(o Stats) {
	for i, v := range o {
		s[i] += v
	}
}

// Score is a chrF result.
type Score struct {
	Name      string  `json:"name"`      // "chrF2" or "chrF2++"
	Score     float64 `json:"score"`     // 0–100, as sacrebleu reports it
	Signature string  `json:"signature"` // the signature of this call
	NRefs     int     `json:"nrefs"`     // references per segment; -1 when it varies
	Stats     Stats   `json:"stats"`     // the summed statistics the score came from
	// Err is set, and Score is NaN, when the input could not be scored: no
	// segments, a reference stream whose length differs from the hypotheses',
	// or a segment whose references are all empty (sacrebleu raises on all).
	Err error `json:"-"`
}

// String formats the score as sacrebleu's Score.__repr__ does: "chrF2++ = 54.32".
func (s Score) String() string { return s.Format(2, "") }

// Format renders the score like sacrebleu's text output:
// "chrF2++|<signature> = 54.3" with width decimals (no signature part when
// signature is empty).
func (s Score) Format(width int, signature string) string {
	name := s.Name
	if signature != "" {
		name += "|" + signature
	}
	return name + " = " + strconv.FormatFloat(s.Score, 'f', width, 64)
}

// ErrNoReference reports a segment whose references are all empty.
var ErrNoReference = errors.New("chrf: segment has no non-empty reference")

// Corpus scores hypotheses against reference streams: refs[k][i] is the k-th
// reference of segment i, as in sacrebleu's corpus_score. Statistics are
// summed over segments before the F-score.
func (c *CHRF) Corpus(hyps []string, refs [][]string) Score {
	segs, nrefs, err := c.segmentStats(hyps, refs)
	if err != nil {
		return Score{Name: c.Name(), Score: math.NaN(), Err: err}
	}
	total := make(Stats, 3*c.order)
	for _, s := range segs {
		total.Add(s)
	}
	c.nrefs.Store(int64(nrefs))
	return Score{Name: c.Name(), Score: c.FScore(total), Signature: c.signature(nrefs), NRefs: nrefs, Stats: total}
}

// Sentence scores one hypothesis against its references.
func (c *CHRF) Sentence(hyp string, refs []string) Score {
	streams := make([][]string, len(refs))
	for k, r := range refs {
		streams[k] = []string{r}
	}
	return c.Corpus([]string{hyp}, streams)
}

// SegmentStats returns each segment's statistics (the best reference's), for
// bootstrap resampling: sum any subset with Stats.Add and score it with
// FScore. refs is laid out as in Corpus.
func (c *CHRF) SegmentStats(hyps []string, refs [][]string) ([]Stats, error) {
	segs, _, err := c.segmentStats(hyps, refs)
	return segs, err
}

func (c *CHRF) segmentStats(hyps []string, refs [][]string) ([]Stats, int, error) {
	if len(refs) == 0 {
		return nil, 0, errors.New("chrf: no reference stream")
	}
	if len(hyps) == 0 {
		return nil, 0, errors.New("chrf: no segments")
	}
	for k, r := range refs {
		if len(r) != len(hyps) {
			return nil, 0, fmt.Errorf("chrf: reference stream %d has %d segments, hypotheses have %d", k+1, len(r), len(hyps))
		}
	}
	w := c.pool.Get().(*workspace)
	defer c.pool.Put(w)
	width := 3 * c.order
	all := make(Stats, width*len(hyps))
	segs := make([]Stats, len(hyps))
	segRefs := make([]string, 0, len(refs))
	nrefs := 0
	for i, h := range hyps {
		segRefs = segRefs[:0]
		for _, r := range refs {
			if r[i] != "" {
				segRefs = append(segRefs, r[i])
			}
		}
		if len(segRefs) == 0 {
			return nil, 0, fmt.Errorf("%w (segment %d)", ErrNoReference, i+1)
		}
		switch {
		case i == 0:
			nrefs = len(segRefs)
		case nrefs != len(segRefs):
			nrefs = -1
		}
		segs[i] = all[i*width : (i+1)*width : (i+1)*width]
		c.stats(w, h, segRefs, segs[i])
	}
	return segs, nrefs, nil
}

// FScore turns (summed) statistics into the chrF score in [0, 100],
// following sacrebleu's _compute_f_score.
func (c *CHRF) FScore(s Stats) float64 {
	const eps = 1e-16
	factor := float64(c.opt.Beta * c.opt.Beta)
	var score, avgPrec, avgRec float64
	effective := 0
	for i := 0; i < c.order && 3*i+2 < len(s); i++ {
		nHyp, nRef, nMatch := s[3*i], s[3*i+1], s[3*i+2]
		prec, rec := eps, eps
		if nHyp > 0 {
			prec = float64(nMatch) / float64(nHyp)
		}
		if nRef > 0 {
			rec = float64(nMatch) / float64(nRef)
		}
		if denom := factor*prec + rec; denom > 0 {
			score += (1 + factor) * prec * rec / denom
		} else {
			score += eps
		}
		if nHyp > 0 && nRef > 0 {
			avgPrec += prec
			avgRec += rec
			effective++
		}
	}
	if c.opt.EpsSmoothing {
		return 100 * score / float64(c.order)
	}
	if effective == 0 {
		return 0
	}
	avgPrec /= float64(effective)
	avgRec /= float64(effective)
	if avgPrec+avgRec == 0 {
		return 0
	}
	// Same operation order as sacrebleu, so results agree to the last bit.
	f := (1 + factor) * avgPrec * avgRec
	f /= factor*avgPrec + avgRec
	return 100 * f
}
