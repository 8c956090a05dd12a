package scorerstest

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
)

// countAxis scores an item 1 when its prediction has a generation; an item
// whose prediction failed is not scored. Its tally has the bug named by bug,
// or none.
type countAxis struct{ bug string }

func (countAxis) Name() string       { return "count" }
func (countAxis) Version() string    { return "1" }
func (countAxis) ScorerType() string { return scorers.ScorerRule }

func (countAxis) Load(scorers.AxisConfig) ([]scorers.Item, error) { return nil, nil }

func (countAxis) Predict(context.Context, backends.Backend, scorers.Item, scorers.PredictOptions) (scorers.Prediction, error) {
	return scorers.Prediction{}, nil
}

func (a countAxis) Score(items []scorers.Item, preds []scorers.Prediction, opt scorers.ScoreOptions) (scorers.AxisResult, error) {
	tl, _ := a.Tally(opt)
	return scorers.ScoreAll(tl, items, preds)
}

func (a countAxis) Tally(scorers.ScoreOptions) (scorers.Tally, error) {
	return &countTally{bug: a.bug, byLang: map[string]int{}}, nil
}

type countTally struct {
	bug            string
	scored, passed int
	byLang         map[string]int
	results        int
}

func (t *countTally) Add(items []scorers.Item, preds []scorers.Prediction) ([]scorers.ItemScore, error) {
	if len(items) != len(preds) {
		return nil, fmt.Errorf("%d items but %d predictions", len(items), len(preds))
	}
	if t.bug == "counts each Add afresh" {
		t.scored, t.passed = 0, 0
	}
	if t.bug == "counts an empty shard" && len(items) == 0 {
		t.byLang["none"]++
	}
	var out []scorers.ItemScore
	for i, it := range items {
		if preds[i].Error != "" {
			continue
		}
		s := scorers.ItemScore{ItemID: it.ID, Lang: it.Lang}
		if len(preds[i].Generations) > 0 {
			s.Score = 1
		}
		t.scored++
		t.passed += int(s.Score)
		t.byLang[it.Lang]++
		out = append(out, s)
	}
	if t.bug == "returns a shard's scores backwards" {
		slices.Reverse(out)
	}
	return out, nil
}

func init() { scorers.RegisterStatistic(scorers.MeanStatistic("acc")) }

func (t *countTally) Result() (scorers.AxisResult, error) {
	r := scorers.AxisResult{Axis: "count", Version: "1", Metric: "acc", N: t.scored, ScorerType: scorers.ScorerRule,
		Secondary: map[string]any{"by_lang": maps.Clone(t.byLang)}}
	if t.scored > 0 {
		score := float64(t.passed) / float64(t.scored)
		r.Score = &score
	}
	switch t.bug {
	case "shares its map with a result":
		r.Secondary["by_lang"] = t.byLang
	case "counts Result calls":
		t.results++
		r.Secondary["results"] = t.results
	case "hands out item scores":
		r.Items = []scorers.ItemScore{}
	}
	return r, nil
}

// countFixture is 40 items in two languages, every fifth prediction failed
// and every third without a generation.
func countFixture() ([]scorers.Item, []scorers.Prediction) {
	var items []scorers.Item
	var preds []scorers.Prediction
	for i := range 40 {
		it := scorers.Item{ID: fmt.Sprintf("count/%d", i), Lang: []string{"ms", "id"}[i/20]}
		p := scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: "yes"}}}
		switch {
		case i%5 == 4:
			p.Error = "timeout"
		case i%3 == 0:
			p.Generations = nil
		}
		items, preds = append(items, it), append(preds, p)
	}
	return items, preds
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.failures = append(r.failures, fmt.Sprint(args...))
	runtime.Goexit()
}

// record runs check with a recorder, on a goroutine of its own so that a
// fatal failure ends only the check, and returns what failed.
func record(t *testing.T, check func(testing.TB)) []string {
	r := &recorder{TB: t}
	var wg sync.WaitGroup
	wg.Go(func() { check(r) })
	wg.Wait()
	return r.failures
}

func TestChecksPassACorrectTally(t *testing.T) {
	items, preds := countFixture()
	failures := record(t, func(tb testing.TB) {
		whole := CheckSplits(tb, countAxis{}, scorers.ScoreOptions{}, items, preds)
		if whole.N != 32 || len(whole.Items) != 32 || whole.Score == nil || *whole.Score == 1 {
			tb.Errorf("whole result %+v", whole)
		}
		if empty := CheckEmpty(tb, countAxis{}, scorers.ScoreOptions{}); empty.N != 0 || empty.Score != nil {
			tb.Errorf("empty result %+v", empty)
		}
	})
	if len(failures) != 0 {
		t.Errorf("a correct tally failed:\n%s", strings.Join(failures, "\n"))
	}
}

// Each bug must be caught, and by the check meant for it.
func TestChecksCatchBrokenTallies(t *testing.T) {
	items, preds := countFixture()
	for _, tc := range []struct{ bug, want string }{
		{"counts each Add afresh", "result"},
		{"counts an empty shard", "empty shards:"},
		{"returns a shard's scores backwards", "not of the shard's items in order"},
		{"shares its map with a result", "later shards changed the result taken after the first"},
		{"counts Result calls", "a second Result differs"},
		{"hands out item scores", "Result carries 0 item scores"},
	} {
		failures := record(t, func(tb testing.TB) {
			CheckSplits(tb, countAxis{tc.bug}, scorers.ScoreOptions{}, items, preds)
			CheckEmpty(tb, countAxis{tc.bug}, scorers.ScoreOptions{})
		})
		if !strings.Contains(strings.Join(failures, "\n"), tc.want) {
			t.Errorf("a tally that %s: failures %q, want one saying %q", tc.bug, failures, tc.want)
		}
	}
}

func TestAddRefusesSizesThatMissItems(t *testing.T) {
	items, preds := countFixture()
	failures := record(t, func(tb testing.TB) {
		Add(tb, Tally(tb, countAxis{}, scorers.ScoreOptions{}), items, preds, []int{10, 20})
	})
	if len(failures) != 1 || !strings.Contains(failures[0], "hold 30 items, not the 40 given") {
		t.Errorf("failures %q", failures)
	}
}

func TestSplitsCoverEveryItemOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 52, 80} {
		splits := Splits(n)
		var names []string
		for _, sp := range splits {
			names = append(names, sp.Name)
			sum := 0
			for _, size := range sp.Sizes {
				if size < 0 || size > 11 {
					t.Errorf("n %d, %s: shard of %d", n, sp.Name, size)
				}
				sum += size
			}
			if sum != n {
				t.Errorf("n %d, %s: shards %v hold %d items", n, sp.Name, sp.Sizes, sum)
			}
		}
		if want := []string{"size 1", "size 2", "size 3", "size 7", "random"}; !slices.Equal(names, want) {
			t.Errorf("n %d: splits %q, want %q", n, names, want)
		}
		random := splits[len(splits)-1].Sizes
		if random[0] != 0 || random[len(random)-1] != 0 {
			t.Errorf("n %d: random split %v does not start and end with an empty shard", n, random)
		}
		if JSON(t, Splits(n)) != JSON(t, splits) {
			t.Errorf("n %d: Splits changes from call to call", n)
		}
	}
}
