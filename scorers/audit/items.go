package audit

import (
	"fmt"
	"slices"

	"github.com/glossobench/glossobench/scorers"
)

// RatingMeasurement is the measurement name RowsFromItemScores uses.
const RatingMeasurement = "rating"

// RowsFromItemScores turns an axis's per-item scores into audit rows: the
// scorer's rating is the one measurement, the item's label (correctness or
// gold label) the label, and its Source tag (dataset, topic, judge,
// register) the source. Items with an empty source are refused, since a
// row with no tag cannot be pooled by it.
func RowsFromItemScores(items []scorers.ItemScore) ([]Row, error) {
	rows := make([]Row, len(items))
	for i, it := range items {
		if it.Source == "" {
			return nil, fmt.Errorf("audit: item %q has no source tag", it.ItemID)
		}
		rows[i] = Row{Label: it.Label, Source: it.Source, Measurements: []float64{it.Rating}}
	}
	return rows, nil
}

// AuditItems is the EvalRun stage for one axis: it audits the items pooled
// by their Source tag with the axis rating as the measurement. An axis with
// one source returns a Report whose Verdict is "not pooled".
func AuditItems(items []scorers.ItemScore, opt Options) (Report, error) {
	rows, err := RowsFromItemScores(items)
	if err != nil {
		return Report{}, err
	}
	return Run(rows, []string{RatingMeasurement}, opt)
}

// Pooled reports whether items come from more than one source.
func Pooled(items []scorers.ItemScore) bool {
	var seen []string
	for _, it := range items {
		if !slices.Contains(seen, it.Source) {
			seen = append(seen, it.Source)
			if len(seen) > 1 {
				return true
			}
		}
	}
	return false
}
