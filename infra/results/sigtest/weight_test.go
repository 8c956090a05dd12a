package sigtest

import (
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
)

// TestWeightZeroIsOutsideSigtestMS: a run's axis of weight 0 is outside its
// MS (spec §2), so sigtest's MS is ms_public, not a mean that weighs it 1;
// JSONL input, which carries no weights, weighs every axis 1.
func TestWeightZeroIsOutsideSigtestMS(t *testing.T) {
	input := func(knowledge, nlu float64, weights map[string]float64, msAxes []string) Input {
		in := Input{records: map[string]map[string]scorers.ItemScore{}, stat: map[string]scorers.Statistic{}, weights: weights, msAxes: msAxes}
		for axis, v := range map[string]float64{"knowledge": knowledge, "nlu": nlu} {
			in.records[axis] = map[string]scorers.ItemScore{"a": {ItemID: "a", Score: v}, "b": {ItemID: "b", Score: v}}
			in.stat[axis] = meanItemScore
		}
		return in
	}
	w := map[string]float64{"knowledge": 0, "nlu": 1}
	axes := []string{"knowledge", "nlu"} // as a run written before weight 0 left ms_axes
	rep, err := Compare(input(0.28, 0.42, w, axes), input(0.1, 0.2, w, axes), nil, 100, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if rep.MS.A != 0.42 || rep.MS.B != 0.2 || rep.MS.N != 2 || !strings.Contains(strings.Join(rep.Notes, "\n"), "knowledge (weight 0)") {
		t.Errorf("MS A %v B %v n %d, notes %v; want nlu alone: 0.42, 0.2, n 2", rep.MS.A, rep.MS.B, rep.MS.N, rep.Notes)
	}
	if len(rep.Axes) != 2 {
		t.Errorf("axes %v, want knowledge compared on its own too", rep.Axes)
	}
	rep, err = Compare(input(0.2, 0.4, nil, nil), input(0.2, 0.4, nil, nil), nil, 100, 1, 0.95)
	if err != nil || rep.MS.A < 0.3-1e-15 || rep.MS.A > 0.3+1e-15 {
		t.Errorf("JSONL MS %v (err %v), want 0.3", rep.MS.A, err)
	}
}
