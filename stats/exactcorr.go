package stats

import (
	"fmt"
	"math"
)

// ExactLimit is the largest number of pairs whose rank-correlation p-values
// SpearmanExact and KendallExactTies compute over all n! pairings (9! is
// 362,880). Beyond it they refuse; the asymptotic and Monte-Carlo p-values
// serve larger n.
const ExactLimit = 9

// SpearmanExact returns Spearman's ρ of x and y (average ranks for ties)
// with its exact permutation p-value: the share of all n! pairings of y
// with x whose ρ is at least as extreme as the observed one. It is what
// scipy.stats.permutation_test computes for spearmanr's statistic with
// permutation_type='pairings' and every pairing enumerated (no +1: nothing
// is sampled), two-sided as twice the smaller one-sided p, capped at 1.
// Ties are handled as they fall: the null distribution is that of the tied
// ranks themselves.
func SpearmanExact(x, y []float64, alt Alternative) (rho, p float64, err error) {
	if err := checkExact(x, y); err != nil {
		return math.NaN(), math.NaN(), err
	}
	rho = pearson(Rank(x), Rank(y))
	// ρ is an increasing function of Σ rx·ry over pairings (the means and
	// norms do not depend on the pairing), and doubled average ranks are
	// integers, so the comparison is exact.
	rx, ry := doubledRanks(x), doubledRanks(y)
	p = exactPairingP(len(x), alt, func(perm []int) int64 {
		var s int64
		for i, j := range perm {
			s += rx[i] * ry[j]
		}
		return s
	})
	return rho, p, nil
}

// KendallExactTies returns Kendall's τ-b of x and y with its exact
// permutation p-value over all n! pairings, as SpearmanExact does for ρ.
// Without ties it equals scipy's kendalltau(method='exact'); with ties it
// is the permutation_test reading of τ-b, which scipy's exact method
// refuses.
func KendallExactTies(x, y []float64, alt Alternative) (tau, p float64, err error) {
	if err := checkExact(x, y); err != nil {
		return math.NaN(), math.NaN(), err
	}
	tau, _, err = KendallTau(x, y, alt, KendallAsymptotic)
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	// τ-b's denominator does not depend on the pairing: its numerator,
	// concordant minus discordant pairs, orders the pairings.
	n := len(x)
	sx := make([]int64, n*n)
	for i := range n {
		for j := range n {
			sx[i*n+j] = sign(x[i] - x[j])
		}
	}
	p = exactPairingP(n, alt, func(perm []int) int64 {
		var s int64
		for i := range n {
			for j := i + 1; j < n; j++ {
				s += sx[i*n+j] * sign(y[perm[i]]-y[perm[j]])
			}
		}
		return s
	})
	return tau, p, nil
}

func checkExact(x, y []float64) error {
	if err := checkPaired(x, y, 3); err != nil {
		return err
	}
	if len(x) > ExactLimit {
		return fmt.Errorf("stats: exact permutation p-value over %d! pairings: at most %d pairs", len(x), ExactLimit)
	}
	return nil
}

func sign(v float64) int64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// doubledRanks is 2·Rank(v): average ranks are whole or half, so these
// are integers.
func doubledRanks(v []float64) []int64 {
	r := Rank(v)
	d := make([]int64, len(r))
	for i, x := range r {
		d[i] = int64(math.Round(2 * x))
	}
	return d
}

// exactPairingP enumerates every permutation of 0..n-1 (Heap's algorithm),
// the identity first, and returns the p-value of the identity's statistic
// against all of them: P(S ≤ s), P(S ≥ s), or for two-sided
// min(1, 2·min of the two), scipy.stats.permutation_test's definitions.
func exactPairingP(n int, alt Alternative, stat func(perm []int) int64) float64 {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	observed := stat(perm)
	var less, greater, total int64
	count := func() {
		s := stat(perm)
		if s <= observed {
			less++
		}
		if s >= observed {
			greater++
		}
		total++
	}
	count()
	c := make([]int, n)
	for i := 1; i < n; {
		if c[i] < i {
			if i%2 == 0 {
				perm[0], perm[i] = perm[i], perm[0]
			} else {
				perm[c[i]], perm[i] = perm[i], perm[c[i]]
			}
			count()
			c[i]++
			i = 1
		} else {
			c[i] = 0
			i++
		}
	}
	pl, pg := float64(less)/float64(total), float64(greater)/float64(total)
	switch alt {
	case Less:
		return pl
	case Greater:
		return pg
	}
	return min(1, 2*min(pl, pg))
}
