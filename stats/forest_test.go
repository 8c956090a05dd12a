package stats

import (
	"math"
	"testing"
)

// stratifiedFolds gives every row a fold in [0,k), yes and no rows dealt
// round-robin in a seeded random order.
func stratifiedFolds(y []bool, k int, seed uint64) []int {
	r := newRand(seed)
	fold := make([]int, len(y))
	for _, cls := range []bool{false, true} {
		var rows []int
		for i, v := range y {
			if v == cls {
				rows = append(rows, i)
			}
		}
		r.Shuffle(len(rows), func(a, b int) { rows[a], rows[b] = rows[b], rows[a] })
		for j, i := range rows {
			fold[i] = j % k
		}
	}
	return fold
}

func oofForestAUC(t testing.TB, x [][]float64, y []bool, seed uint64, opt ForestOptions) float64 {
	fold := stratifiedFolds(y, 5, seed)
	pred := make([]float64, len(y))
	for f := range 5 {
		var tx [][]float64
		var ty []int
		for i := range y {
			if fold[i] != f {
				tx = append(tx, x[i])
				ty = append(ty, boolInt(y[i]))
			}
		}
		opt.Seed = seed*10 + uint64(f)
		m, err := FitForest(tx, ty, 2, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range y {
			if fold[i] == f {
				pred[i] = m.PredictProba(x[i])[1]
			}
		}
	}
	auc, err := ROCAUC(y, pred)
	if err != nil {
		t.Fatal(err)
	}
	return auc
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// The forest reaches the out-of-fold AUC sklearn's RandomForestClassifier
// (100 trees, defaults) reaches on the same rows, within a few of sklearn's
// own seed-to-seed standard deviations.
func TestForestMatchesSklearnLevel(t *testing.T) {
	g := loadGolden(t)
	c := g.Forest[0]
	x := make([][]float64, len(c.X))
	for i, row := range c.X {
		oh := make([]float64, 6)
		oh[c.Source[i]] = 1
		x[i] = append(append([]float64{}, row...), oh...)
	}
	var sum float64
	for seed := uint64(1); seed <= 3; seed++ {
		sum += oofForestAUC(t, x, c.Y, seed, ForestOptions{})
	}
	got := sum / 3
	if math.Abs(got-c.OOFAUCMean) > 0.015 {
		t.Errorf("out-of-fold AUC %.4f; sklearn %.4f ± %.4f", got, c.OOFAUCMean, c.OOFAUCSD)
	}
	t.Logf("out-of-fold AUC %.4f; sklearn %.4f ± %.4f", got, c.OOFAUCMean, c.OOFAUCSD)
}

func TestForestSeededAndWorkerIndependent(t *testing.T) {
	g := loadGolden(t)
	c := g.Forest[0]
	y := make([]int, len(c.Y))
	for i, v := range c.Y {
		y[i] = boolInt(v)
	}
	a, err := FitForest(c.X, y, 2, ForestOptions{Trees: 20, Seed: 5, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	bf, _ := FitForest(c.X, y, 2, ForestOptions{Trees: 20, Seed: 5, Workers: 3})
	other, _ := FitForest(c.X, y, 2, ForestOptions{Trees: 20, Seed: 6, Workers: 2})
	differs := false
	for _, row := range c.X[:50] {
		pa, pb, po := a.PredictProba(row), bf.PredictProba(row), other.PredictProba(row)
		if pa[0] != pb[0] || pa[1] != pb[1] {
			t.Fatalf("same seed, different workers: %v vs %v", pa, pb)
		}
		if !near(pa[0]+pa[1], 1, 1e-12) {
			t.Fatalf("probabilities %v do not sum to 1", pa)
		}
		differs = differs || pa[1] != po[1]
	}
	if !differs {
		t.Error("a different seed gave the same forest")
	}
}

func TestForestMulticlassAndSeparable(t *testing.T) {
	// Three classes split by one feature; a second feature is noise.
	r := newRand(1)
	var x [][]float64
	var y []int
	for i := range 300 {
		c := i % 3
		x = append(x, []float64{float64(c) + 0.3*r.Float64(), r.Float64()})
		y = append(y, c)
	}
	f, err := FitForest(x, y, 3, ForestOptions{Trees: 30, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	probs := make([][]float64, len(x))
	for i, row := range x {
		probs[i] = f.PredictProba(row)
	}
	if auc, _ := MacroOneVsRestAUC(y, probs); auc != 1 {
		t.Errorf("separable macro AUC = %v, want 1", auc)
	}
}

func TestForestBadInput(t *testing.T) {
	if _, err := FitForest(nil, nil, 2, ForestOptions{}); err == nil {
		t.Error("no rows: want error")
	}
	if _, err := FitForest([][]float64{{1}, {math.NaN()}}, []int{0, 1}, 2, ForestOptions{}); err == nil {
		t.Error("NaN: want error")
	}
	if _, err := FitForest([][]float64{{1}, {2}}, []int{0, 2}, 2, ForestOptions{}); err == nil {
		t.Error("class out of range: want error")
	}
	// Constant features: every tree is one leaf holding the class shares.
	f, err := FitForest([][]float64{{1}, {1}, {1}, {1}}, []int{0, 1, 1, 1}, 2, ForestOptions{Trees: 5})
	if err != nil {
		t.Fatal(err)
	}
	if p := f.PredictProba([]float64{1}); !near(p[0]+p[1], 1, 1e-12) {
		t.Errorf("constant-feature probabilities %v", p)
	}
}

// The histogram split search (few classes) and the sorted scan (many
// classes) choose the same splits: a two-class problem declared with five
// classes, three of them empty, grows the same forest.
func TestForestHistogramMatchesSortedScan(t *testing.T) {
	g := loadGolden(t)
	c := g.Forest[0]
	y := make([]int, len(c.Y))
	for i, v := range c.Y {
		y[i] = boolInt(v)
	}
	two, err := FitForest(c.X, y, 2, ForestOptions{Trees: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	five, err := FitForest(c.X, y, 5, ForestOptions{Trees: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range c.X {
		a, b := two.PredictProba(row), five.PredictProba(row)
		if !near(a[1], b[1], 1e-12) || b[2] != 0 {
			t.Fatalf("two classes %v, five %v", a, b)
		}
	}
}

// PredictProbaRows gives every row exactly what PredictProba gives it,
// across block boundaries, and allocates nothing.
func TestForestPredictRows(t *testing.T) {
	g := loadGolden(t)
	c := g.Forest[0]
	y := make([]int, len(c.Y))
	for i, v := range c.Y {
		y[i] = boolInt(v)
	}
	f, err := FitForest(c.X, y, 2, ForestOptions{Trees: 15, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	x := c.X[:2*predictBlock+7]
	out := make([]float64, 2*len(x))
	f.PredictProbaRows(x, out)
	for i, row := range x {
		if p := f.PredictProba(row); p[0] != out[2*i] || p[1] != out[2*i+1] {
			t.Fatalf("row %d: PredictProba %v, PredictProbaRows %v", i, p, out[2*i:2*i+2])
		}
	}
	if n := testing.AllocsPerRun(5, func() { f.PredictProbaRows(x, out) }); n != 0 {
		t.Errorf("PredictProbaRows allocates %v times per call", n)
	}
}

// MaxFeatures 0 is sklearn's "sqrt" for classifiers, ⌊√features⌋: with 7
// features, 2 (a rounded √7 would be 3).
func TestForestMaxFeaturesIsSklearnSqrt(t *testing.T) {
	r := newRand(2)
	var x [][]float64
	var y []int
	for range 400 {
		row := make([]float64, 7)
		for j := range row {
			row[j] = r.NormFloat64()
		}
		x = append(x, row)
		y = append(y, boolInt(row[0]+row[1]+r.NormFloat64() > 0))
	}
	fit := func(m int) *Forest {
		f, err := FitForest(x, y, 2, ForestOptions{Trees: 10, Seed: 9, MaxFeatures: m})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	def, two, three := fit(0), fit(2), fit(3)
	same, differs := true, false
	for _, row := range x {
		p, q, s := def.PredictProba(row), two.PredictProba(row), three.PredictProba(row)
		same = same && p[1] == q[1]
		differs = differs || p[1] != s[1]
	}
	if !same || !differs {
		t.Errorf("default max features: same as 2: %v, differs from 3: %v", same, differs)
	}
}
