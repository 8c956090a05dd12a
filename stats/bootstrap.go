package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ErrTooFew reports input too small for the statistic asked for.
var ErrTooFew = errors.New("stats: too few observations")

// newRand returns the deterministic generator every seeded procedure uses.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, pcgStream))
}

// pcgStream is the second PCG seed word of single-stream procedures.
const pcgStream = 0x9e3779b97f4a7c15

// PercentileBootstrap resamples indices 0..n-1 with replacement `resamples` times (seeded, math/rand/v2 PCG), computes stat on each resample and returns the (1-level)/2 and (1+level)/2 type-7 quantiles.
//
// The idx slice passed to stat is reused between calls; stat must not keep it.
// Resamples on which stat returns NaN are dropped; if all are NaN the result is an error.
func PercentileBootstrap(n, resamples int, seed uint64, level float64, stat func(idx []int) float64) (lo, hi float64, err error) {
	if n < 1 {
		return math.NaN(), math.NaN(), fmt.Errorf("%w: bootstrap needs n >= 1, got %d", ErrTooFew, n)
	}
	if resamples < 1 {
		return math.NaN(), math.NaN(), fmt.Errorf("stats: bootstrap needs resamples >= 1, got %d", resamples)
	}
	if !(level > 0 && level < 1) {
		return math.NaN(), math.NaN(), fmt.Errorf("stats: confidence level must be in (0, 1), got %v", level)
	}
	r := newRand(seed)
	idx := make([]int, n)
	vals := make([]float64, 0, resamples)
	for range resamples {
		for i := range idx {
			idx[i] = r.IntN(n)
		}
		if v := stat(idx); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return math.NaN(), math.NaN(), errors.New("stats: bootstrap statistic was NaN on every resample")
	}
	slices.Sort(vals)
	return Quantile(vals, (1-level)/2), Quantile(vals, (1+level)/2), nil
}

// MeanCI is PercentileBootstrap of the mean of x.
func MeanCI(x []float64, resamples int, seed uint64, level float64) (lo, hi float64, err error) {
	if len(x) == 0 {
		return math.NaN(), math.NaN(), fmt.Errorf("%w: mean of an empty sample", ErrTooFew)
	}
	return PercentileBootstrap(len(x), resamples, seed, level, func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += x[i]
		}
		return s / float64(len(idx))
	})
}
