package workflows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/scorers"
)

// span is one activity's run on the test clock.
type span struct {
	kind, axis  string
	shard       int
	start, stop time.Time
}

// timeline records every activity of env (EvalRun's and its children's)
// with its start and end on the test clock.
type timeline struct {
	mu    sync.Mutex
	spans map[string]*span // by workflow id and activity id
}

func record(env *testsuite.TestWorkflowEnvironment) *timeline {
	tl := &timeline{spans: map[string]*span{}}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		var in struct {
			Axis  string `json:"axis"`
			Shard int    `json:"shard"`
		}
		_ = args.Get(&in)
		tl.mu.Lock()
		defer tl.mu.Unlock()
		tl.spans[info.WorkflowExecution.ID+"/"+info.ActivityID] = &span{kind: info.ActivityType.Name, axis: in.Axis, shard: in.Shard, start: env.Now()}
	})
	env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, _ error) {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		if s := tl.spans[info.WorkflowExecution.ID+"/"+info.ActivityID]; s != nil {
			s.stop = env.Now()
		}
	})
	return tl
}

// find returns the spans of an activity kind on an axis.
func (tl *timeline) find(kind, axis string) []span {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []span
	for _, s := range tl.spans {
		if s.kind == kind && s.axis == axis {
			out = append(out, *s)
		}
	}
	return out
}

func firstStart(ss []span) time.Time {
	t := ss[0].start
	for _, s := range ss {
		if s.start.Before(t) {
			t = s.start
		}
	}
	return t
}

func lastStop(ss []span) time.Time {
	t := ss[0].stop
	for _, s := range ss {
		if s.stop.After(t) {
			t = s.stop
		}
	}
	return t
}

// shardStart is when shard n of the spans started.
func shardStart(t *testing.T, ss []span, n int) time.Time {
	for _, s := range ss {
		if s.shard == n {
			return s.start
		}
	}
	t.Fatalf("no shard %d among %+v", n, ss)
	return time.Time{}
}

// Three axes of three shards, two shards in flight, each shard ten minutes,
// scoring half an hour: the axes run as a pipeline. The next axis's
// inference starts as soon as the previous one has started its last shard
// (filling the model's slots its tail leaves empty) and runs while the
// previous is scored and audited; Aggregate gets the outcomes in the plan's
// order. (How many axes infer at once: TestEvalRunPipelineInferringAtOnce.)
func TestEvalRunPipelinesAxes(t *testing.T) {
	env := newEnv(t)
	tl := record(env)
	axes := []string{"knowledge", "nlu", "cultural"}
	p := plan(axes...)
	p.MaxWallSeconds = 6 * 3600 // no budget stops anything here
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup(axes...), nil)
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		n := []int{4, 4, 2}[in.Shard]
		return activities.ShardResult{Total: n, Done: n}, nil
	}).After(10 * time.Minute)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScoreInput) (activities.AxisOutcome, error) {
		return activities.AxisOutcome{Result: scorers.AxisResult{Axis: in.Axis, Score: score(0.5), N: 10}, Weight: 1, Tier: "public"}, nil
	}).After(30 * time.Minute)
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled"}, nil).After(5 * time.Minute)
	got := aggregated(env)
	start := env.Now()
	runEvalRun(t, env)

	var order []string
	for _, o := range got.Outcomes {
		order = append(order, o.Result.Axis)
	}
	if !slices.Equal(order, axes) {
		t.Fatalf("Aggregate got the outcomes of %v, want the plan's order %v", order, axes)
	}
	for i := 1; i < len(axes); i++ {
		prev, next := tl.find("Infer", axes[i-1]), tl.find("Infer", axes[i])
		if len(prev) != 3 || len(next) != 3 {
			t.Fatalf("Infer calls %d and %d, want 3 each", len(prev), len(next))
		}
		began := firstStart(next)
		// Not before the previous axis started its last shard, and then at once.
		if tail := shardStart(t, prev, 2); !began.Equal(tail) {
			t.Errorf("%s's inference began at +%s, want +%s, when %s started its last shard", axes[i], began.Sub(start), tail.Sub(start), axes[i-1])
		}
		// It overlaps the previous axis's scoring and audit.
		audit := tl.find("Audit", axes[i-1])
		if len(audit) != 1 || !began.Before(audit[0].stop) || !began.Before(tl.find("Score", axes[i-1])[0].start) {
			t.Errorf("%s's inference began at +%s, not while %s was scored (audit %+v)", axes[i], began.Sub(start), axes[i-1], audit)
		}
	}
	// One after another the axes took 3 × (20 + 30 + 5) minutes.
	if took := env.Now().Sub(start); took > 80*time.Minute {
		t.Errorf("the run took %s of test time, want the pipeline's 75 minutes", took)
	}
}

// Four axes of one shard each, ten minutes a shard: each is in its tail from
// its start, so only the bound on axes inferring at once holds the next
// back. Runs recorded with the first pipeline (version 1) had two infer at
// once; now three do, so one axis's end and the next's first requests
// overlap a third axis's requests. The fourth starts as the first ends.
func TestEvalRunPipelineInferringAtOnce(t *testing.T) {
	for _, c := range []struct {
		version workflow.Version
		atOnce  int
	}{{1, 2}, {2, 3}} {
		t.Run(fmt.Sprintf("version %d", c.version), func(t *testing.T) {
			env := newEnv(t)
			env.OnGetVersion(pipelineVersion, workflow.DefaultVersion, 2).Return(c.version)
			tl := record(env)
			axes := []string{"knowledge", "nlu", "cultural", "if"}
			p := plan(axes...)
			p.MaxWallSeconds = 6 * 3600
			var counts activities.DedupCounts
			for _, a := range axes {
				counts.Axes = append(counts.Axes, activities.AxisCounts{Axis: a, Kept: 4, Shards: 1})
			}
			env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
			env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(counts, nil)
			env.OnActivity("Infer", mock.Anything, mock.Anything).Return(activities.ShardResult{Total: 4, Done: 4}, nil).After(10 * time.Minute)
			env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScoreInput) (activities.AxisOutcome, error) {
				return activities.AxisOutcome{Result: scorers.AxisResult{Axis: in.Axis, Score: score(0.5), N: 4}, Weight: 1, Tier: "public"}, nil
			})
			env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled"}, nil)
			aggregated(env)
			start := env.Now()
			runEvalRun(t, env)
			for i, a := range axes {
				want := time.Duration(i/c.atOnce) * 10 * time.Minute
				if got := firstStart(tl.find("Infer", a)).Sub(start); got != want {
					t.Errorf("%s's inference began at +%s, want +%s with %d axes inferring at once", a, got, want, c.atOnce)
				}
			}
		})
	}
}

// Budgets stay per axis in the pipeline: each axis gets an equal share of
// what is left when its own inference starts, runs against its own timer
// and is stopped at it, whatever the axis beside it does.
func TestEvalRunPipelineBudgetsPerAxis(t *testing.T) {
	env := newEnv(t)
	tl := record(env)
	p := plan("knowledge", "nlu")
	p.MaxWallSeconds = 40*60 + 120 // forty minutes beyond the aggregate reserve
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge", "nlu"), nil)
	// Shards 0 and 1 take ten minutes; each axis's last shard never ends
	// on its own and stops when its budget cancels it.
	shard := func(n ...int) any {
		return mock.MatchedBy(func(in activities.ShardInput) bool { return slices.Contains(n, in.Shard) })
	}
	env.OnActivity("Infer", mock.Anything, shard(0, 1)).Return(activities.ShardResult{Total: 4, Done: 4}, nil).After(10 * time.Minute)
	env.OnActivity("Infer", mock.Anything, shard(2)).Return(func(ctx context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		<-ctx.Done()
		return activities.ShardResult{Total: 2, Done: 1}, ctx.Err()
	}).After(100 * time.Hour)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScoreInput) (activities.AxisOutcome, error) {
		return activities.AxisOutcome{Result: scorers.AxisResult{Axis: in.Axis, Score: score(0.5), N: 9}, Weight: 1, Tier: "public", Dropped: 1}, nil
	})
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled"}, nil)
	got := aggregated(env)
	start := env.Now()
	runEvalRun(t, env)

	// knowledge: 40 min ÷ 2 axes from +0; nlu starts at +10 (knowledge's
	// last shard) with 30 min left for the one axis still to start.
	notes := strings.Join(got.Notes, "\n")
	for _, want := range []string{"axis knowledge stopped early at its budget of 20m0s", "axis nlu stopped early at its budget of 30m0s"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if began := firstStart(tl.find("Infer", "nlu")).Sub(start); began != 10*time.Minute {
		t.Errorf("nlu's inference began at +%s, want +10m0s, when knowledge started its last shard", began)
	}
	if len(got.Outcomes) != 2 || !got.Outcomes[0].StoppedEarly || !got.Outcomes[1].StoppedEarly {
		t.Fatalf("outcomes %+v", got.Outcomes)
	}
}

// A stage that fails for good after inference fails the run with its
// cause, even while a later axis is inferring.
func TestEvalRunPipelineStageFailureFailsRun(t *testing.T) {
	env := newEnv(t)
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(plan("knowledge", "nlu"), nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge", "nlu"), nil)
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(activities.ShardResult{Total: 4, Done: 4}, nil).After(10 * time.Minute)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScoreInput) (activities.AxisOutcome, error) {
		if in.Axis == "knowledge" {
			return activities.AxisOutcome{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("scores of %s: bad row", in.Axis), activities.ErrData, nil)
		}
		return activities.AxisOutcome{Result: scorers.AxisResult{Axis: in.Axis, Score: score(0.5), N: 10}}, nil
	})
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{}, nil)
	env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(activities.Summary{}, nil)
	env.ExecuteWorkflow(EvalRun, EvalRunInput{ConfigPath: "c.yaml", RunID: "r1"})
	if err := env.GetWorkflowError(); err == nil || !strings.Contains(err.Error(), "scores of knowledge: bad row") {
		t.Fatalf("error = %v", err)
	}
}
