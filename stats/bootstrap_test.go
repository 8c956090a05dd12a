package stats

import (
	"math"
	"testing"
)

func TestQuantileType7(t *testing.T) {
	// numpy.quantile([1,2,3,4,10], q) with the default linear method.
	x := []float64{1, 2, 3, 4, 10}
	cases := []struct{ q, want float64 }{
		{0, 1}, {1, 10}, {0.5, 3}, {0.25, 2}, {0.9, 7.6}, {0.025, 1.1}, {0.975, 9.4},
	}
	for _, c := range cases {
		if got := Quantile(x, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", x, c.q, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile of empty data should be NaN")
	}
	if !math.IsNaN(Quantile(x, 1.5)) {
		t.Error("Quantile with q > 1 should be NaN")
	}
	if got := Quantile([]float64{7}, 0.3); got != 7 {
		t.Errorf("Quantile of one value = %v, want 7", got)
	}
}

func TestMeanCI(t *testing.T) {
	x := make([]float64, 200)
	for i := range x {
		x[i] = float64(i % 10)
	}
	lo, hi, err := MeanCI(x, 2000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !(lo < 4.5 && 4.5 < hi) || hi-lo > 1.5 || hi-lo < 0.3 {
		t.Errorf("MeanCI = [%v, %v], want an interval around 4.5 of plausible width", lo, hi)
	}
	lo2, hi2, _ := MeanCI(x, 2000, 1, 0.95)
	if lo != lo2 || hi != hi2 {
		t.Error("same seed gave a different interval")
	}
	lo3, hi3, _ := MeanCI(x, 2000, 2, 0.95)
	if lo == lo3 && hi == hi3 {
		t.Error("different seeds gave the identical interval")
	}
	if _, _, err := MeanCI(nil, 100, 1, 0.95); err == nil {
		t.Error("MeanCI of empty sample: want error")
	}
	if _, _, err := MeanCI(x, 100, 1, 1.5); err == nil {
		t.Error("MeanCI with level 1.5: want error")
	}
	if _, _, err := PercentileBootstrap(5, 10, 1, 0.9, func([]int) float64 { return math.NaN() }); err == nil {
		t.Error("all-NaN statistic: want error")
	}
}
