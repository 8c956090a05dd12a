package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

func plan(axes ...string) activities.Plan {
	p := activities.Plan{RunID: "r1", StoreURI: "/tmp/x", BenchVersion: "glossobench-v1", ModelID: "m",
		MaxWallSeconds: 3600, ParallelShards: 2, HeartbeatSecs: 30}
	for _, a := range axes {
		p.Axes = append(p.Axes, activities.AxisPlan{Name: a, Items: 10, Weight: 1, Tier: "public", ScoringMode: "cloze"})
	}
	return p
}

// dedup is DedupCounts keeping each axis's 10 items in shards of 4, 4 and 2.
func dedup(axes ...string) activities.DedupCounts {
	var d activities.DedupCounts
	for _, a := range axes {
		d.Axes = append(d.Axes, activities.AxisCounts{Axis: a, Kept: 10, Shards: 3})
	}
	return d
}

func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	// The machine may be loaded; a slow test is not a deadlock.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(env)
	var acts *activities.Activities
	for _, fn := range []any{acts.Prepare, acts.DedupCounts, acts.ScreenShard, acts.Infer, acts.Score, acts.Judge, acts.Probes, acts.Audit, acts.Aggregate} {
		env.RegisterActivity(fn)
	}
	return env
}

func score(v float64) *float64 { return &v }

// runEvalRun runs EvalRun of run r1 in env to its end, which must be a success.
func runEvalRun(t *testing.T, env *testsuite.TestWorkflowEnvironment) {
	t.Helper()
	env.ExecuteWorkflow(EvalRun, EvalRunInput{ConfigPath: "c.yaml", RunID: "r1"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
}

// aggregated mocks Aggregate with an empty summary and returns where the
// input it was called with lands.
func aggregated(env *testsuite.TestWorkflowEnvironment) *activities.AggregateInput {
	got := new(activities.AggregateInput)
	env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AggregateInput) (activities.Summary, error) {
		*got = in
		return activities.Summary{}, nil
	})
	return got
}

func TestEvalRunFansOutShardsAndAggregates(t *testing.T) {
	env := newEnv(t)
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(plan("knowledge", "nlu"), nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge", "nlu"), nil)
	inferCalls := map[string]int{}
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		inferCalls[in.Axis]++
		n := []int{4, 4, 2}[in.Shard]
		return activities.ShardResult{Total: n, Done: n}, nil
	})
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScoreInput) (activities.AxisOutcome, error) {
		if in.Shards != 3 {
			t.Errorf("Score got %d shards, want 3", in.Shards)
		}
		return activities.AxisOutcome{Result: scorers.AxisResult{Axis: in.Axis, Score: score(0.5), N: 10}, Weight: 1, Tier: "public"}, nil
	})
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled", Sources: 1}, nil)
	var got activities.AggregateInput
	env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AggregateInput) (activities.Summary, error) {
		got = in
		return activities.Summary{ResultKey: runfiles.ResultKey(in.RunID), MSPublic: score(0.5)}, nil
	})

	runEvalRun(t, env)
	var res EvalRunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if inferCalls["knowledge"] != 3 || inferCalls["nlu"] != 3 {
		t.Fatalf("Infer calls per axis = %v, want 3 each", inferCalls)
	}
	if len(got.Outcomes) != 2 || got.Outcomes[0].StoppedEarly || len(got.Notes) != 0 {
		t.Fatalf("aggregate input = %+v", got)
	}
	if res.Summary.ResultKey != "runs/r1/result.json" {
		t.Fatalf("result key %q", res.Summary.ResultKey)
	}
	v, err := env.QueryWorkflow(ProgressQuery)
	if err != nil {
		t.Fatal(err)
	}
	var p Progress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if p.Stage != "done" || p.Axes[0].Done != 10 || p.Axes[1].Stage != "done" {
		t.Fatalf("progress = %+v", p)
	}
}

// The budget timer fires while shards are still running: each axis stops at
// its share of the budget, keeps what was answered, and the notes say how many
// rows were dropped.
func TestEvalRunBudgetStopsAxisAndKeepsScoredRows(t *testing.T) {
	env := newEnv(t)
	p := plan("knowledge", "nlu")
	p.MaxWallSeconds = 2*60 + 120 // two minutes beyond the aggregate reserve
	p.ParallelShards = 1
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge", "nlu"), nil)
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		if in.Shard == 0 {
			return activities.ShardResult{Total: 4, Done: 4}, nil
		}
		// Shard 1 outlives the budget; it stops when cancelled.
		for {
			select {
			case <-ctx.Done():
				return activities.ShardResult{Total: 4, Done: 1}, ctx.Err()
			case <-time.After(10 * time.Millisecond):
				activity.RecordHeartbeat(ctx, nil)
			}
		}
	}).After(time.Hour)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(activities.AxisOutcome{
		Result: scorers.AxisResult{Axis: "knowledge", Score: score(0.25), N: 5}, Weight: 1, Tier: "public", Dropped: 5}, nil)
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled"}, nil)
	got := aggregated(env)
	runEvalRun(t, env)
	if len(got.Outcomes) != 2 || !got.Outcomes[0].StoppedEarly || !got.Outcomes[1].StoppedEarly {
		t.Fatalf("axes not stopped early: %+v", got.Outcomes)
	}
	notes := strings.Join(got.Notes, "\n")
	for _, want := range []string{"axis knowledge stopped early at its budget of 1m0s", "axis nlu stopped early", "5 of 10 kept items not scored"} {
		if !strings.Contains(notes, want) {
			t.Fatalf("notes lack %q:\n%s", want, notes)
		}
	}
}

// A global budget at or below the aggregate reserve leaves no time for any
// axis: the run is refused with the reserve named, not run with every axis
// silently skipped.
func TestEvalRunBudgetAtReserveIsAnError(t *testing.T) {
	for _, in := range []struct{ plan, input int }{{60, 0}, {3600, 120}} {
		env := newEnv(t)
		p := plan("knowledge", "nlu")
		p.MaxWallSeconds = in.plan
		env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
		env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge", "nlu"), nil)
		env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(activities.Summary{}, nil)
		env.ExecuteWorkflow(EvalRun, EvalRunInput{ConfigPath: "c.yaml", RunID: "r1", MaxWallSeconds: in.input})
		err := env.GetWorkflowError()
		if err == nil || !strings.Contains(err.Error(), "max_wall_seconds") || !strings.Contains(err.Error(), "120 s") {
			t.Errorf("budget %+v: error %v", in, err)
		}
	}
}

// The budget timer fires as the last shard finishes: every kept item was
// scored, so the axis did not stop early and no note says it did.
func TestEvalRunFinishedAxisIsNotStopped(t *testing.T) {
	env := newEnv(t)
	p := plan("knowledge")
	p.MaxWallSeconds = 2*60 + 120
	p.ParallelShards = 3
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge"), nil)
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		n := []int{4, 4, 2}[in.Shard]
		if in.Shard < 2 {
			return activities.ShardResult{Total: n, Done: n}, nil
		}
		<-ctx.Done() // answered everything, cancelled while saving
		return activities.ShardResult{Total: n, Done: n}, ctx.Err()
	}).After(time.Hour)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(activities.AxisOutcome{
		Result: scorers.AxisResult{Axis: "knowledge", Score: score(0.5), N: 10}, Weight: 1, Tier: "public"}, nil)
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled"}, nil)
	got := aggregated(env)
	runEvalRun(t, env)
	if len(got.Outcomes) != 1 || got.Outcomes[0].StoppedEarly || strings.Contains(strings.Join(got.Notes, "\n"), "stopped early") {
		t.Fatalf("outcomes %+v notes %v", got.Outcomes, got.Notes)
	}
}

// Judging that outlasts the global budget is stopped at the deadline, keeps
// what was rated and the axis is still scored; the run does not fail.
func TestEvalRunJudgingBoundedByDeadline(t *testing.T) {
	env := newEnv(t)
	p := plan("mt")
	p.Axes[0].Judged = true
	p.MaxWallSeconds = 30*60 + 120
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("mt"), nil)
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		n := []int{4, 4, 2}[in.Shard]
		return activities.ShardResult{Total: n, Done: n}, nil
	})
	env.OnActivity("Judge", mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.ScoreInput) (activities.StageNote, error) {
		for {
			select {
			case <-ctx.Done():
				return activities.StageNote{}, ctx.Err()
			case <-time.After(10 * time.Millisecond):
				activity.RecordHeartbeat(ctx, nil)
			}
		}
	}).After(10 * time.Hour)
	scored := false
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(context.Context, activities.ScoreInput) (activities.AxisOutcome, error) {
		scored = true
		return activities.AxisOutcome{Result: scorers.AxisResult{Axis: "mt", Score: score(0.5), N: 4}, Weight: 1, Tier: "public"}, nil
	})
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled"}, nil)
	got := aggregated(env)
	runEvalRun(t, env)
	if !scored || len(got.Outcomes) != 1 || !strings.Contains(strings.Join(got.Outcomes[0].StageNotes, "\n"), "judging stopped at the global deadline") {
		t.Fatalf("scored %v, outcomes %+v", scored, got.Outcomes)
	}
}

func TestEvalRunConfigErrorFailsFast(t *testing.T) {
	env := newEnv(t)
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(activities.Plan{}, temporal.NewNonRetryableApplicationError("config c.yaml: axes.knowledge.scoring_mode: must be cloze, generate or both", activities.ErrConfig, nil))
	env.ExecuteWorkflow(EvalRun, EvalRunInput{ConfigPath: "c.yaml", RunID: "r1"})
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "axes.knowledge.scoring_mode") {
		t.Fatalf("error = %v", err)
	}
}

// A configured corpus is screened in parallel ScreenShard activities, all
// finished before Dedup reads their checkpoints.
func TestEvalRunScreensCorpusShardsBeforeDedup(t *testing.T) {
	env := newEnv(t)
	p := plan("knowledge")
	p.CorpusShards = 5
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	screened := map[int]bool{}
	env.OnActivity("ScreenShard", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (int, error) {
		screened[in.Shard] = true
		return 0, nil
	})
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(func(context.Context, activities.RunRef) (activities.DedupCounts, error) {
		if len(screened) != 5 {
			t.Errorf("Dedup ran after %d of 5 corpus shards", len(screened))
		}
		return dedup("knowledge"), nil
	})
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(activities.ShardResult{Total: 4, Done: 4}, nil)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(activities.AxisOutcome{Result: scorers.AxisResult{Axis: "knowledge", Score: score(1)}}, nil)
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{}, nil)
	env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(activities.Summary{}, nil)
	runEvalRun(t, env)
	if len(screened) != 5 {
		t.Fatalf("screened shards %v", screened)
	}
}

// A model that fails every request of an axis (ErrModel, e.g. NaN logits)
// ends that axis on the first Infer attempt with the cause as its note and
// a failed skip; a model that fails only one axis's requests leaves the
// others scored, and the run completes.
func TestEvalRunModelFailureEndsTheAxis(t *testing.T) {
	env := newEnv(t)
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(plan("knowledge", "nlu"), nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge", "nlu"), nil)
	const cause = "model gguf:nan.gguf: item k-1: the model computed NaN or infinite values: logit 0 is NaN; every request fails alike, so it is not retried"
	attempts := 0
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		if in.Axis == "knowledge" {
			attempts++
			return activities.ShardResult{}, temporal.NewNonRetryableApplicationError(cause, activities.ErrModel, nil)
		}
		n := []int{4, 4, 2}[in.Shard]
		return activities.ShardResult{Total: n, Done: n}, nil
	})
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScoreInput) (activities.AxisOutcome, error) {
		if in.Axis == "knowledge" {
			t.Error("the failed axis was scored")
		}
		return activities.AxisOutcome{Result: scorers.AxisResult{Axis: in.Axis, Score: score(0.5), N: 10}, Weight: 1, Tier: "public"}, nil
	})
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{Verdict: "not pooled", Sources: 1}, nil)
	got := aggregated(env)
	runEvalRun(t, env)
	// Shards run two at a time; the first failure cancels the rest.
	if attempts == 0 || attempts > 2 {
		t.Errorf("%d Infer attempts on the failed axis, want 1 or 2 (no retries)", attempts)
	}
	if len(got.Outcomes) != 1 || got.Outcomes[0].Result.Axis != "nlu" {
		t.Fatalf("outcomes %+v, want nlu's only", got.Outcomes)
	}
	want := activities.Skip{Axis: "knowledge", Reason: cause, Failed: true}
	if len(got.Skipped) != 1 || got.Skipped[0] != want {
		t.Fatalf("skipped %+v, want %+v", got.Skipped, want)
	}
	if len(got.Notes) != 1 || got.Notes[0] != "axis knowledge failed: "+cause+"; 10 of 10 kept items not scored" {
		t.Fatalf("notes %q", got.Notes)
	}
	v, err := env.QueryWorkflow(ProgressQuery)
	if err != nil {
		t.Fatal(err)
	}
	var p Progress
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	if p.Axes[0].Stage != StageFailed || p.Axes[1].Stage != StageDone {
		t.Fatalf("progress = %+v", p)
	}
}
