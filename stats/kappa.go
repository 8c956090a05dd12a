package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// KappaWeights selects the disagreement weights of Cohen's κ.
type KappaWeights int

const (
	Unweighted KappaWeights = iota // every disagreement weighs 1
	Linear                         // |i-j| between label positions
	Quadratic                      // (i-j)² between label positions
)

// CohenKappa returns Cohen's κ between two raters' labels a and b, as
// sklearn.metrics.cohen_kappa_score computes it. labels fixes the label set
// and its order (which matters for weighted κ); pairs with a label outside it
// are ignored. With labels nil, the set is every label seen, sorted.
//
// κ is undefined (0/0) when both raters use one and the same label
// throughout; that returns NaN and an error, as does empty or unequal input.
func CohenKappa[T cmp.Ordered](a, b []T, labels []T, weights KappaWeights) (float64, error) {
	if len(a) != len(b) {
		return math.NaN(), fmt.Errorf("stats: raters labelled different numbers of items: %d and %d", len(a), len(b))
	}
	if labels == nil {
		labels = append(slices.Clone(a), b...)
		slices.Sort(labels)
		labels = slices.Compact(labels)
	}
	index := make(map[T]int, len(labels))
	for i, l := range labels {
		if _, dup := index[l]; dup {
			return math.NaN(), fmt.Errorf("stats: label %v listed twice", l)
		}
		index[l] = i
	}
	k := len(labels)
	confusion := make([]float64, k*k)
	for i := range a {
		x, ok1 := index[a[i]]
		y, ok2 := index[b[i]]
		if ok1 && ok2 {
			confusion[x*k+y]++
		}
	}
	return KappaFromConfusion(confusion, k, weights)
}

// KappaFromConfusion is CohenKappa from the k×k confusion matrix of two
// raters (row-major: confusion[i*k+j] counts items rater a put in label i and
// rater b in label j), so agreement can be counted item by item and κ taken
// at the end without keeping the labels.
func KappaFromConfusion(confusion []float64, k int, weights KappaWeights) (float64, error) {
	if len(confusion) != k*k {
		return math.NaN(), fmt.Errorf("stats: a confusion matrix of %d labels needs %d cells, got %d", k, k*k, len(confusion))
	}
	var n float64
	for _, c := range confusion {
		n += c
	}
	if n == 0 {
		return math.NaN(), fmt.Errorf("%w: no item labelled by both raters within the label set", ErrTooFew)
	}
	rows := make([]float64, k) // rater a's label counts
	cols := make([]float64, k) // rater b's label counts
	for i := range k {
		for j := range k {
			rows[i] += confusion[i*k+j]
			cols[j] += confusion[i*k+j]
		}
	}
	var observed, expected float64
	for i := range k {
		for j := range k {
			var w float64
			switch weights {
			case Unweighted:
				if i != j {
					w = 1
				}
			case Linear:
				w = math.Abs(float64(i - j))
			case Quadratic:
				w = float64((i - j) * (i - j))
			default:
				return math.NaN(), fmt.Errorf("stats: unknown kappa weighting %d", weights)
			}
			observed += w * confusion[i*k+j]
			expected += w * rows[i] * cols[j] / n
		}
	}
	if expected == 0 {
		return math.NaN(), fmt.Errorf("%w: both raters gave every item the same single label; kappa is undefined", ErrConstant)
	}
	return 1 - observed/expected, nil
}
