package nlg

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/chrf"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// lengthMetricX scores a segment by its hypothesis length, so that scores
// vary, some fall below 0 and some above 25 (SEA-HELM's normalisation clamps
// them). It fails a call whose sources include poison, and counts calls.
type lengthMetricX struct {
	poison string
	mu     sync.Mutex
	calls  int
}

func (f *lengthMetricX) Score(_ context.Context, src, hyp, ref []string) ([]float64, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.poison != "" && slices.Contains(src, f.poison) {
		return nil, errors.New("server said no")
	}
	out := make([]float64, len(hyp))
	for i := range hyp {
		out[i] = float64(len(hyp[i])%31) - 3 + 0.125*float64(len(ref[i])%5)
	}
	return out, nil
}

func (f *lengthMetricX) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// tallyFixture is 52 items in three directions (40 SEA-HELM en-id rows, 6
// Belebele passages both ways) naming metricx as their MetricX-24, with
// predictions of every kind the scorer tells apart. Items 14–20 have two
// references, the better one second; item 30 has ["", ref] and item 31
// [ref, ""], so that with shards of 7 some shards hold one reference per
// item and one shard two.
func tallyFixture(t *testing.T, metricx string) ([]scorers.Item, []scorers.Prediction) {
	t.Helper()
	cfg := scorers.AxisConfig{BaseDir: data, Datasets: []scorers.DatasetConfig{
		{Name: "flores_en_id", Path: "flores200_devtest_en_to_ind_Latn.sample.jsonl", Format: FormatSeaHelm},
		{Name: "passages", Path: "flores_passages_eng_zsm_from_belebele.sample.jsonl", Format: FormatPassages, Limit: 6},
	}}
	if metricx != "" {
		cfg.Options = map[string]any{"metricx": metricx}
	}
	items := scorerstest.Load(t, NewAxis(), cfg)
	if len(items) != 52 {
		t.Fatalf("%d items, want 52", len(items))
	}
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		var ex extra
		if err := json.Unmarshal(it.Extra, &ex); err != nil {
			t.Fatal(err)
		}
		ref := it.References[0]
		words := strings.Fields(ref)
		half := strings.Join(words[:len(words)/2+1], " ")
		switch {
		case i >= 14 && i <= 20:
			it.References = []string{"lorem ipsum " + strings.Join(words[len(words)/2:], " "), ref}
		case i == 30:
			it.References = []string{"", ref}
		case i == 31:
			it.References = []string{ref, ""}
		}
		items[i] = it
		gen := backends.Generation{FinishReason: "stop"}
		preds[i] = scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{gen}}
		switch i % 9 {
		case 0:
			gen.Text = "Terjemahan: " + ref
		case 1:
			preds[i].Unsupported = true
		case 2:
			preds[i].Error = "backend: timeout"
		case 3:
			preds[i].Generations = nil
		case 4:
			gen.Text, gen.FinishReason = "Terjemahan: "+half, "length"
		case 5:
			gen.Text = "Terjemahan:"
		case 6:
			backwards := slices.Clone(words)
			slices.Reverse(backwards)
			gen.Text = strings.Join(backwards, " ") // no label
		case 7:
			gen.Text = "Here it is.\nTranslation: " + ex.Source
		case 8:
			gen.Text = "**Terjemahan:** " + half + "\n\nNote: literal."
		}
		if preds[i].Generations != nil {
			preds[i].Generations[0] = gen
		}
	}
	return items, preds
}

var registerTallyMetricX = sync.OnceValue(func() *lengthMetricX {
	ok := &lengthMetricX{}
	RegisterMetricX("tally-ok", func() (MetricX, error) { return ok, nil })
	return ok
})

// Adding an axis shard by shard gives the result and item scores of
// scoring it whole, with MetricX-24 absent, working or unavailable.
func TestTallyMatchesScore(t *testing.T) {
	registerTallyMetricX()
	opt := scorers.ScoreOptions{Seed: 5, BootstrapResamples: 300}
	for _, metricx := range []string{"", "tally-ok", "tally-absent"} {
		t.Run(cmp.Or(metricx, "no metricx"), func(t *testing.T) {
			items, preds := tallyFixture(t, metricx)
			whole := scorerstest.CheckSplits(t, NewAxis(), opt, items, preds)
			// The fixture must reach what the tally accumulates, or equality
			// proves little.
			sec := whole.Secondary
			if whole.N != 52 || len(whole.Items) != 52 || whole.CI95 == nil || whole.TruncationRate == 0 ||
				sec["empty_outputs"].(int) == 0 || sec["unlabelled_outputs"].(int) == 0 ||
				len(sec["by_direction"].(map[string]any)) != 3 || !strings.Contains(sec["signature"].(string), "nrefs:var") {
				t.Fatalf("fixture too tame: %+v", whole)
			}
			flags := map[string]bool{}
			for _, is := range whole.Items {
				flags[is.Flagged] = true
			}
			if len(flags) != 5 { // "", no_output, truncated, empty, no_label
				t.Fatalf("flags %v", flags)
			}
			notes := strings.Join(whole.Notes, "|")
			switch metricx {
			case "tally-ok":
				if sec["metricx24"] == nil || whole.Items[0].Fields["metricx24"] == nil || !strings.Contains(notes, "metricx24 (tally-ok) reported") {
					t.Fatalf("metricx not reported: %v, notes %q", sec, notes)
				}
			case "tally-absent":
				if !strings.Contains(notes, "metricx unavailable") {
					t.Fatalf("notes %q", notes)
				}
			}
		})
	}
}

// A segment's chrF statistics ignore the "" that pad shorter reference
// lists, so a shard padded to its own longest list scores each item as the
// whole axis padded to the axis's does.
func TestSegmentStatsIgnorePadding(t *testing.T) {
	items, preds := tallyFixture(t, "")
	whole, err := NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	m := chrf.New(chrf.ChrFPlusPlus)
	hyps := make([]string, len(items))
	padded := [][]string{make([]string, len(items)), make([]string, len(items))}
	for i, it := range items {
		hyps[i] = whole.Items[i].Fields["hypothesis"].(string)
		for k, r := range it.References {
			padded[k][i] = r
		}
	}
	all, err := m.SegmentStats(hyps, padded)
	if err != nil {
		t.Fatal(err)
	}
	secondWins := false
	for i, it := range items {
		own := make([][]string, len(it.References))
		for k, r := range it.References {
			own[k] = []string{r}
		}
		alone, err := m.SegmentStats(hyps[i:i+1], own)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(alone[0], all[i]) {
			t.Errorf("item %d (%d references): stats %v alone, %v padded in the axis", i, len(it.References), alone[0], all[i])
		}
		if len(it.References) == 2 && it.References[0] != "" {
			first, _ := m.SegmentStats(hyps[i:i+1], own[:1])
			secondWins = secondWins || !slices.Equal(first[0], all[i])
		}
	}
	if !secondWins {
		t.Error("no item's second reference was its best: the two-reference items test nothing")
	}
}

// The signature is the one sacrebleu's corpus call over the padded streams
// reports: nrefs:1, nrefs:2 or nrefs:var, whole or shard by shard.
func TestTallySignature(t *testing.T) {
	base, preds := tallyFixture(t, "")
	m := chrf.New(chrf.ChrFPlusPlus)
	for _, tc := range []struct {
		name string
		refs func(i int, ref string) []string
		want string
	}{
		{"one", func(_ int, ref string) []string { return []string{ref} }, "nrefs:1|"},
		{"two", func(_ int, ref string) []string { return []string{"x y", ref} }, "nrefs:2|"},
		{"two padded", func(_ int, ref string) []string { return []string{ref, "", "a b"} }, "nrefs:2|"},
		{"mixed", func(i int, ref string) []string {
			if i%5 == 4 {
				return []string{ref, "x y"}
			}
			return []string{ref}
		}, "nrefs:var|"},
	} {
		items := slices.Clone(base)
		hyps := make([]string, len(items))
		width := 0
		for i := range items {
			ref := base[i].References[slices.IndexFunc(base[i].References, func(r string) bool { return r != "" })]
			items[i].References = tc.refs(i, ref)
			width = max(width, len(items[i].References))
		}
		streams := make([][]string, width)
		for k := range streams {
			streams[k] = make([]string, len(items))
			for i, it := range items {
				if k < len(it.References) {
					streams[k][i] = it.References[k]
				}
			}
		}
		whole, err := NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
		if err != nil {
			t.Fatal(err)
		}
		for i := range items {
			hyps[i] = whole.Items[i].Fields["hypothesis"].(string)
		}
		want := "chrF2++|" + m.Corpus(hyps, streams).Signature
		if got := whole.Secondary["signature"]; got != want || !strings.Contains(want, tc.want) {
			t.Errorf("%s: signature %q, corpus call says %q, want it to contain %q", tc.name, got, want, tc.want)
		}
		for _, sizes := range [][]int{slices.Repeat([]int{1}, len(items)), {4, 48}} {
			res, _ := scorerstest.ScoreShards(t, NewAxis(), scorers.ScoreOptions{BootstrapResamples: 10}, items, preds, sizes)
			if got := res.Secondary["signature"]; got != want {
				t.Errorf("%s, shards %v: signature %q, want %q", tc.name, sizes[:2], got, want)
			}
		}
	}
}

// When MetricX-24 fails on one shard, the result is that of one failed call
// over the axis: the same note, no secondary metric. Later shards are not
// sent. The item scores of the shards before the failure keep the metricx24
// field they were handed out with; the others match Score's.
func TestTallyMetricXFailure(t *testing.T) {
	items, preds := tallyFixture(t, "tally-fail")
	const failing = 25
	var ex extra
	json.Unmarshal(items[failing].Extra, &ex)
	mx := &lengthMetricX{poison: ex.Source}
	RegisterMetricX("tally-fail", func() (MetricX, error) { return mx, nil })

	opt := scorers.ScoreOptions{Seed: 3, BootstrapResamples: 100}
	whole, err := NewAxis().Score(items, preds, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := whole.Secondary["metricx24"]; ok || !slices.Contains(whole.Notes, "metricx tally-fail failed (server said no); chrF++ only") {
		t.Fatalf("whole: secondary %v, notes %q", whole.Secondary, whole.Notes)
	}
	for _, sp := range scorerstest.Splits(len(items)) {
		before := mx.count()
		res, scores := scorerstest.ScoreShards(t, NewAxis(), opt, items, preds, sp.Sizes)
		if got, want := scorerstest.JSON(t, res), scorerstest.JSON(t, whole); got != want {
			t.Errorf("%s: result\n%s\nwant\n%s", sp.Name, got, want)
		}
		// MetricX is called once a shard with items, up to the failing one.
		shard, end, sent := 0, 0, 0
		for end <= failing {
			if sp.Sizes[shard] > 0 {
				sent++
			}
			end += sp.Sizes[shard]
			shard++
		}
		if calls := mx.count() - before; calls != sent {
			t.Errorf("%s: %d MetricX calls, want %d (none after the failing shard)", sp.Name, calls, sent)
		}
		if len(scores) != len(whole.Items) {
			t.Fatalf("%s: %d item scores, want %d", sp.Name, len(scores), len(whole.Items))
		}
		for i, is := range scores {
			_, has := is.Fields["metricx24"]
			if has != (i < end-sp.Sizes[shard-1]) {
				t.Errorf("%s: item %d has metricx24 %v", sp.Name, i, has)
			}
			delete(is.Fields, "metricx24")
			if got, want := scorerstest.JSON(t, is), scorerstest.JSON(t, whole.Items[i]); got != want {
				t.Errorf("%s: item %d\n%s\nwant\n%s", sp.Name, i, got, want)
			}
		}
	}
}

// Items that name no MetricX-24 before one that does cannot be scored once
// their shard is gone; the result says MetricX was not run rather than
// average the rest.
func TestTallyMetricXNamedLate(t *testing.T) {
	ok := registerTallyMetricX()
	items, preds := tallyFixture(t, "")
	named, _ := tallyFixture(t, "tally-ok")
	copy(items[10:], named[10:])
	before := ok.count()
	res, _ := scorerstest.ScoreShards(t, NewAxis(), scorers.ScoreOptions{BootstrapResamples: 10}, items, preds, []int{10, 42})
	if _, has := res.Secondary["metricx24"]; has || ok.count() != before ||
		!slices.Contains(res.Notes, "metricx tally-ok not run: the first 10 items name no MetricX-24; chrF++ only") {
		t.Errorf("secondary %v, notes %q, %d calls", res.Secondary, res.Notes, ok.count()-before)
	}
}

// A tally with nothing added says what scoring no items says.
func TestTallyEmpty(t *testing.T) {
	opt := scorers.ScoreOptions{Seed: 1, BootstrapResamples: 20}
	want := scorerstest.CheckEmpty(t, NewAxis(), opt)
	if want.Items != nil || want.N != 0 || !slices.Equal(want.Notes, []string{"no items to score"}) {
		t.Errorf("Score(nil, nil) %+v", want)
	}
	if scores, err := scorerstest.Tally(t, NewAxis(), opt).Add(nil, nil); err != nil || scores != nil {
		t.Errorf("empty shard: %v, %v", scores, err)
	}
}

// A shard whose items and predictions do not pair up is an error naming the
// position in the axis, and leaves the tally as it was.
func TestTallyAddErrors(t *testing.T) {
	items, preds := tallyFixture(t, "")
	opt := scorers.ScoreOptions{Seed: 2, BootstrapResamples: 50}
	whole, err := NewAxis().Score(items, preds, opt)
	if err != nil {
		t.Fatal(err)
	}
	tl := scorerstest.Tally(t, NewAxis(), opt)
	scores := scorerstest.Add(t, tl, items[:20], preds[:20], []int{20})
	if _, err := tl.Add(items[20:30], preds[20:29]); err == nil || !strings.Contains(err.Error(), "10 items but 9 predictions") {
		t.Errorf("length mismatch: %v", err)
	}
	bad := slices.Clone(preds[20:30])
	bad[5].ItemID = "other"
	if _, err := tl.Add(items[20:30], bad); err == nil || !strings.Contains(err.Error(), `prediction 25 is for item "other"`) {
		t.Errorf("item mismatch: %v", err)
	}
	noRef := slices.Clone(items[20:30])
	noRef[3].References = []string{""}
	_, err = tl.Add(noRef, preds[20:30])
	all := slices.Concat(items[:20], noRef, items[30:])
	_, wholeErr := NewAxis().Score(all, preds, opt)
	if err == nil || wholeErr == nil || err.Error() != wholeErr.Error() || !errors.Is(err, chrf.ErrNoReference) {
		t.Errorf("empty references: shard error %v, whole error %v", err, wholeErr)
	}
	scores = append(scores, scorerstest.Add(t, tl, items[20:], preds[20:], []int{len(items) - 20})...)
	scorerstest.CheckResult(t, "after failed shards", tl, scores, whole)
}
