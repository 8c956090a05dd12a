package stats

import (
	"fmt"
	"math"
)

// PermutationP is a two-sided Monte-Carlo permutation test. stat receives a
// permutation of 0..n-1 to apply to one of the samples; its value at the
// identity is the observed statistic. Each of the `resamples` rounds shuffles
// the permutation (seeded, math/rand/v2 PCG) and counts a round whose |stat|
// reaches |observed|. The p-value is (count+1)/(resamples+1), which is never
// zero and is exact in the Monte-Carlo sense (Phipson & Smyth 2010).
//
// |stat| is compared with a relative tolerance of 100 machine epsilons, as
// scipy.stats.permutation_test does, so that permutations giving the same
// statistic up to rounding count as reaching it.
func PermutationP(n, resamples int, seed uint64, stat func(perm []int) float64) (observed, p float64, err error) {
	if n < 2 {
		return math.NaN(), math.NaN(), fmt.Errorf("%w: permutation test needs n >= 2, got %d", ErrTooFew, n)
	}
	if resamples < 1 {
		return math.NaN(), math.NaN(), fmt.Errorf("stats: permutation test needs resamples >= 1, got %d", resamples)
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	observed = stat(perm)
	if math.IsNaN(observed) {
		return math.NaN(), math.NaN(), fmt.Errorf("stats: observed statistic is NaN")
	}
	threshold := math.Abs(observed) * (1 - 100*epsilon)
	r := newRand(seed)
	count := 0
	for range resamples {
		r.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if math.Abs(stat(perm)) >= threshold {
			count++
		}
	}
	return observed, float64(count+1) / float64(resamples+1), nil
}

const epsilon = 0x1p-52

// SpearmanPermutation returns Spearman's ρ of x and y and its two-sided
// Monte-Carlo permutation p-value: y's ranks are shuffled against x's.
// It needs the same input as Spearman.
func SpearmanPermutation(x, y []float64, resamples int, seed uint64) (rho, p float64, err error) {
	if err := checkPaired(x, y, 3); err != nil {
		return math.NaN(), math.NaN(), err
	}
	// With ranks centred once, ρ of a permutation is Σ rx·ry[perm] / sqrt(Sxx·Syy).
	rx, ry := Rank(x), Rank(y)
	center(rx)
	center(ry)
	var sxx, syy float64
	for i := range rx {
		sxx += rx[i] * rx[i]
		syy += ry[i] * ry[i]
	}
	norm := math.Sqrt(sxx) * math.Sqrt(syy)
	return PermutationP(len(x), resamples, seed, func(perm []int) float64 {
		s := 0.0
		for i, j := range perm {
			s += rx[i] * ry[j]
		}
		return max(-1, min(1, s/norm))
	})
}

func center(x []float64) {
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for i := range x {
		x[i] -= m
	}
}
