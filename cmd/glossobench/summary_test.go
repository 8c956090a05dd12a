package main

import (
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

// TestPrintSummary: one row per axis in the axes' order with n, score, CI
// and metric; an axis without a score reads n/a, a skipped axis says why;
// the means follow, and the warnings come after the table.
func TestPrintSummary(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	r := &runfiles.Result{Axes: map[string]runfiles.AxisReport{
		"mt":        {AxisResult: scorers.AxisResult{Score: f(0.45), N: 20, CI95: &[2]float64{0.3, 0.6}, Metric: "mean_judge_score_normalized"}},
		"knowledge": {AxisResult: scorers.AxisResult{Score: f(0.23), N: 100, CI95: &[2]float64{0.15, 0.31}, Metric: "accuracy"}},
		"safety":    {AxisResult: scorers.AxisResult{N: 40, Metric: "refusal_on_unsafe"}},
	}}
	r.Summary.MSPublic, r.Summary.MSCI95, r.Summary.MSAxes = f(0.34), &[2]float64{0.2, 0.5}, []string{"knowledge", "mt"}
	r.Summary.MSRanking, r.Summary.MSRankingAxes = f(0.45), []string{"mt"}
	r.Summary.SkippedAxes = []runfiles.Skip{{Axis: "nlg", Reason: "no data"}}
	r.Summary.Warnings = []string{"mt: WARNING 35% of responses hit max_tokens"}
	var b strings.Builder
	printSummary(&b, "demo", r)
	out := b.String()
	t.Logf("\n%s", out)
	want := []string{
		"run demo finished: 2 of 4 axes scored",
		"  axis        n    score   95% CI            headline metric\n",
		"  knowledge   100  0.2300  [0.1500, 0.3100]  accuracy\n",
		"  mt          20   0.4500  [0.3000, 0.6000]  mean_judge_score_normalized\n",
		"  safety      40   n/a     -                 refusal_on_unsafe\n",
		"  nlg         -    -       -                 skipped: no data\n",
		"  ms_public        0.3400  [0.2000, 0.5000]  mean over knowledge, mt\n",
		"  ms_ranking       0.4500                    over mt",
		"warnings:\n  - mt: WARNING 35% of responses hit max_tokens",
	}
	last := -1
	for _, w := range want {
		i := strings.Index(out, w)
		if i < 0 {
			t.Errorf("missing %q", w)
			continue
		}
		if i < last {
			t.Errorf("%q out of order", w)
		}
		last = i
	}
}
