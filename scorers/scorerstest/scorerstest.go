// Package scorerstest holds what the axes' tests share to show that a Tally
// keeps the promise of scorers.Tally: adding an axis shard by shard, however
// it is split, gives to the byte the result and item scores that scoring it
// whole gives.
package scorerstest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"gopkg.in/yaml.v3"
)

// Split is one way of cutting an axis into shards: the shards' sizes, in order.
type Split struct {
	Name  string
	Sizes []int
}

// Splits returns the ways the tests cut n items into shards: shards of 1,
// 2, 3 and 7 items, and shards of 0 to 11 items drawn with a fixed seed. The
// random split also starts and ends with an empty shard, so that every axis
// is tried with a tally whose first and last Add have nothing to score.
func Splits(n int) []Split {
	var out []Split
	for _, size := range []int{1, 2, 3, 7} {
		var sizes []int
		for left := n; left > 0; left -= size {
			sizes = append(sizes, min(size, left))
		}
		out = append(out, Split{fmt.Sprintf("size %d", size), sizes})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []int{0}
	for left := n; left > 0; {
		size := min(rng.IntN(12), left)
		sizes = append(sizes, size)
		left -= size
	}
	sizes = append(sizes, 0)
	return append(out, Split{"random", sizes})
}

// JSON is v as json.Marshal writes it. An AxisResult's JSON leaves out its
// Items, so two results compare as published.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Tally starts a tally of ax, failing t if opt is refused.
func Tally(t testing.TB, ax scorers.Axis, opt scorers.ScoreOptions) scorers.Tally {
	t.Helper()
	tl, err := ax.Tally(opt)
	if err != nil {
		t.Fatalf("%s: Tally: %v", ax.Name(), err)
	}
	return tl
}

// Add adds items and preds to tl in shards of the given sizes, which must add
// up to len(items), and returns the item scores of every shard in order.
// Each Add must succeed and return scores of its own shard's items only, in
// their order and at most one per item.
func Add(t testing.TB, tl scorers.Tally, items []scorers.Item, preds []scorers.Prediction, sizes []int) []scorers.ItemScore {
	t.Helper()
	var all []scorers.ItemScore
	at := 0
	for _, size := range sizes {
		all = append(all, addShard(t, "", tl, items, preds, at, size)...)
		at += size
	}
	if at != len(items) {
		t.Fatalf("shards %v hold %d items, not the %d given", sizes, at, len(items))
	}
	return all
}

// addShard adds items[at:at+size] and preds[at:at+size] to tl; where
// prefixes its failures.
func addShard(t testing.TB, where string, tl scorers.Tally, items []scorers.Item, preds []scorers.Prediction, at, size int) []scorers.ItemScore {
	t.Helper()
	shard := items[at : at+size]
	scores, err := tl.Add(shard, preds[at:at+size])
	if err != nil {
		t.Fatalf("%sshard of items %d to %d: %v", where, at, at+size, err)
	}
	// Walk the shard's items once: a score that is not of the next items
	// belongs to another shard, comes out of order or repeats an item.
	next := 0
	for _, s := range scores {
		for next < len(shard) && shard[next].ID != s.ItemID {
			next++
		}
		if next == len(shard) {
			t.Fatalf("%sshard of items %d to %d: item score for %q is not of the shard's items in order", where, at, at+size, s.ItemID)
		}
		next++
	}
	return scores
}

// ScoreShards adds items and preds to a new tally of ax in shards of the
// given sizes, as Add does, and returns its result and the item scores.
func ScoreShards(t testing.TB, ax scorers.Axis, opt scorers.ScoreOptions, items []scorers.Item, preds []scorers.Prediction, sizes []int) (scorers.AxisResult, []scorers.ItemScore) {
	t.Helper()
	tl := Tally(t, ax, opt)
	scores := Add(t, tl, items, preds, sizes)
	return Result(t, tl), scores
}

// Result is tl's result, which must come without item scores.
func Result(t testing.TB, tl scorers.Tally) scorers.AxisResult {
	t.Helper()
	r, err := tl.Result()
	if err != nil {
		t.Fatalf("Result: %v", err)
	}
	if r.Items != nil {
		t.Errorf("Result carries %d item scores, want none", len(r.Items))
	}
	return r
}

// CheckResult requires tl's result to be want's (as JSON: Items left out)
// and the item scores its Adds returned to be want's Items, and returns the
// result; what names the tally in failures.
func CheckResult(t testing.TB, what string, tl scorers.Tally, scores []scorers.ItemScore, want scorers.AxisResult) scorers.AxisResult {
	t.Helper()
	got := Result(t, tl)
	if g, w := JSON(t, got), JSON(t, want); g != w {
		t.Errorf("%s: result\n%s\nwant\n%s", what, g, w)
	}
	if g, w := JSON(t, scores), JSON(t, want.Items); g != w {
		t.Errorf("%s: item scores\n%s\nwant\n%s", what, g, w)
	}
	return got
}

// CheckSplits scores items and preds whole with ax.Score, then adds them to
// a new tally in each of Splits. Every split must give Score's result (as
// JSON: Items left out) and, shard after shard, Score's item scores. A result
// taken after the first shard with items must not change as later shards are
// added, and Result asked twice must answer the same. CheckSplits returns the
// whole result, with its Items, so that the caller can check that the
// fixture reaches what the tally accumulates: agreement across splits proves
// little for a counter that stays zero.
func CheckSplits(t testing.TB, ax scorers.Axis, opt scorers.ScoreOptions, items []scorers.Item, preds []scorers.Prediction) scorers.AxisResult {
	t.Helper()
	whole, err := ax.Score(items, preds, opt)
	if err != nil {
		t.Fatalf("%s: Score: %v", ax.Name(), err)
	}
	for _, sp := range Splits(len(items)) {
		tl := Tally(t, ax, opt)
		var scores []scorers.ItemScore
		earlyJSON := ""
		var early scorers.AxisResult
		at := 0
		for _, size := range sp.Sizes {
			scores = append(scores, addShard(t, ax.Name()+": split "+sp.Name+": ", tl, items, preds, at, size)...)
			if at == 0 && size > 0 {
				early = Result(t, tl)
				earlyJSON = JSON(t, early)
			}
			at += size
		}
		got := CheckResult(t, ax.Name()+": split "+sp.Name, tl, scores, whole)
		if again := Result(t, tl); JSON(t, again) != JSON(t, got) {
			t.Errorf("%s: split %s: a second Result differs:\n%s\nthe first\n%s", ax.Name(), sp.Name, JSON(t, again), JSON(t, got))
		}
		if g := JSON(t, early); earlyJSON != "" && g != earlyJSON {
			t.Errorf("%s: split %s: later shards changed the result taken after the first:\n%s\nwas\n%s", ax.Name(), sp.Name, g, earlyJSON)
		}
	}
	CheckStatistic(t, ax.Name(), whole)
	return whole
}

// CheckStatistic requires the statistic registered for res.Metric, computed
// from res.Items as scores.jsonl gives them back (through JSON), to be
// res.Score to the last bit: the published headline is a function of the
// item records, so everything that re-derives it gets the same number.
func CheckStatistic(t testing.TB, what string, res scorers.AxisResult) {
	t.Helper()
	if res.Score == nil {
		return
	}
	st, ok := scorers.StatisticOf(res.Metric)
	if !ok {
		t.Errorf("%s: metric %q has no registered statistic (scorers.RegisterStatistic)", what, res.Metric)
		return
	}
	var items []scorers.ItemScore
	if err := json.Unmarshal([]byte(JSON(t, res.Items)), &items); err != nil {
		t.Fatalf("%s: item scores do not read back: %v", what, err)
	}
	got, err := st.Of(items)
	switch {
	case err != nil:
		t.Errorf("%s: statistic %s over the item scores: %v", what, res.Metric, err)
	case got == nil:
		t.Errorf("%s: statistic %s over the item scores is undefined; the result publishes %v", what, res.Metric, *res.Score)
	case *got != *res.Score:
		t.Errorf("%s: statistic %s over the item scores is %v; the result publishes %v", what, res.Metric, *got, *res.Score)
	}
}

// CheckEmpty requires a tally given nothing, and one given only an empty
// shard, to give what ax.Score gives for no items, and returns that result
// for the caller's own checks.
func CheckEmpty(t testing.TB, ax scorers.Axis, opt scorers.ScoreOptions) scorers.AxisResult {
	t.Helper()
	want, err := ax.Score(nil, nil, opt)
	if err != nil {
		t.Fatalf("%s: Score of nothing: %v", ax.Name(), err)
	}
	if len(want.Items) != 0 {
		t.Errorf("Score of nothing has %d item scores", len(want.Items))
	}
	for _, sizes := range [][]int{nil, {0}} {
		tl := Tally(t, ax, opt)
		Add(t, tl, nil, nil, sizes)
		if g, w := JSON(t, Result(t, tl)), JSON(t, want); g != w {
			t.Errorf("tally given %d empty shards:\n%s\nwant Score of nothing\n%s", len(sizes), g, w)
		}
	}
	return want
}

// Fields decodes a dataset's fields mapping written as in a run config's
// YAML, failing t when it does not decode.
func Fields(t testing.TB, y string) *dataset.Mapping {
	t.Helper()
	var m dataset.Mapping
	if err := yaml.Unmarshal([]byte(y), &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// SameJSON fails t unless got and want hold as many values and each pair
// marshals to the same JSON: what the preset tests ask of a preset and the
// legacy reader it replaced. what names the file or case in the failure.
func SameJSON[T any](t testing.TB, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d items, legacy %d", what, len(got), len(want))
	}
	for i := range want {
		if g, w := JSON(t, got[i]), JSON(t, want[i]); g != w {
			t.Fatalf("%s item %d differs:\npreset %s\nlegacy %s", what, i, g, w)
		}
	}
}

// Load reads cfg's datasets with ax, failing t when they do not load.
func Load(t testing.TB, ax scorers.Axis, cfg scorers.AxisConfig) []scorers.Item {
	t.Helper()
	items, err := ax.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return items
}
