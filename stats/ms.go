package stats

import "slices"

// The mean score (MS) of a run, defined once: Aggregate publishes it and
// rescore re-derives it through these functions.
//
// One weight rule holds for every MS here and in the paired comparisons: an
// axis counts with its configured weight, and weight 0 puts it outside the
// MS (spec §2: weights are overridable per axis). A weight is never
// replaced by a default at this level.

// InMS reports whether an axis of weight w counts in the mean score.
func InMS(w float64) bool { return w > 0 }

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

// MSInterval is the 95% interval of WeightedMean(v, w) of spec §3: a seeded
// percentile bootstrap over the axes, resampled with replacement, each
// keeping its weight. A resample that draws no axis of positive weight has
// no mean and is drawn again. When one axis carries all the weight the MS
// is that axis's score, so its interval is that axis's own (own[i], the
// axis's per-item interval); nil when no axis has weight.
func MSInterval(v, w []float64, own []*[2]float64, resamples int, seed uint64) *[2]float64 {
	weighted := -1
	for i := range w {
		if InMS(w[i]) {
			if weighted != -1 {
				weighted = -2 // two or more
				break
			}
			weighted = i
		}
	}
	switch {
	case weighted == -1 || resamples < 1:
		return nil
	case weighted >= 0:
		return own[weighted]
	}
	// The draws are PercentileBootstrap's, so that runs without weight-0
	// axes keep the interval they always had.
	r := newRand(seed)
	n := len(v)
	vals := make([]float64, 0, resamples)
	for range resamples {
		var num, den float64
		for den == 0 {
			num, den = 0, 0
			for range n {
				i := r.IntN(n)
				num += w[i] * v[i]
				den += w[i]
			}
		}
		vals = append(vals, num/den)
	}
	slices.Sort(vals)
	const level = 0.95
	return &[2]float64{Quantile(vals, (1-level)/2), Quantile(vals, (1+level)/2)}
}
