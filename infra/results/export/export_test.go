package export

import (
	"fmt"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

// TestOnlyScoredAxesAreExported: an axis that published no headline is
// left out of both schemas, the others come in name order with their
// metric as lm-eval's "<metric>,none".
func TestOnlyScoredAxesAreExported(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	ms := 0.5
	r := &runfiles.Result{ModelID: "m", BenchVersion: "glossobench-v1", Axes: map[string]runfiles.AxisReport{
		"nlu":       {AxisResult: scorers.AxisResult{Metric: "acc_cloze", Score: v(0.6), N: 3}},
		"knowledge": {AxisResult: scorers.AxisResult{Metric: "acc_generate", Score: v(0.4), N: 5}},
		"safety":    {AxisResult: scorers.AxisResult{Metric: "refusal_on_unsafe"}},
	}}
	r.Summary.MSPublic = &ms
	doc := LMEval(r)
	if len(doc.Results) != 3 || doc.Results["glossobench_nlu"]["acc_cloze,none"] != 0.6 || doc.Results["glossobench"]["ms_public,none"] != 0.5 {
		t.Errorf("lm-eval results %v", doc.Results)
	}
	var names []string
	for _, e := range EveryEvalEver(r, "org", 1)["evaluation_results"].([]map[string]any) {
		names = append(names, e["evaluation_name"].(string))
	}
	if fmt.Sprint(names) != "[glossobench_knowledge glossobench_nlu glossobench]" {
		t.Errorf("every-eval-ever results %v", names)
	}
}
