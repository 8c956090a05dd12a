package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/glossobench/glossobench/stats"
)

// goldenAudit is the "audit" case of testdata/audit/golden.json, computed
// with scikit-learn 1.2.1 by testdata/audit/golden.py.
type goldenAudit struct {
	Source                 []int       `json:"source"`
	Y                      []bool      `json:"y"`
	X                      [][]float64 `json:"x"`
	Folds                  []int       `json:"folds"`
	SourceOnly             float64     `json:"source_only"`
	MeanHalfHeadline       float64     `json:"mean_half_headline"`
	MeanHalfMeasOnly       float64     `json:"mean_half_measurements_only"`
	Single                 []float64   `json:"single"`
	HeadlineAP             float64     `json:"headline_average_precision"`
	Reweighted             float64     `json:"reweighted"`
	Level                  float64     `json:"level"`
	PerSource              []float64   `json:"per_source"`
	LogRegHeadline         float64     `json:"logreg_headline"`
	LogRegMeasurementsOnly float64     `json:"logreg_measurements_only"`
}

func TestAuditGoldenSklearn(t *testing.T) {
	b, err := os.ReadFile("../../../testdata/audit/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Audit goldenAudit `json:"audit"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	g := file.Audit
	rows := make([]Row, len(g.Y))
	for i := range rows {
		rows[i] = Row{g.Y[i], fmt.Sprint("s", g.Source[i]), g.X[i]}
	}
	o := DefaultOptions()
	o.Shuffles, o.Bootstrap, o.FingerprintTrees = 0, 0, -1
	rep, err := Run(rows, []string{"m1", "m2"}, o)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.12f, sklearn %.12f", name, got, want)
		}
	}
	check("source-only", rep.SourceOnly, g.SourceOnly, 1e-12)
	check("mean-half headline", rep.Headline, g.MeanHalfHeadline, 1e-12)
	check("mean-half measurements-only", rep.MeasurementsOnly, g.MeanHalfMeasOnly, 1e-12)
	check("headline average precision", rep.HeadlineAP, g.HeadlineAP, 1e-12)
	for j, want := range g.Single {
		check("single "+rep.Single[j].Name, rep.Single[j].AUC, want, 1e-12)
	}
	check("reweighted", *rep.Repairs.Reweighted, g.Reweighted, 1e-9)
	check("level", rep.Repairs.Level, g.Level, 1e-9)
	for _, ps := range rep.Repairs.PerSource {
		var k int
		fmt.Sscanf(ps.Source, "s%d", &k)
		check("per-source "+ps.Source, ps.AUC, g.PerSource[k], 1e-12)
	}

	// Logistic regression out of fold on sklearn's folds: the same optimum,
	// so the same ratings to the solver's tolerance.
	d, err := validate(rows, []string{"m1", "m2"})
	if err != nil {
		t.Fatal(err)
	}
	lo := withDefaults(DefaultOptions())
	lo.Detector = DetectorLogReg
	for _, view := range []struct {
		withSource bool
		want       float64
	}{{true, g.LogRegHeadline}, {false, g.LogRegMeasurementsOnly}} {
		oof, err := d.outOfFold(g.Folds, view.withSource, lo)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := stats.ROCAUC(d.y, oof)
		check(fmt.Sprintf("logreg out of fold (source %v)", view.withSource), got, view.want, 1e-9)
	}
}
