package audit

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchRows is 15,000 rows with 5 measurements and a 57-value source tag
// (the MMLU shape): sources differ in yes-rate, two measurements carry
// the label weakly.
func benchRows() ([]Row, []string) {
	r := rand.New(rand.NewPCG(15000, 57))
	rates := make([]float64, 57)
	for k := range rates {
		rates[k] = 0.1 + 0.3*r.Float64()
	}
	rows := make([]Row, 15000)
	for i := range rows {
		k := r.IntN(57)
		y := r.Float64() < rates[k]
		m := make([]float64, 5)
		for j := range m {
			m[j] = r.NormFloat64()
		}
		if y {
			m[0] += 0.3
			m[1] += 0.2
		}
		m[2] = float64(int(20 + 10*m[2])) // integer-valued, like token counts
		rows[i] = Row{y, fmt.Sprint("subject", k), m}
	}
	return rows, []string{"m1", "m2", "m3", "m4", "m5"}
}

// Target: ≤ 10 s on 2 cores for the headline view (100 trees per fold).
func BenchmarkOutOfFoldForest15000(b *testing.B) {
	rows, names := benchRows()
	d, err := validate(rows, names)
	if err != nil {
		b.Fatal(err)
	}
	o := withDefaults(DefaultOptions())
	o.Detector = DetectorRF
	folds, err := StratifiedFolds(d.y, 5, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := d.outOfFold(folds, true, o); err != nil {
			b.Fatal(err)
		}
	}
}

// Target: ≤ 2 s for 1,000 shuffles. The half-and-half rating reads the
// source, so each shuffle also recomputes the headline.
func BenchmarkShuffles15000(b *testing.B) {
	rows, names := benchRows()
	d, err := validate(rows, names)
	if err != nil {
		b.Fatal(err)
	}
	for _, det := range []string{DetectorMeanHalf, DetectorFixed} {
		b.Run(det, func(b *testing.B) {
			o := withDefaults(DefaultOptions())
			o.Detector = det
			rep := &Report{Headline: 0.6, L: 0.9}
			for range b.N {
				if s := d.shuffle(rep, o, nil); s.N != 1000 {
					b.Fatal(s.N)
				}
			}
		})
	}
}

// A whole default audit (mean-half, 2,000 bootstrap resamples, 1,000
// shuffles, the fingerprint forest) on the same rows.
func BenchmarkRunMeanHalf15000(b *testing.B) {
	rows, names := benchRows()
	for range b.N {
		if _, err := Run(rows, names, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
}

// Target: 2,000 bootstrap resamples of the headline's interval on 15,000
// rows well under a second (a resample is one pass over the rows in rating
// order).
func BenchmarkBootstrap15000(b *testing.B) {
	rows, names := benchRows()
	d, err := validate(rows, names)
	if err != nil {
		b.Fatal(err)
	}
	ratings := d.meanHalf(d.src, d.pos, d.neg)
	for range b.N {
		bootstrapCI(d.y, ratings, 2000, 1, 2)
	}
}

// One worker, so time is CPU time: the pinned inputs' intervals (10,000
// rows and 2,000 resamples is the pipeline benchmark's pool).
func BenchmarkBootstrapPinned(b *testing.B) {
	for _, c := range pinCases()[:3] {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				bootstrapCI(c.y, c.rating, 2000, c.seed, 1)
			}
		})
	}
}
