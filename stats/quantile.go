package stats

import "math"

// Quantile returns the q-quantile of sorted data with linear interpolation (Hyndman–Fan type 7, numpy's default).
// It returns NaN for empty data or q outside [0, 1].
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 || math.IsNaN(q) || q < 0 || q > 1 {
		return math.NaN()
	}
	if n == 1 {
		return sorted[0]
	}
	h := float64(n-1) * q
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}
