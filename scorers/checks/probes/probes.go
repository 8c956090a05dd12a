// Package probes builds the adversarial variants of multiple-choice items
// (spec §6) and the two leakage signals read from them.
//
//   - shuffle: the options are permuted (seeded, never the identity) and the
//     item is re-scored. shuffle_drop = accuracy(original) -
//     accuracy(shuffled): a model that memorised answer positions loses
//     accuracy, one that reads the options does not.
//   - unanswerable: the gold option is replaced by a plausible wrong one, so
//     no option is right. unanswerable_drop = how often the model still picks
//     the letter it picked before, among the items it originally got right:
//     a model that memorised "the answer to this item is C" keeps C.
//
// The functions are pure: the same item and seed give the same variant on
// any machine, so a re-run (or a resumed workflow) asks the model the same
// questions.
package probes

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

// stream is the random stream of one probe on one item, derived from the
// run seed, the probe name and the item id. It uses only PCG's specified
// output (not math/rand's helpers, whose algorithms may change between Go
// releases), so variants are the same with every Go version.
type stream struct{ pcg *rand.PCG }

func rng(seed uint64, probe, id string) stream {
	h := fnv.New64a()
	h.Write([]byte(probe))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return stream{rand.NewPCG(seed, h.Sum64())}
}

// IntN is uniform in [0, n) for n > 0 (multiply-shift; the bias is below
// 2^-50 for any n an MCQ can have).
func (s stream) IntN(n int) int {
	hi, _ := bits.Mul64(s.pcg.Uint64(), uint64(n))
	return int(hi)
}

// Shuffle is Fisher-Yates over n elements.
func (s stream) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, s.IntN(i+1))
	}
}

// renderChoices is the option block of the MCQ prompt renderer
// ("A. text\n" per option).
func renderChoices(choices []string) string {
	var b strings.Builder
	for i, c := range choices {
		fmt.Fprintf(&b, "%c. %s\n", 'A'+i, c)
	}
	return b.String()
}

// rewritePrompt swaps the rendered option block in prompt when it occurs
// exactly once, so the variant's prompt shows the new options. A prompt
// rendered some other way is left as is; the caller re-renders it from
// Choices.
func rewritePrompt(prompt string, old, new []string) string {
	ob := renderChoices(old)
	if strings.Count(prompt, ob) != 1 {
		return prompt
	}
	return strings.Replace(prompt, ob, renderChoices(new), 1)
}

// Shuffle returns it with its options permuted by a permutation drawn from
// seed and the item id; Gold follows the gold option. With two or more
// options the permutation is never the identity (an identity draw is
// redrawn), so every item is actually moved. The prompt's "A. ..." option
// block, when present, is rewritten to match. it is not modified.
func Shuffle(it scorers.Item, seed uint64) scorers.Item {
	out := it
	n := len(it.Choices)
	if n < 2 {
		out.Choices = slices.Clone(it.Choices)
		return out
	}
	r := rng(seed, "shuffle", it.ID)
	perm := make([]int, n) // new position i shows old option perm[i]
	for {
		for i := range perm {
			perm[i] = i
		}
		r.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if !isIdentity(perm) {
			break
		}
	}
	out.Choices = make([]string, n)
	for i, p := range perm {
		out.Choices[i] = it.Choices[p]
		if p == it.Gold {
			out.Gold = i
		}
	}
	out.Prompt = rewritePrompt(it.Prompt, it.Choices, out.Choices)
	return out
}

func isIdentity(p []int) bool {
	for i, v := range p {
		if i != v {
			return false
		}
	}
	return true
}

// Pool holds the wrong options of a set of MCQ items, by dataset, to draw
// unanswerable replacements from. Build one per axis from its items, with
// NewPool or item by item with Add; the zero Pool is empty.
type Pool struct {
	byDataset map[string]*options
	seen      map[string]bool // dataset + canonical option, to keep each once
}

type options struct {
	text  []string
	canon []string
}

// NewPool collects the distractors (every option but the gold one) of items.
func NewPool(items []scorers.Item) *Pool {
	p := &Pool{}
	for _, it := range items {
		p.Add(it)
	}
	return p
}

// Add collects the distractors of one item, so a pool can be built while an
// axis's items stream past; only distinct distractors are kept.
func (p *Pool) Add(it scorers.Item) {
	if p.byDataset == nil {
		p.byDataset, p.seen = map[string]*options{}, map[string]bool{}
	}
	for i, c := range it.Choices {
		cc := canon(c)
		key := it.Dataset + "\x00" + cc
		if i == it.Gold || cc == "" || p.seen[key] {
			continue
		}
		p.seen[key] = true
		o := p.byDataset[it.Dataset]
		if o == nil {
			o = &options{}
			p.byDataset[it.Dataset] = o
		}
		o.text = append(o.text, c)
		o.canon = append(o.canon, cc)
	}
}

// canon is the comparison form of an option: trimmed, case-folded,
// whitespace collapsed.
func canon(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// ErrNoReplacement means the item's dataset has no distractor that differs
// from all of the item's options (e.g. NLI, whose options are the same
// three labels everywhere): such an item cannot be made unanswerable.
var ErrNoReplacement = errors.New("no replacement option")

// sample is how many candidate distractors are drawn per item; the one
// closest in length to the gold option is used.
const sample = 16

// Unanswerable returns it with the gold option replaced by a wrong one, so
// no option is right, and Gold set to -1 (the replaced position is the
// original Gold). The replacement is a distractor of another item of the
// same dataset: a real answer option in the dataset's own style and
// language, unlike a generic "none of the above", which would itself be a
// right answer. It must differ (ignoring case and spacing) from every
// option of it, so the item's own correct answer cannot come back. Of up
// to 16 such distractors drawn with seed and the item id, the one closest
// in length to the gold option is used, so its length does not give it
// away. The other options keep their letters; the prompt's option block is
// rewritten when present. it is not modified.
func (p *Pool) Unanswerable(it scorers.Item, seed uint64) (scorers.Item, error) {
	if len(it.Choices) < 2 || it.Gold < 0 || it.Gold >= len(it.Choices) {
		return it, fmt.Errorf("probes: item %s: not a multiple-choice item with a gold option (gold %d of %d options)", it.ID, it.Gold, len(it.Choices))
	}
	own := map[string]bool{}
	for _, c := range it.Choices {
		own[canon(c)] = true
	}
	o := p.byDataset[it.Dataset]
	if o == nil {
		return it, fmt.Errorf("probes: item %s (dataset %q): %w", it.ID, it.Dataset, ErrNoReplacement)
	}
	r := rng(seed, "unanswerable", it.ID)
	// Draw with rejection; fall back to listing every usable option when
	// the dataset has few (then most draws are rejected).
	var picked []int
	for tries := 0; len(picked) < sample && tries < 4*sample; tries++ {
		j := r.IntN(len(o.text))
		if !own[o.canon[j]] && !slices.Contains(picked, j) {
			picked = append(picked, j)
		}
	}
	if len(picked) == 0 {
		for j := range o.text {
			if !own[o.canon[j]] {
				picked = append(picked, j)
			}
		}
		if len(picked) == 0 {
			return it, fmt.Errorf("probes: item %s (dataset %q): %w", it.ID, it.Dataset, ErrNoReplacement)
		}
		r.Shuffle(len(picked), func(a, b int) { picked[a], picked[b] = picked[b], picked[a] })
	}
	goldLen := len([]rune(it.Choices[it.Gold]))
	best, bestDiff := "", math.MaxInt
	for _, j := range picked {
		d := len([]rune(o.text[j])) - goldLen
		if d < 0 {
			d = -d
		}
		if d < bestDiff {
			best, bestDiff = o.text[j], d
		}
	}
	out := it
	out.Choices = slices.Clone(it.Choices)
	out.Choices[it.Gold] = best
	out.Gold = -1
	out.Prompt = rewritePrompt(it.Prompt, it.Choices, out.Choices)
	return out, nil
}

// ShuffleDrop is accuracy on the original items minus accuracy on their
// shuffled variants; orig[i] and shuffled[i] (correct or not) belong to the
// same item.
// Positive means accuracy was lost. NaN when the slices are empty or of
// different lengths.
func ShuffleDrop(orig, shuffled []bool) float64 {
	if len(orig) != len(shuffled) {
		return math.NaN()
	}
	var c ShuffleCounts
	for i := range orig {
		c.Add(orig[i], shuffled[i])
	}
	return c.Drop()
}

// ShuffleCounts counts ShuffleDrop item by item, so an axis scored shard by
// shard need not keep its items' outcomes.
type ShuffleCounts struct {
	N          int // items
	OrigOK     int // answered right as asked
	ShuffledOK int // answered right shuffled
}

// Add counts one item: whether it was answered right as asked and shuffled.
func (c *ShuffleCounts) Add(orig, shuffled bool) {
	c.N++
	if orig {
		c.OrigOK++
	}
	if shuffled {
		c.ShuffledOK++
	}
}

// Drop is ShuffleDrop of the items counted; NaN when there are none.
func (c ShuffleCounts) Drop() float64 {
	if c.N == 0 {
		return math.NaN()
	}
	return float64(c.OrigOK-c.ShuffledOK) / float64(c.N)
}

// UnanswerableDrop is the share of items the model answered correctly
// (origPick == gold) on which it picks the same letter again on the
// unanswerable variant, where that letter now holds a wrong option. Items
// answered wrongly are left out: there the picked option is unchanged, and
// picking it again is consistency, not recall. Picks are option indexes;
// a negative pick (unparsable answer) leaves the item out. NaN when no item
// counts or the slices differ in length.
func UnanswerableDrop(gold, origPick, probePick []int) float64 {
	if len(gold) != len(origPick) || len(gold) != len(probePick) {
		return math.NaN()
	}
	var c UnanswerableCounts
	for i := range gold {
		c.Add(gold[i], origPick[i], probePick[i])
	}
	return c.Drop()
}

// UnanswerableCounts counts UnanswerableDrop item by item.
type UnanswerableCounts struct {
	N       int // items with an unanswerable variant
	Counted int // of those, answered right as asked with a parsable probe answer
	Same    int // of those counted, the probe answer repeats the original pick
}

// Add counts one item, leaving out of Counted what UnanswerableDrop leaves out.
func (c *UnanswerableCounts) Add(gold, origPick, probePick int) {
	c.N++
	if gold < 0 || origPick != gold || probePick < 0 {
		return
	}
	c.Counted++
	if probePick == origPick {
		c.Same++
	}
}

// Drop is UnanswerableDrop of the items counted; NaN when none counts.
func (c UnanswerableCounts) Drop() float64 {
	if c.Counted == 0 {
		return math.NaN()
	}
	return float64(c.Same) / float64(c.Counted)
}
