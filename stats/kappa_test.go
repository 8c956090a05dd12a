package stats

import (
	"math"
	"testing"
)

func repeat(parts ...int) []int {
	// parts are (value, count) pairs.
	var out []int
	for i := 0; i < len(parts); i += 2 {
		for range parts[i+1] {
			out = append(out, parts[i])
		}
	}
	return out
}

func almost(got, want float64, decimal int) bool {
	return math.Abs(got-want) < 1.5*math.Pow(10, -float64(decimal))
}

// TestCohenKappa ports sklearn/metrics/tests/test_classification.py::test_cohen_kappa.
func TestCohenKappa(t *testing.T) {
	// Artstein and Poesio (2008), Table 1: [[20, 20], [10, 50]].
	y1 := repeat(0, 40, 1, 60)
	y2 := repeat(0, 20, 1, 20, 0, 10, 1, 50)
	kappa, err := CohenKappa(y1, y2, nil, Unweighted)
	if err != nil || !almost(kappa, 0.348, 3) {
		t.Errorf("Table 1: kappa = %v (%v), want 0.348", kappa, err)
	}
	if k2, _ := CohenKappa(y2, y1, nil, Unweighted); k2 != kappa {
		t.Errorf("kappa not symmetric: %v vs %v", k2, kappa)
	}
	// Spurious labels ignored through an explicit label set.
	y1s := append(append([]int{}, y1...), 2, 2, 2, 2)
	y2s := append(append([]int{}, y2...), 2, 2, 2, 2)
	if k, _ := CohenKappa(y1s, y2s, []int{0, 1}, Unweighted); k != kappa {
		t.Errorf("labels=[0,1]: kappa = %v, want %v", k, kappa)
	}
	if k, _ := CohenKappa(y1s, y1s, nil, Unweighted); !almost(k, 1, 7) {
		t.Errorf("self agreement = %v, want 1", k)
	}
	// Multiclass: Artstein and Poesio, Table 4.
	y1 = repeat(0, 46, 1, 44, 2, 10)
	y2 = repeat(0, 52, 1, 32, 2, 16)
	if k, _ := CohenKappa(y1, y2, nil, Unweighted); !almost(k, 0.8013, 4) {
		t.Errorf("Table 4: kappa = %v, want 0.8013", k)
	}
	// Weighting: none, linear, quadratic.
	y1 = repeat(0, 46, 1, 44, 2, 10)
	y2 = repeat(0, 50, 1, 40, 2, 10)
	for _, c := range []struct {
		w    KappaWeights
		want float64
	}{{Unweighted, 0.9315}, {Linear, 0.9412}, {Quadratic, 0.9541}} {
		if k, _ := CohenKappa(y1, y2, nil, c.w); !almost(k, c.want, 4) {
			t.Errorf("weights %d: kappa = %v, want %v", c.w, k, c.want)
		}
	}
}

func TestCohenKappaDegenerate(t *testing.T) {
	if k, err := CohenKappa([]string{"a", "a"}, []string{"a", "a"}, nil, Unweighted); err == nil || !math.IsNaN(k) {
		t.Errorf("one shared label: got (%v, %v), want NaN and an error", k, err)
	}
	if _, err := CohenKappa([]int{1}, []int{1, 2}, nil, Unweighted); err == nil {
		t.Error("unequal lengths: want error")
	}
	if _, err := CohenKappa([]int{}, []int{}, nil, Unweighted); err == nil {
		t.Error("empty: want error")
	}
	if _, err := CohenKappa([]int{1, 2}, []int{1, 2}, []int{1, 1}, Unweighted); err == nil {
		t.Error("duplicate label: want error")
	}
	// String labels work and sort: "safe" < "unsafe".
	k, err := CohenKappa([]string{"safe", "unsafe", "safe", "unsafe"}, []string{"safe", "unsafe", "unsafe", "unsafe"}, nil, Unweighted)
	if err != nil || !almost(k, 0.5, 9) {
		t.Errorf("string labels: kappa = %v (%v), want 0.5", k, err)
	}
}
