package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// PairedBootstrap returns the mean of a[i]-b[i] and a percentile bootstrap
// interval for it, resampling pairs (a[i], b[i]) together.
func PairedBootstrap(a, b []float64, resamples int, seed uint64, level float64) (diff, lo, hi float64, err error) {
	d, err := differences(a, b)
	if err != nil {
		return math.NaN(), math.NaN(), math.NaN(), err
	}
	lo, hi, err = MeanCI(d, resamples, seed, level)
	return mean(d), lo, hi, err
}

// PairedPermutation returns the mean of a[i]-b[i] and the two-sided
// Monte-Carlo p-value of the paired permutation (sign-flip) test: under the
// null hypothesis a[i] and b[i] are exchangeable, so each difference keeps or
// flips its sign at random. p = (count+1)/(resamples+1).
func PairedPermutation(a, b []float64, resamples int, seed uint64) (diff, p float64, err error) {
	d, err := differences(a, b)
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	if resamples < 1 {
		return math.NaN(), math.NaN(), fmt.Errorf("stats: permutation test needs resamples >= 1, got %d", resamples)
	}
	diff = mean(d)
	threshold := math.Abs(diff) * (1 - 100*epsilon)
	g := rand.NewPCG(seed, pcgStream)
	count := 0
	for range resamples {
		if math.Abs(signFlipMean(d, g)) >= threshold {
			count++
		}
	}
	return diff, float64(count+1) / float64(resamples+1), nil
}

// signFlipMean is the mean of d with each sign flipped by one random bit.
// Four accumulators keep the floating-point adds from waiting on each other.
func signFlipMean(d []float64, g *rand.PCG) float64 {
	var s0, s1, s2, s3 float64
	flip := func(v float64, bit uint64) float64 {
		return math.Float64frombits(math.Float64bits(v) ^ bit<<63)
	}
	i := 0
	for ; i+64 <= len(d); i += 64 {
		signs := g.Uint64()
		for j := i; j < i+64; j += 4 {
			s0 += flip(d[j], signs&1)
			s1 += flip(d[j+1], signs>>1&1)
			s2 += flip(d[j+2], signs>>2&1)
			s3 += flip(d[j+3], signs>>3&1)
			signs >>= 4
		}
	}
	if i < len(d) {
		signs := g.Uint64()
		for ; i < len(d); i++ {
			s0 += flip(d[i], signs&1)
			signs >>= 1
		}
	}
	return (s0 + s1 + s2 + s3) / float64(len(d))
}

func differences(a, b []float64) ([]float64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("stats: paired samples differ in length: %d and %d", len(a), len(b))
	}
	if len(a) == 0 {
		return nil, fmt.Errorf("%w: no pairs", ErrTooFew)
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
		if math.IsNaN(d[i]) || math.IsInf(d[i], 0) {
			return nil, fmt.Errorf("stats: pair %d (%v, %v) has no finite difference", i, a[i], b[i])
		}
	}
	return d, nil
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// PairedAxis holds two systems' per-item scores on one axis, A[i] and B[i]
// being the same item. Weight is the axis's weight in the mean score (MS);
// weight 0 leaves it out of MS (InMS).
type PairedAxis struct {
	Name   string
	Weight float64
	A, B   []float64
}

// Difference is a paired comparison of two systems on one axis or on MS.
type Difference struct {
	Name  string  `json:"name"`
	N     int     `json:"n"`     // shared items (for MS: summed over axes)
	A     float64 `json:"a"`     // mean score of system A
	B     float64 `json:"b"`     // mean score of system B
	Delta float64 `json:"delta"` // A - B
	Lo    float64 `json:"ci_lo"` // percentile bootstrap interval of Delta
	Hi    float64 `json:"ci_hi"`
	P     float64 `json:"p"` // two-sided paired permutation p-value
}

// CompareAxes compares two systems per axis and on MS, the weighted mean of
// the axis means: the intervals are MSBootstrap of the per-item differences
// and the p-values MSPermutation of them, both with `resamples` rounds.
func CompareAxes(axes []PairedAxis, resamples int, seed uint64, level float64) (perAxis []Difference, ms Difference, err error) {
	samples := make([]AxisSample, len(axes))
	for k, ax := range axes {
		d, err := differences(ax.A, ax.B)
		if err != nil {
			return nil, ms, fmt.Errorf("axis %s: %w", ax.Name, err)
		}
		samples[k] = AxisSample{Name: ax.Name, Weight: ax.Weight, Values: d}
	}
	ci, msCI, err := MSBootstrap(samples, resamples, seed, level)
	if err != nil {
		return nil, ms, err
	}
	p, msP, err := MSPermutation(samples, resamples, seed)
	if err != nil {
		return nil, ms, err
	}
	perAxis = make([]Difference, len(axes))
	var totalW float64
	ms = Difference{Name: "MS", Lo: msCI.Lo, Hi: msCI.Hi, P: msP}
	for k, ax := range axes {
		w := ax.Weight
		a, b, d := mean(ax.A), mean(ax.B), mean(samples[k].Values)
		perAxis[k] = Difference{Name: ax.Name, N: len(ax.A), A: a, B: b, Delta: d, Lo: ci[k].Lo, Hi: ci[k].Hi, P: p[k]}
		if InMS(w) {
			ms.N += len(ax.A)
		}
		ms.A += w * a
		ms.B += w * b
		ms.Delta += w * d
		totalW += w
	}
	ms.A /= totalW
	ms.B /= totalW
	ms.Delta /= totalW
	return perAxis, ms, nil
}
