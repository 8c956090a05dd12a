package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// LogReg is a fitted binary L2-regularised logistic regression.
//
// It minimises the objective of sklearn's LogisticRegression (penalty="l2",
// fit_intercept=True, the intercept unpenalised):
//
//	½‖w‖² + C Σᵢ log(1 + exp(−sᵢ(xᵢ·w + b))),  sᵢ = ±1.
//
// sklearn's default solver is lbfgs; this one is Newton's method with a
// backtracking line search, so it reaches the same optimum of the same
// convex objective, usually closer than lbfgs's default tolerance (1e-4).
// Coefficients therefore agree with sklearn to about 1e-4 relative, not to
// the last bit. Features are used as given, unscaled, as sklearn does.
type LogReg struct {
	Coef       []float64
	Intercept  float64
	Iterations int
}

// FitLogReg fits rows x (x[i] is row i) to labels y with inverse
// regularisation strength c (sklearn's C; 1 is its default).
func FitLogReg(x [][]float64, y []bool, c float64) (*LogReg, error) {
	n := len(x)
	if n == 0 {
		return nil, errors.New("stats: logreg: no rows")
	}
	if len(y) != n {
		return nil, fmt.Errorf("stats: logreg: %d rows but %d labels", n, len(y))
	}
	if !(c > 0) || math.IsInf(c, 0) {
		return nil, fmt.Errorf("stats: logreg: C = %v; want a finite value > 0", c)
	}
	p := len(x[0])
	var pos int
	for i, row := range x {
		if len(row) != p {
			return nil, fmt.Errorf("stats: logreg: row %d has %d features, want %d", i, len(row), p)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("stats: logreg: row %d feature %d is %v", i, j, v)
			}
		}
		if y[i] {
			pos++
		}
	}
	if pos == 0 || pos == n {
		return nil, ErrOneClass
	}

	d := p + 1 // the intercept is the last parameter
	theta := make([]float64, d)
	grad := make([]float64, d)
	hess := mat.NewSymDense(d, nil)
	step := make([]float64, d)
	trial := make([]float64, d)
	obj := logRegObjective(x, y, c, theta)
	m := &LogReg{}
	for m.Iterations = 1; m.Iterations <= 100; m.Iterations++ {
		// Gradient and Hessian of the objective at theta.
		clear(grad)
		hd := hess.RawSymmetric().Data
		clear(hd)
		for j := 0; j < p; j++ {
			grad[j] = theta[j]
			hd[j*d+j] = 1
		}
		for i, row := range x {
			z := dotRow(row, theta)
			prob := sigmoid(z)
			r := prob
			if y[i] {
				r = prob - 1
			}
			wgt := c * prob * (1 - prob)
			for a := 0; a < d; a++ {
				xa := 1.0
				if a < p {
					xa = row[a]
				}
				grad[a] += c * r * xa
				if xa == 0 {
					continue
				}
				base := a*d + a
				hd[base] += wgt * xa * xa
				for b := a + 1; b < d; b++ {
					xb := 1.0
					if b < p {
						xb = row[b]
					}
					hd[base+b-a] += wgt * xa * xb
				}
			}
		}
		var gmax float64
		for _, g := range grad {
			gmax = max(gmax, math.Abs(g))
		}
		if gmax < 1e-10*max(1, c*float64(n)) {
			break
		}
		var chol mat.Cholesky
		if !chol.Factorize(hess) {
			// Numerically singular (all rows saturated): fall back to a
			// damped gradient step.
			for a := range step {
				step[a] = grad[a] / (1 + c*float64(n))
			}
		} else {
			sv := mat.NewVecDense(d, step)
			if err := chol.SolveVecTo(sv, mat.NewVecDense(d, grad)); err != nil {
				return nil, fmt.Errorf("stats: logreg: %w", err)
			}
		}
		t := 1.0
		var next float64
		for range 60 {
			for a := range trial {
				trial[a] = theta[a] - t*step[a]
			}
			next = logRegObjective(x, y, c, trial)
			if next <= obj {
				break
			}
			t /= 2
		}
		if next > obj {
			break // no descent possible in floating point
		}
		copy(theta, trial)
		done := obj-next <= 1e-15*max(1, math.Abs(obj))
		obj = next
		if done {
			break
		}
	}
	m.Coef = theta[:p:p]
	m.Intercept = theta[p]
	return m, nil
}

// Prob is the fitted probability that row is a yes.
func (m *LogReg) Prob(row []float64) float64 {
	z := m.Intercept
	for j, v := range row {
		z += m.Coef[j] * v
	}
	return sigmoid(z)
}

func logRegObjective(x [][]float64, y []bool, c float64, theta []float64) float64 {
	p := len(theta) - 1
	var reg, loss float64
	for _, w := range theta[:p] {
		reg += w * w
	}
	for i, row := range x {
		z := dotRow(row, theta)
		if !y[i] {
			z = -z
		}
		loss += logOnePlusExp(-z)
	}
	return reg/2 + c*loss
}

// dotRow is row·w + b with theta = (w, b).
func dotRow(row, theta []float64) float64 {
	z := theta[len(theta)-1]
	for j, v := range row {
		z += theta[j] * v
	}
	return z
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// logOnePlusExp is log(1+e^z) without overflow.
func logOnePlusExp(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}
