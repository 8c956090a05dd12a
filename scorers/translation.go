package scorers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/stats"
)

// TranslationDelta is how far a translated score moves from the original
// (spec §0, principle 3): the same items scored in their original language
// and in translation, paired by row id.
type TranslationDelta struct {
	Axis       string     `json:"axis"`
	Original   string     `json:"original"`
	Translated string     `json:"translated"`
	Pairs      int        `json:"pairs"`
	ScoreOrig  float64    `json:"score_original"`
	ScoreTrans float64    `json:"score_translated"`
	Delta      float64    `json:"delta"` // translated − original
	CI95       [2]float64 `json:"delta_ci95"`
	Resamples  int        `json:"resamples"`
	Unpaired   int        `json:"unpaired"`
}

// DeltaOf pairs the scores of item "<orig>/<row>" with "<trans>/<row>" and
// returns the mean difference with a paired percentile-bootstrap CI.
// scores maps item id to score.
func DeltaOf(scores map[string]float64, axis, orig, trans string, resamples int, seed uint64) (TranslationDelta, error) {
	byRow := map[string]map[string]float64{orig: {}, trans: {}}
	for id, score := range scores {
		ds, row, ok := strings.Cut(id, "/")
		if m, want := byRow[ds]; ok && want {
			m[row] = score
		}
	}
	d := TranslationDelta{Axis: axis, Original: orig, Translated: trans, Resamples: resamples}
	var rows []string
	for row := range byRow[orig] {
		if _, ok := byRow[trans][row]; ok {
			rows = append(rows, row)
		} else {
			d.Unpaired++
		}
	}
	d.Unpaired += len(byRow[trans]) - len(rows)
	if len(rows) < 2 {
		return d, fmt.Errorf("only %d items of %s and %s share a row id", len(rows), orig, trans)
	}
	slices.Sort(rows)
	a, b := make([]float64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		a[i], b[i] = byRow[trans][r], byRow[orig][r]
		d.ScoreTrans += a[i]
		d.ScoreOrig += b[i]
	}
	d.ScoreTrans /= float64(len(rows))
	d.ScoreOrig /= float64(len(rows))
	d.Pairs = len(rows)
	diff, lo, hi, err := stats.PairedBootstrap(a, b, resamples, seed, 0.95)
	if err != nil {
		return d, err
	}
	d.Delta, d.CI95 = diff, [2]float64{lo, hi}
	return d, nil
}
