package stats

import (
	"errors"
	"math"
	"testing"
)

// approxEqual mirrors numpy's assert_approx_equal: equal to 7 significant digits.
func approxEqual(t *testing.T, name string, got, want float64) {
	t.Helper()
	if want == 0 {
		if math.Abs(got) > 1e-7 {
			t.Errorf("%s = %.17g, want 0", name, got)
		}
		return
	}
	if math.Abs(got-want) > 1e-7*math.Abs(want) {
		t.Errorf("%s = %.17g, want %.17g", name, got, want)
	}
}

func floats(v ...float64) []float64 { return v }

func TestRankAverage(t *testing.T) {
	// scipy.stats.rankdata([0, 2, 3, 2]) and rankdata([1, 1, 1]) (docstring examples).
	got := Rank(floats(0, 2, 3, 2))
	want := floats(1, 2.5, 4, 2.5)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Rank = %v, want %v", got, want)
		}
	}
	got = Rank(floats(4, 2, 7, 2, 2))
	want = floats(4, 2, 5, 2, 2)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Rank = %v, want %v", got, want)
		}
	}
}

// Vectors from scipy/stats/tests/test_stats.py (scipy 1.10).
var (
	sX      = floats(1, 2, 3, 4, 5, 6, 7, 8, 9)
	sBIG    = floats(99999991, 99999992, 99999993, 99999994, 99999995, 99999996, 99999997, 99999998, 99999999)
	sLITTLE = floats(0.99999991, 0.99999992, 0.99999993, 0.99999994, 0.99999995, 0.99999996, 0.99999997, 0.99999998, 0.99999999)
	sHUGE   = floats(1e+12, 2e+12, 3e+12, 4e+12, 5e+12, 6e+12, 7e+12, 8e+12, 9e+12)
	sTINY   = floats(1e-12, 2e-12, 3e-12, 4e-12, 5e-12, 6e-12, 7e-12, 8e-12, 9e-12)
	sROUND  = floats(0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5)
)

// TestCorrSpearmanr ports TestCorrSpearmanr.test_sXX ... test_sROUNDROUND.
func TestCorrSpearmanr(t *testing.T) {
	vars := map[string][]float64{"X": sX, "BIG": sBIG, "LITTLE": sLITTLE, "HUGE": sHUGE, "TINY": sTINY, "ROUND": sROUND}
	for an, a := range vars {
		for bn, b := range vars {
			r, _, err := Spearman(a, b)
			if err != nil {
				t.Fatal(err)
			}
			approxEqual(t, "spearman("+an+","+bn+")", r, 1)
		}
	}
}

// TestSpearmanr3cols ports TestCorrSpearmanr.test_3cols (column pairs).
func TestSpearmanr3cols(t *testing.T) {
	x1 := floats(0, 1, 2, 3, 4, 5)
	x2 := floats(0, -1, -2, -3, -4, -5)
	x3 := floats(0, 1, 2, 3, 5, 4)
	check := func(name string, a, b []float64, wantR, wantP float64) {
		r, p, err := Spearman(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r-wantR) > 1e-7*math.Abs(wantR) || math.Abs(p-wantP) > 1e-7*math.Abs(wantP)+1e-300 {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", name, r, p, wantR, wantP)
		}
	}
	check("x1,x2", x1, x2, -1, 0)
	check("x1,x3", x1, x3, 0.94285714, 0.00480466472)
	check("x2,x3", x2, x3, -0.94285714, 0.00480466472)
}

// TestSpearmanrVsR ports TestCorrSpearmanr2.test_spearmanr_vs_r and test_alternative.
func TestSpearmanrVsR(t *testing.T) {
	x1 := floats(1, 2, 3, 4, 5)
	x2 := floats(5, 6, 7, 8, 7)
	r, p, err := Spearman(x1, x2)
	if err != nil {
		t.Fatal(err)
	}
	approxEqual(t, "rho", r, 0.82078268166812329)
	approxEqual(t, "p", p, 0.088587005313543798)
	_, p, _ = SpearmanAlt(x1, x2, Less)
	approxEqual(t, "p(less)", p, 1-0.088587005313543798/2)
	_, p, _ = SpearmanAlt(x1, x2, Greater)
	approxEqual(t, "p(greater)", p, 0.088587005313543798/2)
}

// TestSpearmanrTies ports test_corr_1, test_tie1 and test_tie2.
func TestSpearmanrTies(t *testing.T) {
	r, _, err := Spearman(floats(1, 1, 2), floats(1, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	approxEqual(t, "test_corr_1", r, 1)

	// test_tie1: spearmanr equals pearsonr on the average ranks.
	r, p, _ := Spearman(floats(1, 2, 3, 4), floats(1, 2, 2, 3))
	pr := pearson(floats(1, 2, 3, 4), floats(1, 2.5, 2.5, 4))
	approxEqual(t, "test_tie1 rho", r, pr)
	// pearsonr's p-value for n=4 from the exact beta distribution equals the t-test one.
	approxEqual(t, "test_tie1 p", p, spearmanP(pr, 4, TwoSided))

	// test_tie2 (without the NaN): values from scipy 1.10.
	r, p, _ = Spearman(floats(1, 2, 2.5, 2), floats(1, 3, 2.5, 4))
	approxEqual(t, "test_tie2 rho", r, 0.31622776601683794)
	approxEqual(t, "test_tie2 p", p, 0.6837722339831621)
}

// TestSpearmanrDegenerate ports test_tie0, test_gh_11111, test_empty_arrays
// and test_unequal_lengths: scipy returns NaN (or raises); we return NaN and an error.
func TestSpearmanrDegenerate(t *testing.T) {
	cases := []struct {
		name string
		x, y []float64
		want error
	}{
		{"constant both", floats(2, 2, 2), floats(2, 2, 2), ErrConstant},
		{"constant y", floats(2, 0, 2), floats(2, 2, 2), ErrConstant},
		{"constant x", floats(2, 2, 2), floats(2, 0, 2), ErrConstant},
		{"gh_11111", floats(1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
			floats(0, 0.009783728115345005, 0, 0, 0.0019759230121848587, 0.0007535430349118562, 0.0002661781514710257, 0, 0, 0.0007835762419683435), ErrConstant},
		{"empty", nil, nil, ErrTooFew},
		{"two pairs", floats(1, 2), floats(2, 1), ErrTooFew},
		{"unequal", floats(1, 2, 3), floats(1, 2), nil},
		{"nan", floats(1, math.NaN(), 3), floats(1, 2, 3), nil},
	}
	for _, c := range cases {
		for _, f := range []func(x, y []float64) (float64, float64, error){Spearman, Kendall} {
			r, p, err := f(c.x, c.y)
			if err == nil || !math.IsNaN(r) || !math.IsNaN(p) {
				t.Errorf("%s: got (%v, %v, %v), want NaN and an error", c.name, r, p, err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("%s: error %v, want %v", c.name, err, c.want)
			}
		}
	}
}

// TestKendalltau ports scipy's test_kendalltau (the τ-b parts).
func TestKendalltau(t *testing.T) {
	cases := []struct {
		x, y   []float64
		tau, p float64
	}{
		// without ties, con-dis equal zero (R, exact)
		{floats(5, 2, 1, 3, 6, 4, 7, 8), floats(5, 2, 6, 3, 1, 8, 7, 4), 0, 1},
		{floats(0, 5, 2, 1, 3, 6, 4, 7, 8), floats(5, 2, 0, 6, 3, 1, 8, 7, 4), 0, 1},
		// con-dis close to zero
		{floats(5, 2, 1, 3, 6, 4, 7), floats(5, 2, 6, 3, 1, 7, 4), -0.14285714286, 0.77261904762},
		{floats(2, 1, 3, 6, 4, 7, 8), floats(2, 6, 3, 1, 8, 7, 4), 0.047619047619, 1.0},
		// simple case and swaps
		{floats(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), floats(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), 1, 5.511463844797e-07},
		{floats(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), floats(0, 2, 1, 3, 4, 5, 6, 7, 8, 9), 0.9555555555555556, 5.511463844797e-06},
		{floats(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), floats(0, 2, 1, 3, 4, 6, 5, 7, 8, 9), 0.9111111111111111, 2.976190476190e-05},
		{floats(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), floats(9, 8, 7, 6, 5, 4, 3, 2, 1, 0), -1, 5.511463844797e-07},
		{floats(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), floats(9, 7, 8, 6, 5, 4, 3, 2, 1, 0), -0.9555555555555556, 5.511463844797e-06},
		{floats(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), floats(9, 7, 8, 6, 5, 3, 4, 2, 1, 0), -0.9111111111111111, 2.976190476190e-05},
		// tau-b with some ties (R, exact=FALSE)
		{floats(12, 2, 1, 12, 2), floats(1, 4, 7, 1, 0), -0.47140452079103173, 0.28274545993277478},
	}
	for i, c := range cases {
		tau, p, err := Kendall(c.x, c.y)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		approxEqual(t, "tau", tau, c.tau)
		approxEqual(t, "p", p, c.p)
	}
	// Kendall (1970): a case where tau-b and tau-c differ.
	tau, _, _ := Kendall(floats(1, 2, 2, 4, 4, 6, 6, 8, 9, 9), floats(1, 2, 4, 4, 4, 4, 8, 8, 8, 10))
	approxEqual(t, "tau-b Kendall 1970", tau, 0.85895569)
	tau, _, _ = Kendall(floats(1, 1, 2), floats(1, 1, 2))
	approxEqual(t, "tau-b [1,1,2]", tau, 1)
	// Ties and method=exact is an error.
	if _, _, err := KendallTau(floats(1, 2, 2, 4), floats(1, 2, 3, 4), TwoSided, KendallExact); err == nil {
		t.Error("exact p with ties: want error")
	}
	// nan_policy=omit case: arange(9) against itself, exact and asymptotic.
	x := floats(0, 1, 2, 3, 4, 5, 6, 7, 8)
	_, p, _ := Kendall(x, x)
	if math.Abs(p-5.5114638e-6) > 1e-6*5.5114638e-6 {
		t.Errorf("exact p = %v, want 5.5114638e-6", p)
	}
	_, p, _ = KendallTau(x, x, TwoSided, KendallAsymptotic)
	if math.Abs(p-0.00017455009626808976) > 1e-6*0.00017455009626808976 {
		t.Errorf("asymptotic p = %v, want 0.00017455009626808976", p)
	}
}

// TestKendalltauLarge ports the 2,000-point regression for gh-6061 (finite p)
// and checks the Fenwick discordant count against the O(n²) definition.
func TestKendalltauLarge(t *testing.T) {
	n := 1996
	x := make([]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = float64(i)
		y[i] = float64((i + 1000) % 2000)
	}
	_, p, err := Kendall(x, y)
	if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
		t.Errorf("gh-6061: p = %v, err %v", p, err)
	}
	r := newRand(3)
	for trial := range 50 {
		m := 3 + r.IntN(40)
		a := make([]float64, m)
		b := make([]float64, m)
		for i := range a {
			a[i] = float64(r.IntN(6))
			b[i] = float64(r.IntN(6))
		}
		tau, _, err := Kendall(a, b)
		if err != nil {
			continue
		}
		if want := naiveTauB(a, b); math.Abs(tau-want) > 1e-12 {
			t.Errorf("trial %d: tau-b = %v, naive %v", trial, tau, want)
		}
	}
}

func naiveTauB(x, y []float64) float64 {
	var con, dis, tx, ty float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx*dy > 0:
				con++
			default:
				dis++
			}
		}
	}
	return (con - dis) / math.Sqrt((con+dis+tx)*(con+dis+ty))
}

// TestKendallTauAlternativeExact ports TestKendallTauAlternative's R cases.
func TestKendallTauAlternativeExact(t *testing.T) {
	alts := []Alternative{Less, TwoSided, Greater}
	cases := []struct {
		name string
		x, y []float64
		tau  float64
		p    [3]float64
	}{
		{"c0", floats(1, 2, 3), floats(1, 2, 3), 1, [3]float64{1, 0.3333333333333, 0.1666666666667}},
		{"c1", floats(1, 2, 3, 4), floats(1, 2, 4, 3), 0.6666666666666667, [3]float64{0.9583333333333, 0.3333333333333, 0.1666666666667}},
		{"no_correlation", floats(1, 2, 3, 4, 5), floats(1, 5, 4, 2, 3), 0, [3]float64{0.5916666666667, 1, 0.5916666666667}},
		{"no_correlationb", floats(1, 2, 3, 4, 5, 6, 7, 8), floats(8, 6, 1, 3, 2, 5, 4, 7), 0, [3]float64{0.5475694444444, 1, 0.5475694444444}},
		{"lt_171", floats(44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1), floats(2.6, 3.1, 2.5, 5.0, 3.6, 4.0, 5.2, 2.8, 3.8),
			0.4444444444444445, [3]float64{0.9624118165785, 0.1194389329806, 0.0597194664903}},
	}
	for _, c := range cases {
		for rev := range 2 {
			y := c.y
			wantTau := c.tau
			if rev == 1 {
				y = make([]float64, len(c.y))
				for i, v := range c.y {
					y[i] = -v
				}
				wantTau = -wantTau
			}
			for i, alt := range alts {
				wantP := c.p[i]
				if rev == 1 {
					wantP = c.p[2-i]
				}
				tau, p, err := KendallTau(c.x, y, alt, KendallExact)
				if err != nil {
					t.Fatal(err)
				}
				// assert_allclose default rtol 1e-7
				if math.Abs(tau-wantTau) > 1e-7*math.Abs(wantTau)+1e-15 || math.Abs(p-wantP) > 1e-7*wantP {
					t.Errorf("%s rev=%d %v: got (%v, %v), want (%v, %v)", c.name, rev, alt, tau, p, wantTau, wantP)
				}
			}
		}
	}
	// test_against_R_n2 through the exact distribution directly (n=2 is below our minimum n).
	for i, want := range []float64{1, 1, 0.5} {
		if p, _ := KendallExactP(2, 1, alts[i]); p != want {
			t.Errorf("n=2 %v: p = %v, want %v", alts[i], p, want)
		}
	}
}

// TestKendalltauAlternativeAsymptotic ports test_kendalltau_alternative_asymptotic.
func TestKendalltauAlternativeAsymptotic(t *testing.T) {
	x1 := floats(1, 2, 3, 4, 5)
	x2 := floats(5, 6, 7, 8, 7)
	for range 2 {
		tau, p2, _ := Kendall(x1, x2)
		_, pl, _ := KendallTau(x1, x2, Less, KendallAuto)
		_, pg, _ := KendallTau(x1, x2, Greater, KendallAuto)
		small, large := pg, pl
		if tau < 0 {
			small, large = pl, pg
		}
		approxEqual(t, "small one-sided p", small, p2/2)
		approxEqual(t, "large one-sided p", large, 1-p2/2)
		for i, j := 0, len(x2)-1; i < j; i, j = i+1, j-1 {
			x2[i], x2[j] = x2[j], x2[i]
		}
	}
}

// FuzzRankCorrelations feeds arbitrary paired samples (bytes as small
// integers, so ties are common): no panic, τ-b equals the pairwise
// definition, and ρ and both p-values stay in range.
func FuzzRankCorrelations(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, []byte{6, 5, 4, 3, 2, 1})
	f.Add([]byte{1, 1, 2, 2, 3}, []byte{1, 2, 1, 2, 3})
	f.Add([]byte{0, 0, 0}, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		n := min(len(a), len(b), 200)
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range n {
			x[i] = float64(a[i] % 7)
			y[i] = float64(b[i] % 5)
		}
		rho, p, err := Spearman(x, y)
		if err != nil {
			if !math.IsNaN(rho) || !math.IsNaN(p) {
				t.Fatalf("error %v with finite results", err)
			}
			return
		}
		if rho < -1 || rho > 1 || !(p >= 0 && p <= 1) {
			t.Fatalf("rho %v p %v out of range", rho, p)
		}
		tau, p, err := Kendall(x, y)
		if err != nil {
			t.Fatalf("Kendall failed where Spearman did not: %v", err)
		}
		if want := naiveTauB(x, y); math.Abs(tau-want) > 1e-12 {
			t.Fatalf("tau-b %v, pairwise %v", tau, want)
		}
		if !(p >= 0 && p <= 1) {
			t.Fatalf("Kendall p %v", p)
		}
	})
}
