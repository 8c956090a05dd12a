package workflows

import (
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/scorers"
)

// EvalRun sets the search attributes Prepare found on the namespace, and
// only those: a namespace without them runs without an upsert.
func TestEvalRunUpsertsTheNamespacesSearchAttributes(t *testing.T) {
	for _, tc := range []struct {
		have []string
		want int // attributes set
	}{
		{nil, 0},
		{[]string{"GlossoModelID"}, 1},
		{[]string{"GlossoAxes", "GlossoBenchVersion", "GlossoModelID"}, 3},
	} {
		env := newEnv(t)
		p := plan("knowledge", "nlu")
		p.Skipped = []activities.Skip{{Axis: "mt", Reason: "skipped_no_judge: no judges configured"}}
		p.SearchAttributes = tc.have
		env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
		env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge", "nlu"), nil)
		env.OnActivity("Infer", mock.Anything, mock.Anything).Return(activities.ShardResult{Total: 4, Done: 4}, nil)
		env.OnActivity("Score", mock.Anything, mock.Anything).Return(activities.AxisOutcome{Result: scorers.AxisResult{Axis: "knowledge", Score: score(1)}}, nil)
		env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{}, nil)
		env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(activities.Summary{}, nil)
		var set temporal.SearchAttributes
		upserts := 0
		env.OnUpsertTypedSearchAttributes(mock.Anything).Run(func(args mock.Arguments) {
			upserts++
			set = args.Get(0).(temporal.SearchAttributes)
		}).Return(nil).Maybe()
		env.ExecuteWorkflow(EvalRun, EvalRunInput{ConfigPath: "c.yaml", RunID: "r1"})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if tc.want == 0 {
			if upserts != 0 {
				t.Fatalf("namespace has none, yet %d upserts", upserts)
			}
			continue
		}
		if upserts != 1 || set.Size() != tc.want {
			t.Fatalf("have %v: %d upserts setting %d attributes, want one setting %d", tc.have, upserts, set.Size(), tc.want)
		}
		if v, ok := set.GetKeyword(ModelIDAttribute); !ok || v != "m" {
			t.Fatalf("GlossoModelID = %q, %v", v, ok)
		}
		if tc.want == 3 {
			axes, _ := set.GetKeywordList(AxesAttribute)
			bench, _ := set.GetKeyword(BenchVersionAttribute)
			if len(axes) != 3 || axes[2] != "mt" || bench != "glossobench-v1" {
				t.Fatalf("GlossoAxes = %v (want the configured axes, skipped mt included), GlossoBenchVersion = %q", axes, bench)
			}
		}
	}
}
