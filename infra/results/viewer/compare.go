package viewer

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/glossobench/glossobench/infra/results/sigtest"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/stats"

	// The axis plugins register their headline statistics.
	_ "github.com/glossobench/glossobench/scorers/axes"
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
// time (run a's held as an id → score map), counts the items they share and
// those they score differently, and takes each axis's headline statistic on
// the shared items, its paired interval and p from sigtest itself, so the
// page shows the numbers `glossobench sigtest` prints for the same runs.
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
	for _, axis := range slices.Sorted(mapKeys(ra.Axes)) {
		xb, ok := rb.Axes[axis]
		if !ok {
			continue
		}
		xa := ra.Axes[axis]
		c := compareAxis{Axis: axis, Metric: xa.Metric}
		switch {
		case xa.Score == nil || xb.Score == nil:
			c.Note = "a run published no headline for this axis"
		case xa.Metric != xb.Metric:
			c.Note = fmt.Sprintf("a publishes %s and b %s; they cannot be compared", xa.Metric, xb.Metric)
		}
		scoreA := map[string]float64{}
		if err := eachScore(ctx, s.st, a, axis, func(sl scoreLine, _ []byte) (bool, error) {
			scoreA[sl.ItemID] = sl.Score
			return true, nil
		}); err != nil {
			return nil, err
		}
		if err := eachScore(ctx, s.st, b, axis, func(sl scoreLine, _ []byte) (bool, error) {
			sa, ok := scoreA[sl.ItemID]
			if !ok {
				c.OnlyB++
				return true, nil
			}
			c.Shared++
			if sl.Score != sa {
				c.Disagree++
				if len(c.FirstDisagreed) < maxListed {
					c.FirstDisagreed = append(c.FirstDisagreed, disagreement{ID: sl.ItemID, A: sa, B: sl.Score, QueryA: Filter{Q: sl.ItemID}.query(1)})
				}
			}
			return true, nil
		}); err != nil {
			return nil, err
		}
		c.OnlyA = len(scoreA) - c.Shared
		if c.Note == "" && c.Shared == 0 {
			c.Note = "no shared items"
		}
		out = append(out, c)
	}
	rep, err := s.sigtest(ctx, a, b)
	for i := range out {
		c := &out[i]
		if c.Note != "" {
			continue
		}
		if err != nil {
			c.Note = "sigtest: " + err.Error()
			continue
		}
		if k := slices.IndexFunc(rep.Axes, func(d stats.Difference) bool { return d.Name == c.Axis }); k >= 0 {
			setDifference(c, rep.Axes[k])
		} else {
			c.Note = "sigtest leaves this axis out"
		}
	}
	return out, nil
}

// sigtest is `glossobench sigtest A B` with its defaults on two runs of
// the store.
func (s *Server) sigtest(ctx context.Context, a, b string) (*sigtest.Report, error) {
	ia, err := sigtest.FolderInput(runfiles.InStore(ctx, s.st, a))
	if err != nil {
		return nil, err
	}
	ib, err := sigtest.FolderInput(runfiles.InStore(ctx, s.st, b))
	if err != nil {
		return nil, err
	}
	return sigtest.Compare(ia, ib, nil, compareResamples, compareSeed, compareLevel)
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
