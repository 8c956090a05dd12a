package viewer

import (
	"context"
	"fmt"
	"net/http"
	"slices"
)

// compareAxis is one axis of two runs on their shared items.
type compareAxis struct {
	Axis           string
	OnlyA, OnlyB   int // items scored in one run only
	Shared         int
	Disagree       int      // shared items whose scores differ
	MeanDiff       *float64 // mean over shared items of score(b) − score(a), per item
	FirstDisagreed []disagreement
}

type disagreement struct {
	ID     string
	A, B   float64
	QueryA string
}

// maxListed bounds the disagreements listed per axis.
const maxListed = 50

// Compare reads the scores of every axis the two runs share, a line at a
// time (run a's scores are held as an id → score map).
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
		if _, ok := rb.Axes[axis]; !ok {
			continue
		}
		scoresA := map[string]float64{}
		if err := eachScore(ctx, s.st, a, axis, func(sl scoreLine, _ []byte) (bool, error) {
			scoresA[sl.ItemID] = sl.Score
			return true, nil
		}); err != nil {
			return nil, err
		}
		c := compareAxis{Axis: axis}
		seen := 0
		var sum float64
		if err := eachScore(ctx, s.st, b, axis, func(sl scoreLine, _ []byte) (bool, error) {
			sa, ok := scoresA[sl.ItemID]
			if !ok {
				c.OnlyB++
				return true, nil
			}
			seen++
			sum += sl.Score - sa
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
		c.Shared, c.OnlyA = seen, len(scoresA)-seen
		if seen > 0 {
			m := sum / float64(seen)
			c.MeanDiff = &m
		}
		out = append(out, c)
	}
	return out, nil
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
	s.render(w, "compare.html", map[string]any{"A": a, "B": b, "Axes": axes})
}
