package audit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/glossobench/glossobench/stats"
)

// The counts of one resample are the row-by-row stratified draw's: every
// class's counts sum to its size, and the count vectors of a class of 3
// rows come up as often as the multinomial says (3!/(c₁!c₂!c₃!)/27), by a
// chi-square test on 90,000 resamples. A correction that removed units
// from uniform positions, not from uniform units, fails it.
func TestMultinomialCountsAreTheRowDraw(t *testing.T) {
	yes := []uint8{0, 1, 1, 0, 0, 1, 0}
	var at [2][]int32
	for p, v := range yes {
		at[v] = append(at[v], int32(p))
	}
	r := rand.NewPCG(3, 4)
	cnt := make([]int32, len(yes))
	seen := map[[3]int32]int{}
	const draws = 90000
	for range draws {
		multinomialCounts(r, cnt, yes, at)
		var sum [2]int32
		for p, c := range cnt {
			if c < 0 {
				t.Fatalf("negative count %v", cnt)
			}
			sum[yes[p]] += c
		}
		if sum[0] != 4 || sum[1] != 3 {
			t.Fatalf("counts %v sum to %v, want 4 no and 3 yes", cnt, sum)
		}
		seen[[3]int32{cnt[1], cnt[2], cnt[5]}]++
	}
	fact := []float64{1, 1, 2, 6}
	var chi2 float64
	cells := 0
	for a := int32(0); a <= 3; a++ {
		for b := int32(0); a+b <= 3; b++ {
			c := 3 - a - b
			want := draws * fact[3] / (fact[a] * fact[b] * fact[c]) / 27
			d := float64(seen[[3]int32{a, b, c}]) - want
			chi2 += d * d / want
			cells++
		}
	}
	// 9 degrees of freedom: P(χ² > 33.7) = 1e-4.
	if cells != 10 || chi2 > 33.7 {
		t.Errorf("yes count vectors: χ² = %.1f over %d cells, want ≤ 33.7 (seen %v)", chi2, cells, seen)
	}
}

// A resample's AUC read from its counts is the weighted ROC AUC with the
// counts as row weights (stats.WeightedROCAUC, which equals sklearn's),
// with and without tied ratings.
func TestResampleAUCIsWeightedAUC(t *testing.T) {
	src := rand.NewPCG(5, 6)
	r := rand.New(src)
	for _, grid := range []float64{0, 4} {
		n := 300
		y := make([]bool, n)
		rating := make([]float64, n)
		for i := range y {
			y[i] = r.Float64() < 0.3
			rating[i] = r.NormFloat64()
			if y[i] {
				rating[i] += 0.7
			}
			if grid > 0 {
				rating[i] = math.Round(rating[i]*grid) / grid
			}
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmpFloat(rating[a], rating[b]) })
		yes, last := make([]uint8, n), make([]uint8, n)
		ties := false
		var at [2][]int32
		var nPos int
		for p, i := range order {
			if y[i] {
				yes[p] = 1
				nPos++
			}
			at[yes[p]] = append(at[yes[p]], int32(p))
			if p+1 == n || rating[order[p+1]] != rating[i] {
				last[p] = 1
			} else {
				ties = true
			}
		}
		if ties != (grid > 0) {
			t.Fatalf("grid %v: ties %v", grid, ties)
		}
		cnt := make([]int32, n)
		w := make([]float64, n)
		for range 20 {
			multinomialCounts(src, cnt, yes, at)
			for p, i := range order {
				w[i] = float64(cnt[p])
			}
			want, err := stats.WeightedROCAUC(y, rating, w)
			if err != nil {
				t.Fatal(err)
			}
			got := float64(weightedMannWhitney(cnt, yes, last, ties)) / (2 * float64(nPos) * float64(n-nPos))
			if math.Abs(got-want) > 1e-12 {
				t.Fatalf("grid %v: resample AUC %v, weighted ROC AUC %v", grid, got, want)
			}
		}
	}
}

// The interval is the stratified row-draw bootstrap's: on 400 rows its
// ends agree with a row-by-row draw (index per drawn row, AUC of the drawn
// rows) within the Monte-Carlo error of 4,000 resamples each, and it is
// the same on 1 and 3 workers.
func TestBootstrapCIIsTheRowDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 400
	y := make([]bool, n)
	rating := make([]float64, n)
	var pos, neg []int
	for i := range y {
		y[i] = r.Float64() < 0.4
		rating[i] = math.Round(r.NormFloat64()*10) / 10
		if y[i] {
			rating[i] += 0.5
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	const resamples = 4000
	got := bootstrapCI(y, rating, resamples, 1, 3)
	if one := bootstrapCI(y, rating, resamples, 1, 1); one != got {
		t.Fatalf("1 worker %v, 3 workers %v", one, got)
	}
	vals := make([]float64, resamples)
	by, br := make([]bool, n), make([]float64, n)
	for b := range vals {
		for j := range n {
			var i int
			if j < len(pos) {
				i = pos[r.IntN(len(pos))]
			} else {
				i = neg[r.IntN(len(neg))]
			}
			by[j], br[j] = y[i], rating[i]
		}
		vals[b], _ = stats.ROCAUC(by, br)
	}
	slices.Sort(vals)
	want := [2]float64{stats.Quantile(vals, 0.025), stats.Quantile(vals, 0.975)}
	// The AUC's bootstrap sd here is about 0.024; an end's Monte-Carlo sd
	// at 4,000 resamples is about 0.002 for each method.
	for k := range got {
		if math.Abs(got[k]-want[k]) > 0.01 {
			t.Errorf("interval %v, row-by-row draw %v", got, want)
		}
	}
	t.Logf("interval %.4f–%.4f, row-by-row draw %.4f–%.4f", got[0], got[1], want[0], want[1])
}

// The 12-bit table gives every 64-bit uniform the draw that full inversion
// gives it, and the draws follow Poisson(1) (χ² over 0–6+ on 600,000).
func TestPoissonDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 200000 {
		u := r.Uint64()
		if k := poissonTop[u>>52]; k != poissonSplit && int32(k) != poissonInvert(u) {
			t.Fatalf("u %#x: table %d, inversion %d", u, k, poissonInvert(u))
		}
	}
	split := 0
	for _, k := range poissonTop {
		if k == poissonSplit {
			split++
		}
	}
	if split == 0 || split > 20 {
		t.Errorf("%d straddling cells of 4,096", split)
	}
	// The largest draw, the set of counts poissonFill returns in 32 bits.
	if most := poissonInvert(math.MaxUint64); most >= 32 {
		t.Errorf("largest draw %d, want under 32", most)
	}
	const draws = 600000
	cnt := make([]int32, draws)
	poissonFill(rand.NewPCG(9, 10), cnt, make([]uint8, draws))
	seen := make([]float64, 7)
	for _, c := range cnt {
		seen[min(c, 6)]++
	}
	var chi2, cum float64
	for k := range seen {
		pk := math.Exp(-1) / float64([]int{1, 1, 2, 6, 24, 120, 720}[k])
		if k == 6 {
			pk = 1 - cum
		}
		cum += pk
		d := seen[k] - draws*pk
		chi2 += d * d / (draws * pk)
	}
	// 6 degrees of freedom: P(χ² > 27.9) = 1e-4.
	if chi2 > 27.9 {
		t.Errorf("Poisson(1) draws %v: χ² = %.1f", seen, chi2)
	}
}

// The tag shuffle is a uniform permutation: all 24 orders of 4 tags come
// up alike (χ² on 48,000 shuffles), and nothing is lost or repeated.
func TestShuffleIsUniform(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	seen := map[[4]int32]float64{}
	const draws = 48000
	tags := make([]int32, 4)
	for range draws {
		copy(tags, []int32{0, 1, 2, 3})
		shuffle(r, tags)
		seen[[4]int32(tags)]++
	}
	var chi2 float64
	for _, c := range seen {
		chi2 += (c - draws/24) * (c - draws/24) / (draws / 24)
	}
	// 23 degrees of freedom: P(χ² > 55) = 1e-4.
	if len(seen) != 24 || chi2 > 55 {
		t.Errorf("%d orders seen, χ² = %.1f", len(seen), chi2)
	}
}
