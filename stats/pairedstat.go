package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PairedTerms holds two systems' records on one axis as per-item term
// vectors, A[i] and B[i] being the same item, and the statistic of a set of
// records as a function of their summed terms (an axis headline: a mean, a
// share, corpus chrF++). Weight is the axis's weight in the mean score (MS);
// weight 0 leaves it out of MS (InMS).
type PairedTerms struct {
	Name   string
	Weight float64
	A, B   [][]float64
	Value  func(sum []float64) (float64, bool)
}

// CompareStatistics compares two systems per axis and on MS, the weighted
// mean of the axis statistics, on shared items. Per axis, A and B are the
// statistic of each system's records, so a system compared with itself
// reproduces its published headlines. The interval is a paired percentile
// bootstrap (items resampled within each axis, both systems' records
// together; MS from the same resamples) and p a paired permutation test:
// each item's two records swap systems at random (p = (count+1)/(rounds+1),
// |Δ| reached within 100 machine epsilons). A resample on which a statistic
// is undefined is left out of that axis's interval.
func CompareStatistics(axes []PairedTerms, resamples int, seed uint64, level float64) (perAxis []Difference, ms Difference, err error) {
	if len(axes) == 0 {
		return nil, ms, fmt.Errorf("%w: no axes", ErrTooFew)
	}
	if resamples < 1 {
		return nil, ms, fmt.Errorf("stats: needs resamples >= 1, got %d", resamples)
	}
	if !(level > 0 && level < 1) {
		return nil, ms, fmt.Errorf("stats: confidence level must be in (0, 1), got %v", level)
	}
	K := len(axes)
	perAxis = make([]Difference, K)
	w := make([]float64, K)
	var totalW float64
	ms = Difference{Name: "MS"}
	for k, ax := range axes {
		if len(ax.A) == 0 || len(ax.A) != len(ax.B) {
			return nil, ms, fmt.Errorf("axis %s: %w: %d and %d records", ax.Name, ErrTooFew, len(ax.A), len(ax.B))
		}
		if ax.Weight < 0 || math.IsNaN(ax.Weight) || math.IsInf(ax.Weight, 0) {
			return nil, ms, fmt.Errorf("axis %s: invalid weight %v", ax.Name, ax.Weight)
		}
		w[k] = ax.Weight
		a, oka := ax.Value(sumRows(ax.A, nil, nil, nil))
		b, okb := ax.Value(sumRows(ax.B, nil, nil, nil))
		if !oka || !okb {
			return nil, ms, fmt.Errorf("axis %s: the statistic is undefined on the shared items", ax.Name)
		}
		perAxis[k] = Difference{Name: ax.Name, N: len(ax.A), A: a, B: b, Delta: a - b}
		if InMS(w[k]) {
			ms.N += len(ax.A)
		}
		ms.A += w[k] * a
		ms.B += w[k] * b
		totalW += w[k]
	}
	if err := anyWeighted(w); err != nil {
		return nil, ms, err
	}
	ms.A /= totalW
	ms.B /= totalW
	ms.Delta = ms.A - ms.B

	// Bootstrap: resample r draws from its own PCG stream (seed, r).
	boot := make([][]float64, K)
	var bootMS []float64
	for r := range resamples {
		g := rand.New(rand.NewPCG(seed, uint64(r)))
		var num float64
		whole := true
		for k, ax := range axes {
			idx := make([]int, len(ax.A))
			for i := range idx {
				idx[i] = g.IntN(len(idx))
			}
			d, ok := deltaOf(ax, idx, nil)
			if !ok {
				whole = whole && !InMS(w[k])
				continue
			}
			boot[k] = append(boot[k], d)
			num += w[k] * d
		}
		if whole {
			bootMS = append(bootMS, num/totalW)
		}
	}
	lo, hi := (1-level)/2, (1+level)/2
	for k := range axes {
		if len(boot[k]) == 0 {
			return nil, ms, fmt.Errorf("axis %s: the statistic is undefined on every resample", axes[k].Name)
		}
		slices.Sort(boot[k])
		perAxis[k].Lo, perAxis[k].Hi = Quantile(boot[k], lo), Quantile(boot[k], hi)
	}
	if len(bootMS) == 0 {
		return nil, ms, fmt.Errorf("stats: MS is undefined on every resample")
	}
	slices.Sort(bootMS)
	ms.Lo, ms.Hi = Quantile(bootMS, lo), Quantile(bootMS, hi)

	// Permutation: each item's two records swap systems with probability 1/2.
	count := make([]int, K)
	countMS := 0
	g := newRand(seed)
	for range resamples {
		var num float64
		for k, ax := range axes {
			swap := make([]bool, len(ax.A))
			for i := range swap {
				swap[i] = g.Uint64()&1 == 1
			}
			d, _ := deltaOf(ax, nil, swap)
			if reaches(d, perAxis[k].Delta) {
				count[k]++
			}
			num += w[k] * d
		}
		if reaches(num/totalW, ms.Delta) {
			countMS++
		}
	}
	for k := range axes {
		perAxis[k].P = float64(count[k]+1) / float64(resamples+1)
	}
	ms.P = float64(countMS+1) / float64(resamples+1)
	return perAxis, ms, nil
}

// reaches reports whether a permuted |Δ| reaches the observed one.
func reaches(d, observed float64) bool {
	return math.Abs(d) >= math.Abs(observed)*(1-100*epsilon)
}

// deltaOf is the statistic of A's records minus B's, over the items idx
// (nil: every item once), with the records of items where swap is true
// exchanged between the systems.
func deltaOf(ax PairedTerms, idx []int, swap []bool) (float64, bool) {
	a, oka := ax.Value(sumRows(ax.A, ax.B, idx, swap))
	b, okb := ax.Value(sumRows(ax.B, ax.A, idx, swap))
	return a - b, oka && okb
}

// sumRows sums the term rows of mine over idx (nil: every row once), taking
// other's row instead where swap is true.
func sumRows(mine, other [][]float64, idx []int, swap []bool) []float64 {
	sum := make([]float64, len(mine[0]))
	add := func(i int) {
		row := mine[i]
		if swap != nil && swap[i] {
			row = other[i]
		}
		for k, x := range row {
			sum[k] += x
		}
	}
	if idx == nil {
		for i := range mine {
			add(i)
		}
		return sum
	}
	for _, i := range idx {
		add(i)
	}
	return sum
}
