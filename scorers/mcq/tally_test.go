package mcq

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/probes"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// tallyCounts are what the fixture put in, counted independently of the scorer.
type tallyCounts struct {
	items, unsupported, errored, ctxCut, lowConf, parseFail int
	withCloze, withGen                                      int
}

// tallyFixture builds items and predictions mixing every case the scorer
// distinguishes: 2 to 5 options (so chance is not a round sum), clear and tied
// cloze decisions, unsupported cloze, the cloze_text variant (valid, malformed,
// short), correct, wrong, unparsable and truncated generations, left-truncated
// prompts, model errors (the first one not in the first shards), items with
// nothing scorable, and shuffle and unanswerable probes.
func tallyFixture() ([]scorers.Item, []scorers.Prediction, tallyCounts) {
	rng := rand.New(rand.NewPCG(11, 12))
	var items []scorers.Item
	var preds []scorers.Prediction
	var c tallyCounts
	letter := func(i int) string { return string(rune('A' + i)) }
	for i := range 60 {
		n := 2 + rng.IntN(4)
		it := scorers.Item{ID: fmt.Sprintf("d/%d", i), Lang: []string{"ms", "id", "tl"}[i%3], Source: fmt.Sprintf("s%d", i%4), Gold: rng.IntN(n)}
		for j := range n {
			it.Choices = append(it.Choices, strings.Repeat("o", j+1))
		}
		it.Prompt = Render(it)
		p := scorers.Prediction{ItemID: it.ID}
		c.items++
		if i == 9 || i == 23 || i == 41 {
			p.Error = fmt.Sprintf("backend refused item %d", i)
			c.errored++
			items, preds = append(items, it), append(preds, p)
			continue
		}
		wrong := (it.Gold + 1) % n
		truncated := false
		switch rng.IntN(6) {
		case 0:
			p.Unsupported = true
			c.unsupported++
		case 1: // no cloze inference at all
		case 2: // a tie between the first two options: a low-margin decision
			p.LogLiks = make([]backends.LLResult, n)
			for j := range p.LogLiks {
				p.LogLiks[j].LogProb = -5
			}
			p.LogLiks[0].LogProb, p.LogLiks[1].LogProb = -1, -1
			c.lowConf++
		default:
			p.LogLiks = make([]backends.LLResult, n)
			best := it.Gold
			if rng.IntN(2) == 0 {
				best = wrong
			}
			for j := range p.LogLiks {
				p.LogLiks[j].LogProb = -2 - 3*rng.Float64()
			}
			p.LogLiks[best].LogProb = -0.5 * rng.Float64()
		}
		if p.LogLiks != nil {
			c.withCloze++
			if rng.IntN(5) == 0 {
				p.LogLiks[0].ContextTruncated = 7
				truncated = true
			}
			var raw json.RawMessage
			switch rng.IntN(4) {
			case 0:
				full := make([]backends.LLResult, n)
				for j := range full {
					full[j].LogProb = -float64(j+1) * (1 + rng.Float64())
				}
				raw, _ = json.Marshal(full)
			case 1:
				raw, _ = json.Marshal(make([]backends.LLResult, n-1))
			case 2:
				raw = json.RawMessage(`{"not": "a list"}`)
			}
			if raw != nil {
				p.Variants = map[string]json.RawMessage{variantClozeText: raw}
			}
		}
		gen := backends.Generation{FinishReason: "stop"}
		switch rng.IntN(6) {
		case 0: // no generation
		case 1:
			gen.Text = "Saya tidak pasti"
			c.parseFail++
		case 2:
			gen.Text, gen.FinishReason = "Let me think about", "length"
			c.parseFail++
		case 3:
			gen.Text, gen.FinishReason = "Jawapan: "+letter(it.Gold)+" kerana", "length"
		case 4:
			gen.Text = letter(wrong)
		default:
			gen.Text = "(" + letter(it.Gold) + ")"
		}
		if gen.Text != "" {
			if rng.IntN(5) == 0 {
				gen.PromptTruncated = 3
				truncated = true
			}
			p.Generations = []backends.Generation{gen}
			c.withGen++
		}
		if truncated {
			c.ctxCut++
		}
		for _, probe := range []string{"shuffle", "unanswerable"} {
			var raw json.RawMessage
			switch rng.IntN(4) {
			case 0: // probe not run
				continue
			case 1:
				raw = json.RawMessage(`["malformed"]`)
			default:
				v := probeResult{Gold: rng.IntN(n), Prediction: scorers.Prediction{ItemID: it.ID}}
				if probe == "unanswerable" {
					v.Gold = -1
				}
				v.Prediction.Generations = []backends.Generation{{Text: letter(rng.IntN(n)), FinishReason: "stop"}}
				v.Prediction.LogLiks = make([]backends.LLResult, n)
				for j := range v.Prediction.LogLiks {
					v.Prediction.LogLiks[j].LogProb = -rng.Float64()
				}
				raw, _ = json.Marshal(v)
			}
			if p.Variants == nil {
				p.Variants = map[string]json.RawMessage{}
			}
			p.Variants[probeKey(probe)] = raw
		}
		items, preds = append(items, it), append(preds, p)
	}
	return items, preds, c
}

// checkFixtureResult ties the whole-axis result to the fixture's own counts,
// so that a counter the scorer dropped fails here and not only across splits.
func checkFixtureResult(t *testing.T, mode string, r scorers.AxisResult, c tallyCounts) {
	t.Helper()
	scored := c.withGen
	if mode == "cloze" {
		scored = c.withCloze
	}
	if r.N != scored || len(r.Items) != scored {
		t.Errorf("%s: N %d, %d item scores, want %d", mode, r.N, len(r.Items), scored)
	}
	if r.CI95 == nil || r.Score == nil || r.CI95[0] > *r.Score || r.CI95[1] < *r.Score {
		t.Errorf("%s: score %v ci %v", mode, r.Score, r.CI95)
	}
	if r.Chance <= 1.0/5 || r.Chance >= 1.0/2 {
		t.Errorf("%s: chance %v outside (1/5, 1/2)", mode, r.Chance)
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{
		fmt.Sprintf("unsupported by the backend for %d items", c.unsupported),
		"WARNING: truncation_rate",
		fmt.Sprintf("%d items could not be answered by the model (first error: backend refused item 9)", c.errored),
		fmt.Sprintf("%d items had their prompt left-truncated", c.ctxCut),
		fmt.Sprintf("%d of %d items have no scorable prediction", c.items-scored, c.items),
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("%s: notes lack %q:\n%s", mode, want, notes)
		}
	}
	sec := r.Secondary
	if sec["low_conf_items"] != c.lowConf || sec["parse_fail"] != c.parseFail || sec["context_truncated_items"] != c.ctxCut {
		t.Errorf("%s: secondary %v, want low_conf_items %d parse_fail %d context_truncated_items %d", mode, sec, c.lowConf, c.parseFail, c.ctxCut)
	}
	for _, k := range []string{"acc", "acc_norm", "shuffle_drop", "unanswerable_drop"} {
		if _, ok := sec[k].(float64); !ok {
			t.Errorf("%s: secondary %s = %v, want a number", mode, k, sec[k])
		}
	}
	for _, k := range []string{"shuffle_n", "unanswerable_n"} {
		if n, _ := sec[k].(int); n < 2 {
			t.Errorf("%s: secondary %s = %v, want several probed items", mode, k, sec[k])
		}
	}
	if (mode == "both") != (r.ByScoring != nil) {
		t.Errorf("%s: by_scoring %+v", mode, r.ByScoring)
	}
	if mode == "both" && (r.ByScoring.Gap == nil || r.ByScoring.ParseFail != c.parseFail) {
		t.Errorf("%s: by_scoring %+v", mode, *r.ByScoring)
	}
}

func TestTallyMatchesScoreWhateverTheSplit(t *testing.T) {
	items, preds, counts := tallyFixture()
	for _, mode := range []string{"cloze", "generate", "both"} {
		t.Run(mode, func(t *testing.T) {
			opt := scorers.ScoreOptions{ScoringMode: mode, Seed: 5, BootstrapResamples: 300}
			whole := scorerstest.CheckSplits(t, NewAxis("knowledge"), opt, items, preds)
			checkFixtureResult(t, mode, whole, counts)
		})
	}
}

func TestTallyWithNothingAddedIsScoreOfNothing(t *testing.T) {
	for _, mode := range []string{"cloze", "generate", "both"} {
		t.Run(mode, func(t *testing.T) {
			opt := scorers.ScoreOptions{ScoringMode: mode, Seed: 1, BootstrapResamples: 100}
			if want := scorerstest.CheckEmpty(t, NewAxis("nlu"), opt); want.Items != nil {
				t.Errorf("item scores of nothing: %v", want.Items)
			}
		})
	}
}

func TestTallyRejectsMismatchedShardsWithoutCountingThem(t *testing.T) {
	items, preds, _ := tallyFixture()
	ax := NewAxis("cultural")
	opt := scorers.ScoreOptions{ScoringMode: "both", Seed: 2, BootstrapResamples: 100}
	want, err := ax.Score(items[:10], preds[:10], opt)
	if err != nil {
		t.Fatal(err)
	}
	tl := scorerstest.Tally(t, ax, opt)
	scores := scorerstest.Add(t, tl, items[:10], preds[:10], []int{10})
	if _, err := tl.Add(items[10:20], preds[10:19]); err == nil || !strings.Contains(err.Error(), "10 items but 9 predictions") {
		t.Errorf("uneven shard: error %v", err)
	}
	swapped := append([]scorers.Prediction(nil), preds[10:20]...)
	swapped[4], swapped[5] = swapped[5], swapped[4]
	if _, err := tl.Add(items[10:20], swapped); err == nil || !strings.Contains(err.Error(), `prediction 4 is for "d/15", want "d/14"`) {
		t.Errorf("mismatched item id: error %v", err)
	}
	scorerstest.CheckResult(t, "after rejected shards", tl, scores, want)
}

// The probe counters must count exactly what the probes package's drop
// functions count on the same picks.
func TestProbeTallyAgreesWithProbesPackage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 200 {
		n := rng.IntN(12)
		var pt probeTally
		var orig, shuf []bool
		var gold, origPick, probePick []int
		for range n {
			o, s := rng.IntN(2) == 0, rng.IntN(3) == 0
			pt.shuffle.Add(o, s)
			orig, shuf = append(orig, o), append(shuf, s)
			g, op, pp := rng.IntN(4)-1, rng.IntN(4)-1, rng.IntN(4)-1
			pt.unans.Add(g, op, pp)
			gold, origPick, probePick = append(gold, g), append(origPick, op), append(probePick, pp)
		}
		sig := pt.signals()
		if n == 0 {
			if len(sig) != 0 {
				t.Fatalf("round %d: signals of no probes: %v", round, sig)
			}
			continue
		}
		if w := probes.ShuffleDrop(orig, shuf); sig["shuffle_drop"] != w || sig["shuffle_n"] != n {
			t.Fatalf("round %d: shuffle_drop %v n %v, want %v n %d", round, sig["shuffle_drop"], sig["shuffle_n"], w, n)
		}
		w := probes.UnanswerableDrop(gold, origPick, probePick)
		got, present := sig["unanswerable_drop"]
		if !present || sig["unanswerable_n"] != n {
			t.Fatalf("round %d: signals %v", round, sig)
		}
		if math.IsNaN(w) != (got == nil) || (got != nil && got != w) {
			t.Fatalf("round %d: unanswerable_drop %v, want %v", round, got, w)
		}
	}
}

// TestDuplicateChoicesAreAWarning: items with two options of the same text
// are counted in a WARNING note naming the first; an axis without any has
// no such note.
func TestDuplicateChoicesAreAWarning(t *testing.T) {
	items, preds, _ := tallyFixture()
	ax := NewAxis("knowledge")
	opt := scorers.ScoreOptions{ScoringMode: "both", Seed: 2, BootstrapResamples: 100}
	r, err := ax.Score(items, preds, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "same text") {
			t.Fatalf("note without duplicates: %q", n)
		}
	}
	dup := append([]scorers.Item(nil), items...)
	for _, i := range []int{4, 30} {
		dup[i].Choices = append([]string(nil), dup[i].Choices...)
		dup[i].Choices[1] = dup[i].Choices[0] + " "
	}
	r, err = ax.Score(dup, preds, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := "WARNING: 2 items have two options with the same text (first: d/4)"
	found := false
	for _, n := range r.Notes {
		found = found || strings.HasPrefix(n, want)
	}
	if !found {
		t.Errorf("notes %q, want one starting %q", r.Notes, want)
	}
}
