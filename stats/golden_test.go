package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// refValues holds reference values computed by testdata/stats/make_golden.py
// with numpy, scipy and scikit-learn.
type refValues struct {
	Correlations []struct {
		Name               string
		X, Y               []float64
		Spearman           float64
		SpearmanP          float64 `json:"spearman_p"`
		SpearmanPLess      float64 `json:"spearman_p_less"`
		SpearmanPGreater   float64 `json:"spearman_p_greater"`
		Kendall            float64
		KendallP           float64  `json:"kendall_p"`
		KendallPLess       float64  `json:"kendall_p_less"`
		KendallPGreater    float64  `json:"kendall_p_greater"`
		KendallPAsymptotic *float64 `json:"kendall_p_asymptotic"`
		KendallPExact      *float64 `json:"kendall_p_exact"`
	}
	SpearmanPermutation []struct {
		X, Y   []float64
		Rho    float64
		PExact float64 `json:"p_exact"`
	} `json:"spearman_permutation"`
	PairedPermutation []struct {
		A, B   []float64
		Diff   float64
		PExact float64 `json:"p_exact"`
	} `json:"paired_permutation"`
	Quantiles []struct {
		Sorted, Q, Want []float64
	}
	Kappa []struct {
		A, B                    []int
		None, Linear, Quadratic float64
	}
	Ratings struct {
		Matches []struct {
			A, B  string
			Score float64
		}
		BradleyTerry map[string]float64 `json:"bradley_terry"`
		EloInOrder   map[string]float64 `json:"elo_in_order"`
	}
}

func loadRefValues(t *testing.T) refValues {
	t.Helper()
	b, err := os.ReadFile("../testdata/stats/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g refValues
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("golden.json: %v", err)
	}
	return g
}

func relClose(got, want, rtol float64) bool {
	return math.Abs(got-want) <= rtol*math.Abs(want)+1e-300
}

func TestGoldenCorrelations(t *testing.T) {
	g := loadRefValues(t)
	if len(g.Correlations) < 10 {
		t.Fatalf("only %d refValues correlation cases", len(g.Correlations))
	}
	published := false
	for _, c := range g.Correlations {
		if c.Name == "scipy_normal_draws_7546" {
			// scipy's own expected values for these draws (test_stats.py).
			published = true
			rho, p, _ := Spearman(c.X, c.Y)
			approxEqual(t, "test_normal_draws rho", rho, 0.28659685838743354)
			approxEqual(t, "test_normal_draws p", p, 6.579862219051161e-11)
			tau, p, _ := Kendall(c.X, c.Y)
			approxEqual(t, "test_kendalltau large tau", tau, 0.19291382765531062)
			approxEqual(t, "test_kendalltau large p", p, 1.1337095377742629e-10)
		}
		check := func(what string, got, want float64) {
			t.Helper()
			if !relClose(got, want, 1e-9) {
				t.Errorf("%s: %s = %.17g, scipy %.17g", c.Name, what, got, want)
			}
		}
		rho, p, err := Spearman(c.X, c.Y)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		check("spearman", rho, c.Spearman)
		check("spearman p", p, c.SpearmanP)
		_, p, _ = SpearmanAlt(c.X, c.Y, Less)
		check("spearman p less", p, c.SpearmanPLess)
		_, p, _ = SpearmanAlt(c.X, c.Y, Greater)
		check("spearman p greater", p, c.SpearmanPGreater)

		tau, p, err := Kendall(c.X, c.Y)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		check("kendall", tau, c.Kendall)
		check("kendall p", p, c.KendallP)
		_, p, _ = KendallTau(c.X, c.Y, Less, KendallAuto)
		check("kendall p less", p, c.KendallPLess)
		_, p, _ = KendallTau(c.X, c.Y, Greater, KendallAuto)
		check("kendall p greater", p, c.KendallPGreater)
		if c.KendallPExact != nil {
			_, p, _ = KendallTau(c.X, c.Y, TwoSided, KendallExact)
			check("kendall p exact", p, *c.KendallPExact)
			_, p, _ = KendallTau(c.X, c.Y, TwoSided, KendallAsymptotic)
			check("kendall p asymptotic", p, *c.KendallPAsymptotic)
		}
	}
	if !published {
		t.Error("golden.json lacks scipy's normal-draws case")
	}
}

// TestGoldenPermutation checks the Monte-Carlo p-values against the exact
// permutation p-values (all orderings or sign patterns enumerated): with
// 20,000 rounds the standard error is at most 0.0036.
func TestGoldenPermutation(t *testing.T) {
	g := loadRefValues(t)
	for i, c := range g.SpearmanPermutation {
		rho, p, err := SpearmanPermutation(c.X, c.Y, 20000, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(rho, c.Rho, 1e-12) || math.Abs(p-c.PExact) > 0.015 {
			t.Errorf("case %d: (rho, p) = (%v, %v), exact (%v, %v)", i, rho, p, c.Rho, c.PExact)
		}
	}
	for i, c := range g.PairedPermutation {
		d, p, err := PairedPermutation(c.A, c.B, 20000, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if !relClose(d, c.Diff, 1e-12) || math.Abs(p-c.PExact) > 0.015 {
			t.Errorf("paired case %d: (diff, p) = (%v, %v), exact (%v, %v)", i, d, p, c.Diff, c.PExact)
		}
		// MSPermutation on one axis is the same test.
		ps, msP, _ := MSPermutation([]AxisSample{{Name: "x", Weight: 1, Values: diffOf(c.A, c.B)}}, 20000, uint64(i))
		if math.Abs(ps[0]-c.PExact) > 0.015 || ps[0] != msP {
			t.Errorf("paired case %d: MSPermutation p = %v (MS %v), exact %v", i, ps[0], msP, c.PExact)
		}
	}
}

func diffOf(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

func TestGoldenQuantiles(t *testing.T) {
	g := loadRefValues(t)
	for _, c := range g.Quantiles {
		for i, q := range c.Q {
			if got := Quantile(c.Sorted, q); !relClose(got, c.Want[i], 1e-12) {
				t.Errorf("n=%d q=%v: Quantile = %v, numpy %v", len(c.Sorted), q, got, c.Want[i])
			}
		}
	}
}

func TestGoldenKappa(t *testing.T) {
	g := loadRefValues(t)
	for i, c := range g.Kappa {
		for _, w := range []struct {
			w    KappaWeights
			want float64
		}{{Unweighted, c.None}, {Linear, c.Linear}, {Quadratic, c.Quadratic}} {
			k, err := CohenKappa(c.A, c.B, nil, w.w)
			if err != nil || !relClose(k, w.want, 1e-12) {
				t.Errorf("case %d weights %d: kappa = %v (%v), sklearn %v", i, w.w, k, err, w.want)
			}
		}
	}
}

func goldenMatches(g refValues) []Match {
	var ms []Match
	for _, m := range g.Ratings.Matches {
		ms = append(ms, Match{A: m.A, B: m.B, Score: m.Score})
	}
	return ms
}

func TestGoldenRatings(t *testing.T) {
	g := loadRefValues(t)
	ms := goldenMatches(g)
	bt, err := BradleyTerry(ms, BTOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range g.Ratings.BradleyTerry {
		if math.Abs(bt[p]-want) > 1e-3 {
			t.Errorf("Bradley–Terry %s = %v, scipy BFGS MLE %v", p, bt[p], want)
		}
	}
	elo, err := Elo(ms, EloOptions{KeepOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range g.Ratings.EloInOrder {
		if !relClose(elo[p], want, 1e-12) {
			t.Errorf("Elo %s = %v, reference %v", p, elo[p], want)
		}
	}
}
