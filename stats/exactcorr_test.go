package stats

import (
	"encoding/json"
	"os"
	"testing"
)

// TestExactAgainstScipy checks SpearmanExact and KendallExactTies against
// testdata/stats/exact.json, written by make_exact.py with scipy 1.10:
// permutation_test over all n! orderings (Spearman, and Kendall with ties)
// and kendalltau(method='exact') (Kendall without ties), n = 3..9.
func TestExactAgainstScipy(t *testing.T) {
	b, err := os.ReadFile("../testdata/stats/exact.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Cases []struct {
			Name              string
			X, Y              []float64
			Ties              bool
			Spearman, Kendall float64
			SpearmanP         map[string]float64 `json:"spearman_p"`
			KendallP          map[string]float64 `json:"kendall_p"`
		}
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatalf("exact.json: %v", err)
	}
	alts := map[string]Alternative{"two-sided": TwoSided, "less": Less, "greater": Greater}
	seen := map[bool]map[int]bool{false: {}, true: {}}
	checked := 0
	for _, c := range table.Cases {
		seen[c.Ties][len(c.X)] = true
		for name, want := range c.SpearmanP {
			rho, p, err := SpearmanExact(c.X, c.Y, alts[name])
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if !relClose(rho, c.Spearman, 1e-12) || !relClose(p, want, 1e-12) {
				t.Errorf("%s: Spearman %s: ρ %v p %v, scipy ρ %v p %v", c.Name, name, rho, p, c.Spearman, want)
			}
			checked++
		}
		for name, want := range c.KendallP {
			tau, p, err := KendallExactTies(c.X, c.Y, alts[name])
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if !relClose(tau, c.Kendall, 1e-12) || !relClose(p, want, 1e-12) {
				t.Errorf("%s: Kendall %s: τ %v p %v, scipy τ %v p %v", c.Name, name, tau, p, c.Kendall, want)
			}
			checked++
		}
	}
	for _, ties := range []bool{false, true} {
		for n := 3; n <= ExactLimit; n++ {
			if !seen[ties][n] {
				t.Errorf("no case of n = %d with ties = %v", n, ties)
			}
		}
	}
	if checked < 150 {
		t.Errorf("only %d p-values checked", checked)
	}
}

// TestExactRefusesBeyondLimit: n = 10 is the asymptotic and Monte-Carlo
// p-values' range, not a 10! enumeration.
func TestExactRefusesBeyondLimit(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if _, _, err := SpearmanExact(x, x, TwoSided); err == nil {
		t.Error("SpearmanExact: n = 10 accepted")
	}
	if _, _, err := KendallExactTies(x, x, TwoSided); err == nil {
		t.Error("KendallExactTies: n = 10 accepted")
	}
}

// TestMonteCarloPNeverZero: every sampled p-value the package reports is
// (k+1)/(m+1). On data where no resample can reach the observed statistic
// (a perfect ordering of 12, a difference of one sign on 24 items: the
// chance is below 1e-6 per round) it is exactly 1/(m+1), not 0.
func TestMonteCarloPNeverZero(t *testing.T) {
	const m = 999
	want := 1.0 / (m + 1)
	x := make([]float64, 12)
	for i := range x {
		x[i] = float64(i)
	}
	if _, p, err := SpearmanPermutation(x, x, m, 7); err != nil || p != want {
		t.Errorf("SpearmanPermutation: p = %v (%v), want %v", p, err, want)
	}
	a, b := make([]float64, 24), make([]float64, 24)
	for i := range a {
		a[i], b[i] = 1, 0
	}
	if _, p, err := PairedPermutation(a, b, m, 7); err != nil || p != want {
		t.Errorf("PairedPermutation: p = %v (%v), want %v", p, err, want)
	}
	axes := []AxisSample{{Name: "x", Weight: 1, Values: a}}
	if ps, ms, err := MSPermutation(axes, m, 7); err != nil || ps[0] != want || ms != want {
		t.Errorf("MSPermutation: p = %v, MS p = %v (%v), want %v", ps, ms, err, want)
	}
	terms := PairedTerms{Name: "x", Weight: 1, Value: func(s []float64) (float64, bool) { return s[0] / s[1], true }}
	for i := range a {
		terms.A = append(terms.A, []float64{a[i], 1})
		terms.B = append(terms.B, []float64{b[i], 1})
	}
	if d, ms, err := CompareStatistics([]PairedTerms{terms}, m, 7, 0.95); err != nil || d[0].P != want || ms.P != want {
		t.Errorf("CompareStatistics: p = %v, MS p = %v (%v), want %v", d, ms.P, err, want)
	}
}
