package stats

// The mean score (MS) of a run, defined once: Aggregate publishes it and
// rescore re-derives it through these two functions.

// WeightedMean is Σ w·v / Σ w, summed in order; nil when Σ w is 0.
func WeightedMean(v, w []float64) *float64 {
	var num, den float64
	for i := range v {
		num += v[i] * w[i]
		den += w[i]
	}
	if den == 0 {
		return nil
	}
	x := num / den
	return &x
}

// WeightedMeanCI is the 95% interval of WeightedMean(v, w) of spec §3: a
// seeded percentile bootstrap over the axes, resampled with replacement,
// each keeping its weight. It needs two axes or more (nil otherwise).
func WeightedMeanCI(v, w []float64, resamples int, seed uint64) *[2]float64 {
	if len(v) < 2 {
		return nil
	}
	lo, hi, err := PercentileBootstrap(len(v), resamples, seed, 0.95, func(idx []int) float64 {
		var num, den float64
		for _, i := range idx {
			num += w[i] * v[i]
			den += w[i]
		}
		if den == 0 {
			return 0
		}
		return num / den
	})
	if err != nil {
		return nil
	}
	return &[2]float64{lo, hi}
}
