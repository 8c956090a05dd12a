package sigtest

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/infra/runfiles"
)

// TestSigtestOfARunAgainstItselfGivesItsHeadlines is issue 14's done-when:
// a run compared with itself has zero deltas and, per axis, A and B equal
// the headline result.json publishes to the last bit, for every axis kind.
// The runs: the quick start's tiny model (testdata/runs, a real run: MCQ
// cloze and generate, IF, NLG, Safety) and a fake run of another model from
// the real scorers (fakerun, its answers shifted).
func TestSigtestOfARunAgainstItselfGivesItsHeadlines(t *testing.T) {
	fake, err := fakerun.WriteRun(t.TempDir(), fakerun.Options{ModelID: "other/model", Shift: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join("..", "..", "..", "testdata", "runs", "quickstart-tiny-llama"), fake} {
		f, err := runfiles.Dir(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := f.Result()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		in, err := ReadInput(dir)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Compare(in, in, nil, 200, 1, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, d := range rep.Axes {
			got[d.Name] = true
			ax := res.Axes[d.Name]
			if ax.Score == nil {
				t.Errorf("%s: axis %s has no published score but was compared", dir, d.Name)
				continue
			}
			if d.A != *ax.Score || d.B != *ax.Score {
				t.Errorf("%s: axis %s (%s): A = %v, B = %v; result.json publishes %v", dir, d.Name, ax.Metric, d.A, d.B, *ax.Score)
			}
			if d.Delta != 0 || d.Lo != 0 || d.Hi != 0 || d.P != 1 {
				t.Errorf("%s: axis %s: delta %v [%v, %v] p %v; want 0 [0, 0] p 1", dir, d.Name, d.Delta, d.Lo, d.Hi, d.P)
			}
			if rep.Statistic[d.Name] != ax.Metric {
				t.Errorf("%s: axis %s: sigtest names statistic %q, the axis publishes %q", dir, d.Name, rep.Statistic[d.Name], ax.Metric)
			}
		}
		for name, ax := range res.Axes {
			if ax.Score != nil && !got[name] {
				t.Errorf("%s: axis %s publishes %v but sigtest left it out", dir, name, *ax.Score)
			}
		}
		// MS sums the same headlines in axis-name order, ms_public in the
		// run's order: equal up to the order of the additions.
		ms := res.Summary.MSPublic
		if ms == nil {
			t.Fatalf("%s: no ms_public", dir)
		}
		if math.Abs(rep.MS.A-*ms) > 1e-15 || rep.MS.A != rep.MS.B || rep.MS.Delta != 0 {
			t.Errorf("%s: MS A = %v, B = %v, delta %v; ms_public %v", dir, rep.MS.A, rep.MS.B, rep.MS.Delta, *ms)
		}
	}
}
