package stats

import (
	"cmp"
	"slices"
)

// Rank returns the 1-based ranks of x, giving tied values the average of the
// ranks they span (scipy.stats.rankdata's "average" method).
func Rank(x []float64) []float64 {
	n := len(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	r := make([]float64, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && x[order[j]] == x[order[i]] {
			j++
		}
		// Positions i..j-1 (0-based) hold ranks i+1..j; their mean is (i+1+j)/2.
		avg := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			r[order[k]] = avg
		}
		i = j
	}
	return r
}
