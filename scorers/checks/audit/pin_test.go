package audit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pinCase is a fixed input of bootstrapCI: rows drawn from a seeded
// generator, their ratings rounded to grid steps (0: no ties) or taking
// only a few values, as MCQ confidences of an instant backend do.
type pinCase struct {
	name      string
	y         []bool
	rating    []float64
	resamples int
	seed      uint64
}

func pinCases() []pinCase {
	gen := func(name string, n int, yesRate, grid float64, levels int, resamples int, seed uint64) pinCase {
		r := rand.New(rand.NewPCG(uint64(n), seed))
		c := pinCase{name: name, y: make([]bool, n), rating: make([]float64, n), resamples: resamples, seed: seed}
		for i := range n {
			c.y[i] = r.Float64() < yesRate
			v := r.NormFloat64()
			if c.y[i] {
				v += 0.4
			}
			switch {
			case levels > 0:
				v = float64(r.IntN(levels)) / float64(levels)
			case grid > 0:
				v = math.Round(v*grid) / grid
			}
			c.rating[i] = v
		}
		return c
	}
	return []pinCase{
		gen("distinct", 10000, 0.3, 0, 0, 2000, 1234),
		gen("grid", 9999, 0.45, 8, 0, 500, 7),
		gen("two levels", 10001, 0.25, 0, 2, 500, 1234),
		gen("small", 7, 0.5, 0, 0, 300, 3),
		gen("rare yes", 2003, 0.02, 0, 0, 800, 11),
	}
}

// The interval bootstrapCI gives on fixed inputs, as computed by the
// code of main d963d15 (a resample a Poisson pass and its corrections):
// a faster resample must draw the very same counts from the same streams.
var pinned = []struct {
	name   string
	lo, hi float64
}{
	{"distinct", 0.6044201328175876, 0.628471465638897},
	{"grid", 0.600958735723371, 0.6238043456378795},
	{"two levels", 0.4877325602264358, 0.5098950805711686},
	{"small", 0, 0.6666666666666666},
	{"rare yes", 0.5358486017357763, 0.6914245821279331},
}

func TestBootstrapCIPinned(t *testing.T) {
	cases := pinCases()
	if len(cases) != len(pinned) {
		t.Fatalf("%d cases, %d pinned", len(cases), len(pinned))
	}
	for i, c := range cases {
		for _, workers := range []int{1, 2} {
			got := bootstrapCI(c.y, c.rating, c.resamples, c.seed, workers)
			if p := pinned[i]; got != [2]float64{p.lo, p.hi} {
				t.Errorf("%s, %d workers: interval %v, pinned [%v %v]", c.name, workers, got, p.lo, p.hi)
			}
		}
	}
}

// refMultinomialCounts is multinomialCounts as main d963d15 wrote it, one
// Poisson draw per call: a resample's counts and what it leaves of the
// random stream must stay these.
func refMultinomialCounts(r *rand.Rand, cnt []int32, yes []uint8, at [2][]int32) {
	var total, most [2]int32
	var bits uint64
	left := 0
	for p := range cnt {
		if left == 0 {
			bits, left = r.Uint64(), 5
		}
		u := bits & (1<<12 - 1)
		bits >>= 12
		left--
		c := int32(poissonTop[u])
		if c == poissonSplit {
			c = poissonInvert(u<<52 | r.Uint64()>>12)
		}
		cnt[p] = c
		total[yes[p]] += c
		most[yes[p]] = max(most[yes[p]], c)
	}
	for class, at := range at {
		want := int32(len(at))
		for total[class] > want {
			p := at[r.IntN(len(at))]
			if r.Int32N(most[class]) < cnt[p] {
				cnt[p]--
				total[class]--
			}
		}
		for total[class] < want {
			cnt[at[r.IntN(len(at))]]++
			total[class]++
		}
	}
}

// multinomialCounts draws the counts refMultinomialCounts draws and leaves
// the stream where it does, for sizes around the five draws a random
// number serves, classes of one row or none, and many streams.
func TestMultinomialCountsAsReference(t *testing.T) {
	for _, n := range []int{1, 2, 4, 5, 6, 9, 10, 11, 64, 1001, 10000} {
		for _, yesRate := range []float64{0, 0.01, 0.3, 1} {
			g := rand.New(rand.NewPCG(uint64(n), math.Float64bits(yesRate)))
			yes := make([]uint8, n)
			var at [2][]int32
			for p := range yes {
				if g.Float64() < yesRate {
					yes[p] = 1
				}
				at[yes[p]] = append(at[yes[p]], int32(p))
			}
			got, want := make([]int32, n), make([]int32, n)
			for s := range uint64(50) {
				r1 := rand.NewPCG(s, 0xb0075742+uint64(n))
				r2 := rand.New(rand.NewPCG(s, 0xb0075742+uint64(n)))
				multinomialCounts(r1, got, yes, at)
				refMultinomialCounts(r2, want, yes, at)
				if !slices.Equal(got, want) {
					t.Fatalf("n %d, yes-rate %v, stream %d: counts %v, reference %v", n, yesRate, s, got, want)
				}
				if a, b := r1.Uint64(), r2.Uint64(); a != b {
					t.Fatalf("n %d, yes-rate %v, stream %d: the stream is left at %#x, the reference's at %#x", n, yesRate, s, a, b)
				}
			}
		}
	}
}
