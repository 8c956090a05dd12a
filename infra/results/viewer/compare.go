package viewer

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"

	// The axis plugins register their headline statistics.
	_ "github.com/glossobench/glossobench/scorers/ifeval"
	_ "github.com/glossobench/glossobench/scorers/mcq"
	_ "github.com/glossobench/glossobench/scorers/mt"
	_ "github.com/glossobench/glossobench/scorers/nlg"
	_ "github.com/glossobench/glossobench/scorers/safety"
)

// The paired comparison's settings are `glossobench sigtest`'s defaults, so
// the page shows the numbers sigtest prints for the same two runs.
const (
	compareResamples = 2000
	compareSeed      = 1
	compareLevel     = 0.95
)

// compareAxis is one axis of two runs on their shared items.
type compareAxis struct {
	Axis         string
	Metric       string // the headline statistic both runs publish
	OnlyA, OnlyB int    // items scored in one run only
	Shared       int
	Disagree     int // shared items whose scores differ
	// A and B are the axis's headline statistic of each run on the shared
	// items, Delta = A − B, Lo–Hi its paired bootstrap interval and P the
	// paired permutation p-value (stats.CompareStatistics, as sigtest).
	A, B, Delta, Lo, Hi, P *float64
	Note                   string // why there is no statistic
	FirstDisagreed         []disagreement
}

type disagreement struct {
	ID     string
	A, B   float64
	QueryA string
}

// maxListed bounds the disagreements listed per axis.
const maxListed = 50

// Compare reads the scores of every axis the two runs share, a line at a
// time (run a's are held as an id → score and headline terms map), and
// compares each axis's headline statistic on the shared items.
func (s *Server) Compare(ctx context.Context, a, b string) ([]compareAxis, error) {
	ra, err := readResult(ctx, s.st, a)
	if err != nil {
		return nil, err
	}
	rb, err := readResult(ctx, s.st, b)
	if err != nil {
		return nil, err
	}
	var out []compareAxis
	var paired []stats.PairedTerms
	var at []int // out's index of each paired axis
	for _, axis := range slices.Sorted(mapKeys(ra.Axes)) {
		xb, ok := rb.Axes[axis]
		if !ok {
			continue
		}
		xa := ra.Axes[axis]
		c := compareAxis{Axis: axis, Metric: xa.Metric}
		st, why := headlineStatistic(xa, xb)
		c.Note = why
		type record struct {
			score float64
			terms []float64
		}
		recsA := map[string]record{}
		if err := eachScore(ctx, s.st, a, axis, func(sl scoreLine, raw []byte) (bool, error) {
			r := record{score: sl.Score}
			if c.Note == "" {
				t, err := termsOf(st, raw)
				if err != nil {
					c.Note = fmt.Sprintf("%s: %v", a, err)
				}
				r.terms = t
			}
			recsA[sl.ItemID] = r
			return true, nil
		}); err != nil {
			return nil, err
		}
		var ids []string
		termsB := map[string][]float64{}
		if err := eachScore(ctx, s.st, b, axis, func(sl scoreLine, raw []byte) (bool, error) {
			ra, ok := recsA[sl.ItemID]
			if !ok {
				c.OnlyB++
				return true, nil
			}
			ids = append(ids, sl.ItemID)
			if c.Note == "" {
				t, err := termsOf(st, raw)
				if err != nil {
					c.Note = fmt.Sprintf("%s: %v", b, err)
				}
				termsB[sl.ItemID] = t
			}
			if sl.Score != ra.score {
				c.Disagree++
				if len(c.FirstDisagreed) < maxListed {
					c.FirstDisagreed = append(c.FirstDisagreed, disagreement{ID: sl.ItemID, A: ra.score, B: sl.Score, QueryA: Filter{Q: sl.ItemID}.query(1)})
				}
			}
			return true, nil
		}); err != nil {
			return nil, err
		}
		c.Shared, c.OnlyA = len(ids), len(recsA)-len(ids)
		if c.Note == "" && c.Shared == 0 {
			c.Note = "no shared items"
		}
		if c.Note == "" {
			// sigtest's pairing: shared items in id order, the axis weighed
			// as run a weighs it (else as b does).
			slices.Sort(ids)
			pt := stats.PairedTerms{Name: axis, Weight: cmp.Or(xa.Weight, xb.Weight), Value: st.Value}
			for _, id := range ids {
				pt.A, pt.B = append(pt.A, recsA[id].terms), append(pt.B, termsB[id])
			}
			paired, at = append(paired, pt), append(at, len(out))
		}
		out = append(out, c)
	}
	// The calls sigtest makes: one for the axes of both runs' ms_public, one
	// for the rest. A call's resamples draw each of its axes' items in turn
	// from one stream, so these groups give sigtest's intervals.
	var ms, rest []int
	for i, pt := range paired {
		if slices.Contains(ra.Summary.MSAxes, pt.Name) && slices.Contains(rb.Summary.MSAxes, pt.Name) {
			ms = append(ms, i)
		} else {
			rest = append(rest, i)
		}
	}
	for _, group := range [][]int{ms, rest} {
		if len(group) == 0 {
			continue
		}
		var pts []stats.PairedTerms
		for _, i := range group {
			pts = append(pts, paired[i])
		}
		diffs, _, err := stats.CompareStatistics(pts, compareResamples, compareSeed, compareLevel)
		if err == nil {
			for k, d := range diffs {
				setDifference(&out[at[group[k]]], d)
			}
			continue
		}
		// One axis's statistic is undefined somewhere (sigtest refuses the
		// pair); compare each axis alone.
		for _, i := range group {
			d, _, err := stats.CompareStatistics([]stats.PairedTerms{paired[i]}, compareResamples, compareSeed, compareLevel)
			if err != nil {
				out[at[i]].Note = err.Error()
				continue
			}
			setDifference(&out[at[i]], d[0])
			out[at[i]].Note = "interval of this axis alone (another axis could not be compared), so not sigtest's"
		}
	}
	return out, nil
}

// headlineStatistic is the statistic both runs publish on an axis, or why
// there is none to compare.
func headlineStatistic(a, b runfiles.AxisReport) (scorers.Statistic, string) {
	switch {
	case a.Score == nil || b.Score == nil:
		return scorers.Statistic{}, "a run published no headline for this axis"
	case a.Metric != b.Metric:
		return scorers.Statistic{}, fmt.Sprintf("a publishes %s and b %s; they cannot be compared", a.Metric, b.Metric)
	}
	st, ok := scorers.StatisticOf(a.Metric)
	if !ok {
		return st, fmt.Sprintf("metric %q has no known statistic", a.Metric)
	}
	return st, ""
}

// termsOf is the headline terms of one scores.jsonl record.
func termsOf(st scorers.Statistic, raw []byte) ([]float64, error) {
	var s scorers.ItemScore
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	t := make([]float64, st.Width)
	if err := st.Terms(s, t); err != nil {
		return nil, fmt.Errorf("item %s: %w", s.ItemID, err)
	}
	return t, nil
}

func setDifference(c *compareAxis, d stats.Difference) {
	c.A, c.B, c.Delta, c.Lo, c.Hi, c.P = &d.A, &d.B, &d.Delta, &d.Lo, &d.Hi, &d.P
}

func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	a, b := r.URL.Query().Get("a"), r.URL.Query().Get("b")
	if a == "" || b == "" {
		http.Error(w, "compare: want two runs, ?a=RUN&b=RUN", http.StatusBadRequest)
		return
	}
	axes, err := s.Compare(r.Context(), a, b)
	if err != nil {
		s.fail(w, fmt.Errorf("compare %s with %s: %w", a, b, err))
		return
	}
	s.render(w, "compare.html", map[string]any{"A": a, "B": b, "Axes": axes,
		"Resamples": compareResamples, "Seed": compareSeed, "Level": compareLevel * 100})
}
