package stats

import (
	"errors"
	"math"
	"testing"
)

func TestLogRegGoldenSklearn(t *testing.T) {
	g := loadGolden(t)
	for k, c := range g.LogReg {
		m, err := FitLogReg(c.X, c.Y, c.C)
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		// sklearn's newton-cg at tol 1e-12 sits on the optimum, as does this fit.
		for j, want := range c.Coef {
			if !near(m.Coef[j], want, 1e-7*max(1, math.Abs(want))) {
				t.Errorf("case %d coef %d = %v, sklearn %v", k, j, m.Coef[j], want)
			}
		}
		if !near(m.Intercept, c.Intercept, 1e-7*max(1, math.Abs(c.Intercept))) {
			t.Errorf("case %d intercept = %v, sklearn %v", k, m.Intercept, c.Intercept)
		}
		// sklearn's default lbfgs (tol 1e-4) stops near it: "close enough".
		for j, want := range c.DefCoef {
			if !near(m.Coef[j], want, 1e-2*max(1, math.Abs(want))) {
				t.Errorf("case %d coef %d = %v, sklearn default fit %v", k, j, m.Coef[j], want)
			}
		}
	}
}

func TestLogRegSeparable(t *testing.T) {
	// Perfectly separable: the L2 penalty keeps the weights finite.
	x := [][]float64{{-2}, {-1}, {1}, {2}}
	m, err := FitLogReg(x, b(0, 0, 1, 1), 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(m.Coef[0]) || m.Coef[0] <= 0 || m.Prob([]float64{2}) <= 0.5 {
		t.Errorf("coef %v, P(2) = %v", m.Coef, m.Prob([]float64{2}))
	}
}

func TestLogRegBadInput(t *testing.T) {
	if _, err := FitLogReg([][]float64{{1}, {2}}, b(1, 1), 1); !errors.Is(err, ErrOneClass) {
		t.Errorf("one class: %v", err)
	}
	if _, err := FitLogReg([][]float64{{1}, {math.NaN()}}, b(1, 0), 1); err == nil {
		t.Error("NaN: want error")
	}
	if _, err := FitLogReg([][]float64{{1}, {2, 3}}, b(1, 0), 1); err == nil {
		t.Error("ragged: want error")
	}
	if _, err := FitLogReg([][]float64{{1}, {2}}, b(1, 0), 0); err == nil {
		t.Error("C = 0: want error")
	}
}
