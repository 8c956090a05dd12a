package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// rowsFromCounts builds rows whose only content is the source and label.
func rowsFromCounts(names []string, yes, no []int) []Row {
	var rows []Row
	for k, s := range names {
		for range yes[k] {
			rows = append(rows, Row{true, s, []float64{0}})
		}
		for range no[k] {
			rows = append(rows, Row{false, s, []float64{0}})
		}
	}
	return rows
}

// Section 5.2: four RAGBench configurations, 500 rows each, yes-rates
// 92.8%, 94.2%, 86.2%, 40.2%: the source-only score is 0.8106.
func TestSourceOnlyRAGBench(t *testing.T) {
	yes := []int{464, 471, 431, 201}
	no := []int{36, 29, 69, 299}
	got, err := SourceOnlyAUC(yes, no)
	if err != nil {
		t.Fatal(err)
	}
	if round(got, 4) != 0.8106 {
		t.Errorf("source-only = %.6f, paper 0.8106", got)
	}
	// The same through Run, from rows.
	rows := rowsFromCounts([]string{"HotpotQA", "DelucionQA", "EManual", "ExpertQA"}, yes, no)
	opt := DefaultOptions()
	opt.Shuffles, opt.Bootstrap, opt.FingerprintTrees = 0, 0, -1
	rep, err := Run(rows, []string{"m"}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.SourceOnly != got || rep.Rows != 2000 || rep.Yes != 1567 {
		t.Errorf("Run: source-only %v rows %d yes %d", rep.SourceOnly, rep.Rows, rep.Yes)
	}
}

// Section 5.4: 96 faulty runs all in one collection, 11, 5 and 5 healthy
// runs in three others: the collection name alone scores 1.000.
func TestSourceOnlyOpeningRL(t *testing.T) {
	got, err := SourceOnlyAUC([]int{96, 0, 0, 0}, []int{0, 11, 5, 5})
	if err != nil || got != 1 {
		t.Errorf("source-only = %v, %v; paper 1.000", got, err)
	}
}

// Sources with equal yes-rates: every pair ties, 0.500.
func TestSourceOnlyEqualRates(t *testing.T) {
	got, err := SourceOnlyAUC([]int{41, 82, 41, 41, 410}, []int{59, 118, 59, 59, 590})
	if err != nil || got != 0.5 {
		t.Errorf("source-only = %v, %v; want 0.5", got, err)
	}
	if _, err := SourceOnlyAUC([]int{3, 4}, []int{0, 0}); err == nil {
		t.Error("one class: want an error")
	}
}

// Source-only from counts equals the ROC AUC of the per-row yes-rates.
func TestSourceOnlyMatchesRowAUC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 100; trial++ {
		k := 2 + r.IntN(6)
		yes, no := make([]int, k), make([]int, k)
		for i := range k {
			yes[i], no[i] = r.IntN(5), r.IntN(5)
		}
		yes[0], no[1] = yes[0]+1, no[1]+1
		names := make([]string, k)
		for i := range names {
			names[i] = fmt.Sprint("s", i)
		}
		rows := rowsFromCounts(names, yes, no)
		d, err := validate(rows, []string{"m"})
		if err != nil {
			t.Fatal(err)
		}
		y := make([]bool, len(rows))
		rating := make([]float64, len(rows))
		for i, row := range rows {
			y[i] = row.Label
			kk := d.src[i]
			rating[i] = rate(d.pos[kk], d.neg[kk])
		}
		want := pairsGame(y, rating)
		got, _ := SourceOnlyAUC(yes, no)
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("counts %v/%v: %v, pairs game %v", yes, no, got, want)
		}
	}
}

func pairsGame(y []bool, s []float64) float64 {
	var wins, pairs float64
	for i := range y {
		for j := range y {
			if y[i] && !y[j] {
				pairs++
				if s[i] > s[j] {
					wins++
				} else if s[i] == s[j] {
					wins += 0.5
				}
			}
		}
	}
	return wins / pairs
}

// table1 is the paper's Table 1: headline, its interval where given,
// measurements-only, source-only, the printed verdict and L.
var table1 = []struct {
	name                 string
	headline, lo, hi     float64 // lo, hi NaN when no interval is printed
	measOnly, sourceOnly float64
	verdict              string
	l                    float64
	lPlaces              int
}{
	{"1 pooled RAGBench rows", 0.843, 0.825, 0.860, 0.637, 0.811, VerdictSourceDominated, 0.96, 2},
	{"2 hard math, five judges", 0.594, 0.534, 0.654, 0.585, 0.501, VerdictTooWeak, 0.84, 2},
	{"3 MT-Bench human judgments", 0.527, nan, nan, 0.499, 0.645, VerdictTooWeak, 1.22, 2},
	{"4 MMLU, stand-in label", 0.509, nan, nan, 0.495, 0.556, VerdictTooWeak, 1.09, 2},
	{"5 RL, two-framework audit", 0.887, nan, nan, 0.881, 0.737, VerdictNotFlagged, 0.83, 2},
	{"6 RL, plus the TRL framework", 0.911, nan, nan, 0.884, 0.838, VerdictSourceDominated, 0.92, 2},
	{"7 hard math, three answer models", 0.871, nan, nan, 0.786, 0.741, VerdictNotFlagged, 0.85, 2},
	{"8 same five judges, another set", 0.690, 0.663, 0.715, 0.689, 0.500, VerdictSourceNothing, 0.725, 3},
	{"9 MT-Bench, second measurement set", 0.533, nan, nan, 0.500, 0.645, VerdictTooWeak, 1.21, 2},
	{"10 MMLU, second measurement set", 0.520, nan, nan, 0.500, 0.578, VerdictTooWeak, 1.11, 2},
}

var nan = math.NaN()

func TestTable1Verdicts(t *testing.T) {
	rule := DefaultRule()
	for _, a := range table1 {
		got := rule.Read(a.headline, a.lo, a.sourceOnly)
		if got.Verdict != a.verdict {
			t.Errorf("audit %s: verdict %q, paper %q (%s)", a.name, got.Verdict, a.verdict, got.RuleDetail)
		}
		if round(got.L, a.lPlaces) != a.l {
			t.Errorf("audit %s: L %.4f, paper %v", a.name, got.L, a.l)
		}
		if round(got.LMin, 3) != round(0.5/a.headline, 3) {
			t.Errorf("audit %s: lowest L %v", a.name, got.LMin)
		}
	}
	// Audit 8 is the one near the floor: its interval (0.663 to 0.715)
	// stays above it, so the point reading stands.
	if got := rule.Read(0.690, 0.663, 0.500); got.Rule != RulePoint || !got.FloorPassed {
		t.Errorf("audit 8: rule %q passed %v", got.Rule, got.FloorPassed)
	}
	if got := rule.Read(0.843, 0.825, 0.811); got.Rule != RulePoint || !got.FloorPassed {
		t.Errorf("audit 1: rule %q, want point", got.Rule)
	}
	// Audit 2: L 0.84 sits on its lowest possible value 0.84.
	if got := rule.Read(0.594, 0.534, 0.501); round(got.LMin, 2) != 0.84 {
		t.Errorf("audit 2 lowest L %v, paper 0.84", got.LMin)
	}
	// Audit 1: lowest possible L 0.59.
	if got := rule.Read(0.843, 0.825, 0.811); round(got.LMin, 2) != 0.59 {
		t.Errorf("audit 1 lowest L %v, paper 0.59", got.LMin)
	}
}

// Office hours: "Any floor from 0.60 to 0.68 leaves the ten verdicts as
// printed; at 0.70 the 1,000-answer judge audit (0.690) changes; at 0.55 the
// 200-answer audit (0.594) would pass." Seven of the ten headlines have no
// printed interval, so the paper's sweep is of the point rule: with the
// stricter rule at floor 0.68, audit 8's interval (low end 0.663) would miss.
func TestTable1FloorSensitivity(t *testing.T) {
	verdicts := func(floor float64) []string {
		r := DefaultRule()
		r.Floor = floor
		var out []string
		for _, a := range table1 {
			out = append(out, r.Read(a.headline, math.NaN(), a.sourceOnly).Verdict)
		}
		return out
	}
	for f := 0.60; f <= 0.68+1e-9; f += 0.01 {
		for i, v := range verdicts(f) {
			if v != table1[i].verdict {
				t.Errorf("floor %.2f: audit %s reads %q, printed %q", f, table1[i].name, v, table1[i].verdict)
			}
		}
	}
	for i, v := range verdicts(0.70) {
		changed := v != table1[i].verdict
		if changed != (i == 7) {
			t.Errorf("floor 0.70: audit %s reads %q (printed %q)", table1[i].name, v, table1[i].verdict)
		}
	}
	if v := verdicts(0.55)[1]; v == VerdictTooWeak {
		t.Errorf("floor 0.55: the 200-answer audit should pass, reads %q", v)
	}
	// Stricter rule at 0.68: audit 8's low end 0.663 misses.
	r := DefaultRule()
	r.Floor = 0.68
	if v := r.Read(0.690, 0.663, 0.500).Verdict; v != VerdictTooWeak {
		t.Errorf("stricter rule at 0.68: audit 8 reads %q", v)
	}
}

// "The band decides the verdict for three audits (L 0.83, 0.85, 0.92)":
// of the five that clear the floor, the grid of bands 0.85–0.95 changes
// audits 6 and 7; audit 5 (L 0.83) flips only below the grid (band ≤ 0.83);
// audits 1 (0.96) and 8 (coin flip) stay.
func TestTable1BandSensitivity(t *testing.T) {
	r := DefaultRule()
	decided := map[int]bool{}
	for i, a := range table1 {
		if !r.Read(a.headline, a.lo, a.sourceOnly).FloorPassed {
			continue
		}
		for band := 0.80; band <= 0.95+1e-9; band += 0.01 {
			q := r
			q.Band = band
			if q.Read(a.headline, a.lo, a.sourceOnly).Verdict != a.verdict {
				decided[i+1] = true
			}
		}
	}
	if len(decided) != 3 || !decided[5] || !decided[6] || !decided[7] {
		t.Errorf("audits decided by the band (0.80–0.95): %v, paper 5, 6, 7", decided)
	}
	g := DefaultRule().SensitivityGrid(0.871, nan, 0.741)
	if g.Stable || len(g.Floors) != 11 || len(g.Bands) != 11 {
		t.Errorf("audit 7 grid: stable %v, %d×%d", g.Stable, len(g.Floors), len(g.Bands))
	}
	if g := DefaultRule().SensitivityGrid(0.843, 0.825, 0.811); !g.Stable {
		t.Errorf("audit 1 grid should be stable: %v", g.Changes)
	}
}

// "Below a headline of 0.556, which is 0.50 ÷ 0.90, the ratio is above 0.90
// whatever the source does."
func TestLowestLAboveBand(t *testing.T) {
	r := DefaultRule()
	if got := r.Read(0.555, nan, 0.5); got.L <= 0.90 || got.Verdict != VerdictTooWeak {
		t.Errorf("headline 0.555: L %v verdict %q", got.L, got.Verdict)
	}
	if got := r.Read(0.557, nan, 0.5); got.L >= 0.90 {
		t.Errorf("headline 0.557: L %v", got.L)
	}
}

func TestCoinFlipLine(t *testing.T) {
	r := DefaultRule()
	for _, c := range []struct {
		so   float64
		want string
	}{{0.5, VerdictSourceNothing}, {0.505, VerdictSourceNothing}, {0.495, VerdictSourceNothing}, {0.506, VerdictNotFlagged}} {
		if got := r.Read(0.80, 0.75, c.so).Verdict; got != c.want {
			t.Errorf("source-only %v: %q, want %q", c.so, got, c.want)
		}
	}
}

func TestStratifiedFolds(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	y := make([]bool, 1003)
	var nPos int
	for i := range y {
		y[i] = r.Float64() < 0.2
		if y[i] {
			nPos++
		}
	}
	folds, err := StratifiedFolds(y, 5, 42)
	if err != nil {
		t.Fatal(err)
	}
	// Every row in exactly one test fold: a fold index in range, and the
	// test folds partition the rows.
	seen := make([]int, len(y))
	size := make([]int, 5)
	posIn := make([]int, 5)
	for f := range 5 {
		for i, fi := range folds {
			if fi == f {
				seen[i]++
				size[f]++
				if y[i] {
					posIn[f]++
				}
			}
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("row %d is in %d test folds", i, c)
		}
	}
	for f := range 5 {
		if size[f] < len(y)/5-1 || size[f] > len(y)/5+1 || posIn[f] < nPos/5 || posIn[f] > nPos/5+1 {
			t.Errorf("fold %d: %d rows, %d yes", f, size[f], posIn[f])
		}
	}
	again, _ := StratifiedFolds(y, 5, 42)
	other, _ := StratifiedFolds(y, 5, 43)
	if fmt.Sprint(again) != fmt.Sprint(folds) || fmt.Sprint(other) == fmt.Sprint(folds) {
		t.Error("folds are not a function of the seed")
	}
	if _, err := StratifiedFolds([]bool{true, true, false}, 2, 1); err == nil {
		t.Error("one no row for two folds: want error")
	}
}

// synth builds a pooled set: sources with different yes-rates, and
// measurements that carry `signal` about the label.
func synth(n int, rates []float64, signal float64, seed uint64) []Row {
	r := rand.New(rand.NewPCG(seed, 1))
	rows := make([]Row, n)
	for i := range rows {
		k := r.IntN(len(rates))
		y := r.Float64() < rates[k]
		m := r.NormFloat64()
		if y {
			m += signal
		}
		rows[i] = Row{y, fmt.Sprint("src", k), []float64{m, r.NormFloat64()}}
	}
	return rows
}

func quick() Options {
	o := DefaultOptions()
	o.Shuffles, o.Bootstrap, o.Trees, o.FingerprintTrees = 50, 200, 30, 20
	return o
}

func TestRunDetectors(t *testing.T) {
	rows := synth(1200, []float64{0.9, 0.85, 0.2}, 0.7, 3)
	for _, det := range []string{DetectorFixed, DetectorMeanHalf, DetectorRF, DetectorLogReg, DetectorEach} {
		o := quick()
		o.Detector = det
		rep, err := Run(rows, []string{"signal", "noise"}, o)
		if err != nil {
			t.Fatalf("%s: %v", det, err)
		}
		if rep.Headline < 0.5 || rep.Headline > 1 || rep.CI95[0] > rep.Headline || rep.CI95[1] < rep.Headline {
			t.Errorf("%s: headline %v interval %v", det, rep.Headline, rep.CI95)
		}
		if rep.L != rep.SourceOnly/rep.Headline || rep.LMin != 0.5/rep.Headline {
			t.Errorf("%s: L %v LMin %v", det, rep.L, rep.LMin)
		}
		if rep.Shuffle == nil || rep.Shuffle.N != 50 || rep.Shuffle.Mean > rep.L {
			t.Errorf("%s: shuffle %+v (observed L %v)", det, rep.Shuffle, rep.L)
		}
		if rep.Repairs == nil || len(rep.Repairs.PerSource) != 3 {
			t.Errorf("%s: repairs %+v", det, rep.Repairs)
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Errorf("%s: JSON: %v", det, err)
		}
		line := rep.Line()
		for _, want := range []string{"headline", "source-only", "L ", "floor 0.65", "verdict: " + rep.Verdict, "signal,noise"} {
			if !strings.Contains(line, want) {
				t.Errorf("%s: line lacks %q: %s", det, want, line)
			}
		}
		t.Logf("%s: %s", det, line)
		switch det {
		case DetectorFixed:
			if rep.Headline != rep.MeasurementsOnly {
				t.Errorf("fixed: headline %v != measurements-only %v", rep.Headline, rep.MeasurementsOnly)
			}
		case DetectorRF, DetectorLogReg:
			// The source carries signal here, so seeing it helps.
			if rep.Headline <= rep.MeasurementsOnly {
				t.Errorf("%s: headline %v ≤ measurements-only %v", det, rep.Headline, rep.MeasurementsOnly)
			}
		case DetectorEach:
			if rep.MeasurementsMin > rep.MeasurementsOnly || rep.MeasurementsOnly != rep.Single[0].AUC {
				t.Errorf("each: range %v..%v, single %v", rep.MeasurementsMin, rep.MeasurementsOnly, rep.Single)
			}
		}
	}
}

func TestRunSeeded(t *testing.T) {
	rows := synth(600, []float64{0.7, 0.3}, 1, 4)
	o := quick()
	o.Detector = DetectorRF
	a, _ := Run(rows, []string{"a", "b"}, o)
	o.Workers = 1
	b, _ := Run(rows, []string{"a", "b"}, o)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("same seed, different worker count: different reports")
	}
	o.Seed = 99
	c, _ := Run(rows, []string{"a", "b"}, o)
	if c.CI95 == a.CI95 {
		t.Error("a different seed gave the same interval")
	}
}

// The five-judges design: every source has the same yes-rate, so the tag
// sits at the coin flip and the half-and-half headline ranks rows exactly as
// the measurement does.
func TestRunEqualRatesSourceCarriesNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var rows []Row
	for k := range 5 {
		for i := range 200 {
			y := i < 124 // 62% yes in every source
			m := r.NormFloat64()
			if y {
				m += 1.2
			}
			rows = append(rows, Row{y, fmt.Sprint("judge", k), []float64{m}})
		}
	}
	o := quick()
	rep, err := Run(rows, []string{"grade"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.SourceOnly != 0.5 || rep.Headline != rep.MeasurementsOnly {
		t.Errorf("source-only %v, headline %v, measurements-only %v", rep.SourceOnly, rep.Headline, rep.MeasurementsOnly)
	}
	if rep.Verdict != VerdictSourceNothing {
		t.Errorf("verdict %q (%s)", rep.Verdict, rep.Line())
	}
}

// Opening RL set: 96 faulty runs in one collection, 21 healthy in three.
// The paper's 1,000 stored tag shuffles give L mean 0.635, 99th percentile
// 0.718 and maximum 0.756. The shuffled source-only scores, which follow from
// the counts alone, have the same shape: divided by one retrained headline
// near 0.89 (below the measurements-only 0.907, as a shuffled tag is noise)
// they land on all three numbers. This is why a trained detector is
// retrained per shuffle.
func TestShuffleOpeningRL(t *testing.T) {
	rows := rowsFromCounts([]string{"openrlhf_fault", "openrlhf_baseline", "dapo_verl", "deepscaler_verl"},
		[]int{96, 0, 0, 0}, []int{0, 11, 5, 5})
	d, err := validate(rows, []string{"m"})
	if err != nil {
		t.Fatal(err)
	}
	o := withDefaults(DefaultOptions())
	o.Detector = DetectorFixed // headline unchanged: L is the shuffled source-only score
	rep := &Report{Headline: 1, SourceOnly: 1, L: 1}
	s := d.shuffle(rep, o, nil)
	implied := s.Mean / 0.635
	t.Logf("shuffled source-only: mean %.3f p99 %.3f max %.3f; implied shuffled headline %.3f", s.Mean, s.P99, s.Max, implied)
	if implied < 0.85 || implied > 0.907 {
		t.Errorf("implied shuffled headline %.3f", implied)
	}
	if p99 := s.P99 / implied; math.Abs(p99-0.718) > 0.01 {
		t.Errorf("scaled 99th percentile %.3f, paper 0.718", p99)
	}
	if mx := s.Max / implied; math.Abs(mx-0.756) > 0.02 {
		t.Errorf("scaled maximum %.3f, paper 0.756", mx)
	}
}

// With measurements that carry the label, a logistic-regression audit of
// an opening-RL-shaped set retrains per shuffle: the shuffled headline drops
// towards measurements-only, and the observed L of 1.000 sits far above.
func TestShuffleRetrainLogReg(t *testing.T) {
	rows := rowsFromCounts([]string{"fault", "baseline", "dapo", "deepscaler"}, []int{96, 0, 0, 0}, []int{0, 11, 5, 5})
	r := rand.New(rand.NewPCG(2, 2))
	for i := range rows {
		m := r.NormFloat64()
		if rows[i].Label {
			m += 2
		}
		rows[i].Measurements = []float64{m}
	}
	o := quick()
	o.Detector = DetectorLogReg
	o.Shuffles = 200
	rep, err := Run(rows, []string{"m"}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Line())
	if rep.SourceOnly != 1 || !strings.HasPrefix(rep.Shuffle.Headline, "recomputed") || rep.Shuffle.Max >= rep.L || rep.Shuffle.N != 200 {
		t.Errorf("source-only %v, shuffle %+v", rep.SourceOnly, rep.Shuffle)
	}
}

func TestRunDegenerate(t *testing.T) {
	o := quick()
	one := []Row{{true, "a", []float64{1}}, {false, "a", []float64{0}}}
	rep, err := Run(one, []string{"m"}, o)
	if err != nil || rep.Verdict != VerdictNotPooled || !strings.Contains(rep.Line(), "not pooled") {
		t.Errorf("one source: %v %q %q", err, rep.Verdict, rep.Line())
	}
	allYes := []Row{{true, "a", []float64{1}}, {true, "b", []float64{0}}}
	if rep, err := Run(allYes, []string{"m"}, o); err != nil || !strings.Contains(rep.Skip, "one class") {
		t.Errorf("one class: %v %q", err, rep.Skip)
	}
	bad := []struct {
		name  string
		rows  []Row
		names []string
		det   string
		want  string
	}{
		{"no rows", nil, []string{"m"}, "", "no rows"},
		{"no measurements", one, nil, "", "no measurements"},
		{"NaN", []Row{{true, "a", []float64{math.NaN()}}, {false, "b", []float64{0}}}, []string{"m"}, "", `row 1 measurement "m" is NaN`},
		{"missing", []Row{{true, "a", []float64{1}}, {false, "b", nil}}, []string{"m"}, "", "row 2 has 0 measurements"},
		{"empty source", []Row{{true, "", []float64{1}}}, []string{"m"}, "", "empty source"},
		{"detector", []Row{{true, "a", []float64{1}}, {false, "b", []float64{0}}}, []string{"m"}, "svm", "unknown detector"},
		{"too few for folds", []Row{{true, "a", []float64{1}}, {false, "b", []float64{0}}}, []string{"m"}, DetectorRF, "fewer folds"},
	}
	for _, c := range bad {
		oo := o
		oo.Detector = c.det
		_, err := Run(c.rows, c.names, oo)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	// A source with one class is audited, with a warning.
	rows := rowsFromCounts([]string{"fault", "base", "other"}, []int{30, 0, 3}, []int{0, 20, 4})
	rep, err = Run(rows, []string{"m"}, o)
	if err != nil || rep.SourceOnly != rep.SourceOnly || len(rep.Warnings) < 2 {
		t.Errorf("single-class sources: %v, warnings %v", err, rep.Warnings)
	}
}

// The merge-based half-and-half AUC used under shuffles equals the AUC of
// the ratings sorted outright, with ties across and within sources, with
// coarse and fine measurements, and with source counts that do and do not
// fill the merge tree (1 to 70 sources).
func TestMeanHalfSorterMatchesROCAUC(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for trial := 0; trial < 60; trial++ {
		n := 20 + r.IntN(300)
		sources := 1 + r.IntN(6)
		if trial%3 == 2 {
			sources = 1 + r.IntN(70)
		}
		rows := make([]Row, n)
		for i := range rows {
			// coarse values so ties occur across and within sources
			m := []float64{float64(r.IntN(4)), float64(r.IntN(3))}
			if trial%2 == 1 {
				m = []float64{r.Float64(), r.NormFloat64()}
			}
			rows[i] = Row{r.IntN(3) == 0, fmt.Sprint(r.IntN(sources)), m}
		}
		rows[0].Label, rows[1].Label = true, false
		d, err := validate(rows, []string{"a", "b"})
		if err != nil {
			t.Fatal(err)
		}
		m := newMeanHalfSorter(d)
		sc := m.scratch(len(d.sources))
		tags := make([]int32, n)
		for p, i := range m.order {
			tags[p] = int32(d.src[i])
		}
		got := m.auc(tags, d.pos, d.neg, sc)
		want := pairsGame(d.y, d.meanHalf(d.src, d.pos, d.neg))
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: merge %v, pairs game %v", trial, got, want)
		}
	}
}

func TestOptionsCheck(t *testing.T) {
	if err := DefaultOptions().Check(); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
	for _, c := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.ShuffleRetrain = "sometimes" }, "--shuffle-retrain"},
		{func(o *Options) { o.Floor = 1 }, "floor"},
		{func(o *Options) { o.Band = 0 }, "band"},
		{func(o *Options) { o.CoinFlip = -0.1 }, "coin-flip"},
		{func(o *Options) { o.Bootstrap = -1 }, "--bootstrap"},
		{func(o *Options) { o.Detector, o.Folds = DetectorRF, 1 }, "--folds"},
	} {
		o := DefaultOptions()
		c.set(&o)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error naming %s, got %v", c.want, err)
		}
	}
	o := DefaultOptions()
	o.Folds = 1 // the fixed rating trains nothing
	if err := o.Check(); err != nil {
		t.Errorf("mean-half with one fold refused: %v", err)
	}
}
