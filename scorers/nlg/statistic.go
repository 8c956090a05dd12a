package nlg

import (
	"fmt"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/chrf"
)

// StatsField is the item-score field holding the segment's chrF++
// statistics, from which corpus chrF++ is summed.
const StatsField = "chrf_stats"

// Corpus chrF++ is not a mean of sentence scores: it is chrF++ of the
// summed per-segment statistics, so those are the terms.
func init() {
	m := chrf.New(chrf.ChrFPlusPlus)
	width := 3 * (chrf.ChrFPlusPlus.CharOrder + chrf.ChrFPlusPlus.WordOrder)
	scorers.RegisterStatistic(scorers.Statistic{Metric: Metric, Width: width,
		Terms: func(s scorers.ItemScore, t []float64) error {
			switch v := s.Fields[StatsField].(type) {
			case chrf.Stats:
				if len(v) != width {
					return fmt.Errorf("fields.%s has %d numbers, want %d", StatsField, len(v), width)
				}
				for k, x := range v {
					if x < 0 {
						return fmt.Errorf("fields.%s[%d] is %d, not a count", StatsField, k, x)
					}
					t[k] = float64(x)
				}
			case []any:
				if len(v) != width {
					return fmt.Errorf("fields.%s has %d numbers, want %d", StatsField, len(v), width)
				}
				for k, x := range v {
					f, ok := x.(float64)
					if !ok || f < 0 || f != float64(int(f)) {
						return fmt.Errorf("fields.%s[%d] is %v, not a count", StatsField, k, x)
					}
					t[k] = f
				}
			default:
				return fmt.Errorf("fields.%s is missing", StatsField)
			}
			return nil
		},
		Value: func(sum []float64) (float64, bool) {
			total := make(chrf.Stats, width)
			for k, x := range sum {
				total[k] = int(x)
			}
			return m.FScore(total) / 100, true
		},
	})
}
