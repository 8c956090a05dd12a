package stats

import (
	"errors"
	"fmt"
	"testing"
)

// TestMSIntervalZeroWeight: an axis of weight 0 is outside the mean score
// (spec §2), so it moves neither the mean nor its interval: with one other
// axis the MS is that axis's score and its interval that axis's own.
func TestMSIntervalZeroWeight(t *testing.T) {
	v, w := []float64{0.9, 0.42}, []float64{0, 1}
	own := []*[2]float64{{0.8, 1}, {0.3, 0.5}}
	if m := WeightedMean(v, w); m == nil || *m != 0.42 {
		t.Fatalf("mean %v, want 0.42", m)
	}
	if ci := MSInterval(v, w, own, 1000, 1234); ci == nil || *ci != [2]float64{0.3, 0.5} {
		t.Fatalf("interval %v, want nlu's own [0.3 0.5]", ci)
	}
	// Three axes, one of weight 0: a resample that draws only the weight-0
	// axis is drawn again, so the interval stays within the weighted scores.
	v, w = []float64{0.9, 0.42, 0.6}, []float64{0, 1, 1}
	ci := MSInterval(v, w, []*[2]float64{nil, nil, nil}, 2000, 7)
	if ci == nil || ci[0] < 0.42 || ci[1] > 0.6 {
		t.Fatalf("interval %v, want within [0.42, 0.6]", ci)
	}
	if ci := MSInterval(v, []float64{0, 0, 0}, []*[2]float64{nil, nil, nil}, 100, 1); ci != nil {
		t.Fatalf("no weighted axis gave interval %v", ci)
	}
}

// TestCompareZeroWeightIsOutsideMS: a paired comparison's MS leaves out a
// weight-0 axis instead of weighing it 1; no weighted axis is an error.
func TestCompareZeroWeightIsOutsideMS(t *testing.T) {
	mean := func(sum []float64) (float64, bool) { return sum[0] / sum[1], sum[1] > 0 }
	rows := func(v ...float64) [][]float64 {
		var r [][]float64
		for _, x := range v {
			r = append(r, []float64{x, 1})
		}
		return r
	}
	axes := []PairedTerms{
		{Name: "knowledge", Weight: 0, A: rows(1, 1), B: rows(0, 0), Value: mean},
		{Name: "nlu", Weight: 1, A: rows(0.5, 0.3), B: rows(0.2, 0.2), Value: mean},
	}
	_, ms, err := CompareStatistics(axes, 200, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%.4f %.4f", ms.A, ms.B) != "0.4000 0.2000" {
		t.Fatalf("MS A %v B %v, want nlu's 0.4 and 0.2", ms.A, ms.B)
	}
	axes[1].Weight = 0
	if _, _, err := CompareStatistics(axes, 200, 1, 0.95); !errors.Is(err, ErrTooFew) {
		t.Fatalf("no weighted axis: err %v", err)
	}
	samples := []AxisSample{{Name: "knowledge", Weight: 0, Values: []float64{1, 1}}, {Name: "nlu", Weight: 1, Values: []float64{0.3, 0.1}}}
	_, msCI, err := MSBootstrap(samples, 200, 1, 0.95)
	if err != nil || msCI.Hi > 0.3 {
		t.Fatalf("MS interval %v (err %v), want within nlu's values", msCI, err)
	}
}
