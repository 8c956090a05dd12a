package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"
)

// ErrConstant reports a constant input, on which a correlation is undefined.
var ErrConstant = errors.New("stats: constant input, correlation undefined")

// Alternative is the alternative hypothesis of a test.
type Alternative int

const (
	TwoSided Alternative = iota
	Less                 // the statistic is less than under the null (negative association)
	Greater              // the statistic is greater than under the null (positive association)
)

func (a Alternative) String() string {
	switch a {
	case TwoSided:
		return "two-sided"
	case Less:
		return "less"
	case Greater:
		return "greater"
	}
	return fmt.Sprintf("Alternative(%d)", int(a))
}

// checkPaired validates two paired samples for a rank correlation.
func checkPaired(x, y []float64, min int) error {
	if len(x) != len(y) {
		return fmt.Errorf("stats: paired samples differ in length: %d and %d", len(x), len(y))
	}
	if len(x) < min {
		return fmt.Errorf("%w: need at least %d pairs, got %d", ErrTooFew, min, len(x))
	}
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) {
			return fmt.Errorf("stats: NaN at pair %d", i)
		}
	}
	if isConstant(x) {
		return fmt.Errorf("%w (first sample)", ErrConstant)
	}
	if isConstant(y) {
		return fmt.Errorf("%w (second sample)", ErrConstant)
	}
	return nil
}

func isConstant(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}

// Spearman returns Spearman's rank correlation ρ of x and y (average ranks for
// ties) and its two-sided p-value, as scipy.stats.spearmanr computes them.
// Fewer than three pairs, a constant sample or a NaN is an error; ρ and p are
// then NaN.
func Spearman(x, y []float64) (rho, p float64, err error) {
	return SpearmanAlt(x, y, TwoSided)
}

// SpearmanAlt is Spearman with the given alternative hypothesis. The p-value
// comes from the t distribution with n-2 degrees of freedom of
// t = ρ·sqrt((n-2)/((1+ρ)(1-ρ))), as in scipy.
func SpearmanAlt(x, y []float64, alt Alternative) (rho, p float64, err error) {
	if err := checkPaired(x, y, 3); err != nil {
		return math.NaN(), math.NaN(), err
	}
	rho = pearson(Rank(x), Rank(y))
	return rho, spearmanP(rho, len(x), alt), nil
}

// pearson is the Pearson correlation of x and y, clipped to [-1, 1].
func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	r := sxy / math.Sqrt(sxx) / math.Sqrt(syy)
	return max(-1, min(1, r))
}

// spearmanP is scipy's t-test p-value for a correlation r over n pairs.
func spearmanP(r float64, n int, alt Alternative) float64 {
	dof := float64(n - 2)
	t := math.Inf(1)
	if r < 1 && r > -1 {
		t = math.Abs(r) * math.Sqrt(max(0, dof/((r+1)*(1-r))))
	}
	// tail = P(T > |t|) = I_{dof/(dof+t²)}(dof/2, 1/2) / 2, computed directly
	// rather than as 1-CDF so that tiny p-values keep their precision.
	tail := 0.0
	if !math.IsInf(t, 1) {
		tail = 0.5 * mathext.RegIncBeta(dof/2, 0.5, dof/(dof+t*t))
	}
	if r == 0 {
		tail = 0.5
	}
	switch alt {
	case Greater:
		if r >= 0 {
			return tail
		}
		return 1 - tail
	case Less:
		if r <= 0 {
			return tail
		}
		return 1 - tail
	}
	return min(1, 2*tail)
}

// KendallMethod chooses how Kendall's τ p-value is computed.
type KendallMethod int

const (
	// KendallAuto is scipy's default: exact without ties when n <= 33 or the
	// statistic sits at the very edge of its range, else asymptotic.
	KendallAuto KendallMethod = iota
	KendallExact
	KendallAsymptotic
)

// Kendall returns Kendall's τ-b of x and y and its two-sided p-value, as
// scipy.stats.kendalltau computes them by default.
func Kendall(x, y []float64) (tau, p float64, err error) {
	return KendallTau(x, y, TwoSided, KendallAuto)
}

// KendallTau returns Kendall's τ-b (tie-corrected) of x and y with the
// p-value for the given alternative and method. The exact p-value (no ties
// only) is Kendall's permutation distribution; the asymptotic one is the
// normal approximation with the tie-corrected variance, as in scipy.
func KendallTau(x, y []float64, alt Alternative, method KendallMethod) (tau, p float64, err error) {
	if err := checkPaired(x, y, 3); err != nil {
		return math.NaN(), math.NaN(), err
	}
	n := len(x)
	// Dense ranks of y, then sort the pairs by (x, y) and densely rank x.
	yr := denseRanks(y)
	xr := denseRanks(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if xr[a] != xr[b] {
			return xr[a] - xr[b]
		}
		return yr[a] - yr[b]
	})
	xs := make([]int, n)
	ys := make([]int, n)
	for i, o := range order {
		xs[i], ys[i] = xr[o], yr[o]
	}
	dis := discordant(xs, ys)

	var ntie int64 // pairs tied in both x and y
	for i := 0; i < n; {
		j := i + 1
		for j < n && xs[j] == xs[i] && ys[j] == ys[i] {
			j++
		}
		c := int64(j - i)
		ntie += c * (c - 1) / 2
		i = j
	}
	xtie, x0, x1 := rankTies(xs)
	ytie, y0, y1 := rankTies(ys)
	tot := int64(n) * int64(n-1) / 2
	if xtie == tot || ytie == tot { // unreachable after checkPaired; kept for safety
		return math.NaN(), math.NaN(), ErrConstant
	}
	conMinusDis := tot - xtie - ytie + ntie - 2*dis
	tau = float64(conMinusDis) / math.Sqrt(float64(tot-xtie)) / math.Sqrt(float64(tot-ytie))
	tau = max(-1, min(1, tau))

	ties := xtie != 0 || ytie != 0
	if method == KendallExact && ties {
		return tau, math.NaN(), errors.New("stats: exact Kendall p-value needs data without ties")
	}
	if method == KendallAuto {
		method = KendallAsymptotic
		if !ties && (n <= 33 || min(dis, tot-dis) <= 1) {
			method = KendallExact
		}
	}
	if method == KendallExact {
		p, err = KendallExactP(n, tot-dis, alt)
		return tau, p, err
	}
	nf := float64(n)
	m := nf * (nf - 1)
	v := (m*(2*nf+5)-x1-y1)/18 + 2*float64(xtie)*float64(ytie)/m + x0*y0/(9*m*(nf-2))
	z := float64(conMinusDis) / math.Sqrt(v)
	return tau, normalP(z, alt), nil
}

// normalP is the p-value of a standard normal statistic z.
func normalP(z float64, alt Alternative) float64 {
	switch alt {
	case Less:
		return 0.5 * math.Erfc(-z/math.Sqrt2)
	case Greater:
		return 0.5 * math.Erfc(z/math.Sqrt2)
	}
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

// denseRanks maps values to 1, 2, ... in increasing order, equal values sharing a rank.
func denseRanks(v []float64) []int {
	u := slices.Clone(v)
	slices.Sort(u)
	u = slices.Compact(u)
	r := make([]int, len(v))
	for i, x := range v {
		k, _ := slices.BinarySearch(u, x)
		r[i] = k + 1
	}
	return r
}

// discordant counts pairs i<j with x[i]<x[j] and y[i]>y[j], where the pairs
// are sorted by x then y and both hold dense ranks from 1. It walks groups of
// equal x and asks a Fenwick tree how many earlier points (smaller x) have a
// larger y — scipy's _kendall_dis.
func discordant(x, y []int) int64 {
	sup := 1
	for _, v := range y {
		sup = max(sup, v+1)
	}
	tree := make([]int64, sup)
	var dis int64
	for i, k := 0, 0; i < len(x); {
		for k < len(x) && x[i] == x[k] {
			dis += int64(i)
			for idx := y[k]; idx != 0; idx &= idx - 1 {
				dis -= tree[idx]
			}
			k++
		}
		for ; i < k; i++ {
			for idx := y[i]; idx < sup; idx += idx & -idx {
				tree[idx]++
			}
		}
	}
	return dis
}

// rankTies returns, over groups of tied values of size t: Σ t(t-1)/2,
// Σ t(t-1)(t-2) and Σ t(t-1)(2t+5).
func rankTies(r []int) (pairs int64, s0, s1 float64) {
	cnt := map[int]int64{}
	for _, v := range r {
		cnt[v]++
	}
	for _, c := range cnt {
		if c > 1 {
			pairs += c * (c - 1) / 2
			f := float64(c)
			s0 += f * (f - 1) * (f - 2)
			s1 += f * (f - 1) * (2*f + 5)
		}
	}
	return pairs, s0, s1
}

// KendallExactP is the exact p-value of c concordant pairs among n untied
// observations under independence (Kendall 1970), as scipy computes it.
func KendallExactP(n int, c int64, alt Alternative) (float64, error) {
	tot := int64(n) * int64(n-1) / 2
	if n <= 0 {
		return math.NaN(), fmt.Errorf("stats: Kendall exact p-value needs n > 0, got %d", n)
	}
	inRightTail := c >= tot-c
	c = min(c, tot-c)
	if c < 0 {
		return math.NaN(), fmt.Errorf("stats: concordant count %d out of range for n=%d", c, n)
	}
	var prob, massAtC float64
	switch {
	case n == 1:
		prob, massAtC = 1, 1
	case n == 2:
		prob, massAtC = 1, 0.5
	case c == 0:
		if n < 171 {
			prob = 2 / Factorial(n)
		}
		massAtC = prob / 2
	case c == 1:
		if n < 172 {
			prob = 2 / Factorial(n-1)
		}
		massAtC = float64(n-1) / Factorial(n)
	case 4*c == int64(n)*int64(n-1) && alt == TwoSided:
		prob = 1
	default:
		// counts[k] = number of permutations of j items with k inversions,
		// built up one item at a time; for n >= 171 the counts are kept
		// divided by j! to stay finite.
		counts := make([]float64, c+1)
		counts[0], counts[1] = 1, 1
		scaled := n >= 171
		for j := 3; j <= n; j++ {
			sum := 0.0
			for k := range counts {
				sum += counts[k]
				counts[k] = sum
				if scaled {
					counts[k] /= float64(j)
				}
			}
			if int64(j) <= c {
				for k := int64(len(counts)) - 1; k >= int64(j); k-- {
					counts[k] -= counts[k-int64(j)]
				}
			}
		}
		total := 0.0
		for _, v := range counts {
			total += v
		}
		if scaled {
			prob = total
			massAtC = counts[c] / 2
		} else {
			prob = 2 * total / Factorial(n)
			massAtC = counts[c] / Factorial(n)
		}
	}
	if alt != TwoSided {
		if inRightTail == (alt == Greater) {
			prob /= 2
		} else {
			prob = 1 - prob/2 + massAtC
		}
	}
	return max(0, min(1, prob)), nil
}

// Factorial is n! as a float64 (exact up to 22!, then rounded).
func Factorial(n int) float64 {
	f := 1.0
	for i := 2; i <= n; i++ {
		f *= float64(i)
	}
	return f
}
