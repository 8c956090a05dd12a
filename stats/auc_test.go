package stats

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"testing"
)

// golden is testdata/audit/golden.json, written by testdata/audit/golden.py
// with Debian's scikit-learn 1.2.1.
type golden struct {
	Sklearn string `json:"sklearn"`
	Ranking []struct {
		Name             string    `json:"name"`
		Labels           []bool    `json:"labels"`
		Scores           []float64 `json:"scores"`
		Weights          []float64 `json:"weights"`
		ROCAUC           float64   `json:"roc_auc"`
		WeightedROCAUC   float64   `json:"weighted_roc_auc"`
		AveragePrecision float64   `json:"average_precision"`
	} `json:"ranking"`
	OVR []struct {
		Classes  []int       `json:"classes"`
		Probs    [][]float64 `json:"probs"`
		MacroAUC float64     `json:"macro_auc"`
	} `json:"ovr"`
	LogReg []struct {
		X         [][]float64 `json:"x"`
		Y         []bool      `json:"y"`
		C         float64     `json:"C"`
		Coef      []float64   `json:"coef"`
		Intercept float64     `json:"intercept"`
		DefCoef   []float64   `json:"default_coef"`
		DefInt    float64     `json:"default_intercept"`
	} `json:"logreg"`
	Forest []struct {
		X          [][]float64 `json:"x"`
		Source     []int       `json:"source"`
		Y          []bool      `json:"y"`
		OOFAUCMean float64     `json:"oof_auc_mean"`
		OOFAUCSD   float64     `json:"oof_auc_sd"`
	} `json:"forest"`
}

func loadGolden(t testing.TB) golden {
	t.Helper()
	b, err := os.ReadFile("../testdata/audit/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestROCAUCGoldenSklearn(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Ranking {
		got, err := ROCAUC(c.Labels, c.Scores)
		if err != nil || !near(got, c.ROCAUC, 1e-12) {
			t.Errorf("%s: ROCAUC = %v, %v; sklearn %v", c.Name, got, err, c.ROCAUC)
		}
		ap, err := AveragePrecision(c.Labels, c.Scores)
		if err != nil || !near(ap, c.AveragePrecision, 1e-12) {
			t.Errorf("%s: AveragePrecision = %v, %v; sklearn %v", c.Name, ap, err, c.AveragePrecision)
		}
		if c.Weights != nil {
			w, err := WeightedROCAUC(c.Labels, c.Scores, c.Weights)
			if err != nil || !near(w, c.WeightedROCAUC, 1e-12) {
				t.Errorf("%s: WeightedROCAUC = %v, %v; sklearn %v", c.Name, w, err, c.WeightedROCAUC)
			}
		}
	}
	for i, c := range g.OVR {
		got, err := MacroOneVsRestAUC(c.Classes, c.Probs)
		if err != nil || !near(got, c.MacroAUC, 1e-12) {
			t.Errorf("ovr case %d: %v, %v; sklearn %v", i, got, err, c.MacroAUC)
		}
	}
}

func b(v ...int) []bool {
	out := make([]bool, len(v))
	for i, x := range v {
		out[i] = x == 1
	}
	return out
}

// Vectors from sklearn/metrics/tests/test_ranking.py
// (test_roc_curve_toydata, test_precision_recall_curve_toydata,
// test_precision_recall_curve, test_average_precision_constant_values,
// test_multi_ovr_auc_toydata, test_auc_score_non_binary_class).
func TestSklearnPublishedVectors(t *testing.T) {
	cases := []struct {
		y       []bool
		s       []float64
		auc, ap float64
	}{
		{b(0, 1), []float64{0, 1}, 1, 1},
		{b(0, 1), []float64{1, 0}, 0, 0.5},
		{b(1, 0), []float64{1, 1}, 0.5, 0.5},
		{b(1, 0), []float64{1, 0}, 1, 1},
		{b(1, 0), []float64{0.5, 0.5}, 0.5, 0.5},
		{b(1, 0, 0, 1), []float64{1, 2, 3, 4}, 0.5, 0.75},
	}
	for i, c := range cases {
		auc, err := ROCAUC(c.y, c.s)
		if err != nil || auc != c.auc {
			t.Errorf("case %d: ROCAUC = %v, %v; want %v", i, auc, err, c.auc)
		}
		ap, err := AveragePrecision(c.y, c.s)
		if err != nil || !near(ap, c.ap, 1e-15) {
			t.Errorf("case %d: AveragePrecision = %v, %v; want %v", i, ap, err, c.ap)
		}
	}
	// y_true = [1, 1]: AUC undefined, AP 1.
	if _, err := ROCAUC(b(1, 1), []float64{0.25, 0.75}); !errors.Is(err, ErrOneClass) {
		t.Errorf("all-positive ROCAUC error = %v, want ErrOneClass", err)
	}
	if _, err := ROCAUC(b(0, 0), []float64{0.25, 0.75}); !errors.Is(err, ErrOneClass) {
		t.Errorf("all-negative ROCAUC error = %v, want ErrOneClass", err)
	}
	if ap, err := AveragePrecision(b(1, 1), []float64{0.25, 0.75}); err != nil || ap != 1 {
		t.Errorf("all-positive AP = %v, %v; want 1", ap, err)
	}
	if _, err := AveragePrecision(b(0, 0), []float64{0.25, 0.75}); err == nil {
		t.Error("all-negative AP: want an error")
	}
	// A constant score: AP is the positive rate.
	y := make([]bool, 100)
	s := make([]float64, 100)
	for i := range y {
		y[i] = i%4 == 0
		s[i] = 1
	}
	if ap, _ := AveragePrecision(y, s); ap != 0.25 {
		t.Errorf("constant AP = %v, want 0.25", ap)
	}
	// One-vs-rest toy data: the mean of three binary AUCs.
	classes := []int{0, 1, 2, 2}
	probs := [][]float64{{1, 0, 0}, {0.1, 0.5, 0.4}, {0.1, 0.1, 0.8}, {0.3, 0.3, 0.4}}
	o0, _ := ROCAUC(b(1, 0, 0, 0), []float64{1, 0.1, 0.1, 0.3})
	o1, _ := ROCAUC(b(0, 1, 0, 0), []float64{0, 0.5, 0.1, 0.3})
	o2, _ := ROCAUC(b(0, 0, 1, 1), []float64{0, 0.4, 0.8, 0.4})
	if got, _ := MacroOneVsRestAUC(classes, probs); !near(got, (o0+o1+o2)/3, 1e-15) {
		t.Errorf("ovr toy = %v, want %v", got, (o0+o1+o2)/3)
	}
}

func TestAUCScaleInvariance(t *testing.T) {
	g := loadGolden(t)
	c := g.Ranking[1]
	base, _ := ROCAUC(c.Labels, c.Scores)
	for _, f := range []func(float64) float64{
		func(v float64) float64 { return 100 * v },
		func(v float64) float64 { return 1e-6 * v },
		func(v float64) float64 { return v - 10 },
	} {
		s := make([]float64, len(c.Scores))
		for i, v := range c.Scores {
			s[i] = f(v)
		}
		if got, _ := ROCAUC(c.Labels, s); got != base {
			t.Errorf("scaled AUC %v != %v", got, base)
		}
	}
}

func TestAUCBadInput(t *testing.T) {
	if _, err := ROCAUC(b(1, 0), []float64{1}); err == nil {
		t.Error("length mismatch: want error")
	}
	if _, err := ROCAUC(b(1, 0), []float64{1, math.NaN()}); err == nil {
		t.Error("NaN score: want error")
	}
	if _, err := WeightedROCAUC(b(1, 0), []float64{1, 0}, []float64{1, -1}); err == nil {
		t.Error("negative weight: want error")
	}
	if _, err := WeightedROCAUC(b(1, 0), []float64{1, 0}, []float64{0, 1}); !errors.Is(err, ErrOneClass) {
		t.Errorf("zero positive weight: %v, want ErrOneClass", err)
	}
}

// Pairs counted by brute force agree with the sort-based AUC.
func TestROCAUCPairsGame(t *testing.T) {
	r := newRand(3)
	for trial := 0; trial < 50; trial++ {
		n := 2 + r.IntN(40)
		y := make([]bool, n)
		s := make([]float64, n)
		for i := range y {
			y[i] = r.IntN(2) == 1
			s[i] = float64(r.IntN(5))
		}
		y[0], y[1] = true, false
		var wins float64
		var pairs int
		for i := range n {
			for j := range n {
				if y[i] && !y[j] {
					pairs++
					switch {
					case s[i] > s[j]:
						wins++
					case s[i] == s[j]:
						wins += 0.5
					}
				}
			}
		}
		got, _ := ROCAUC(y, s)
		if !near(got, wins/float64(pairs), 1e-12) {
			t.Fatalf("trial %d: %v, pairs game %v", trial, got, wins/float64(pairs))
		}
	}
}
