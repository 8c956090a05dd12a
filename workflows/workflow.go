// Package workflows holds EvalRun, the durable evaluation pipeline. Workflow
// code only orchestrates: it is deterministic (no wall clock, randomness, I/O
// or goroutines) and passes storage keys and small summaries, never items.
package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/config"
)

// Task queues: inference activities run next to the GPUs, everything else
// (workflows, scoring, statistics) on the CPU queue.
const (
	TaskQueue          = "glossobench"
	InferenceTaskQueue = "glossobench-inference"
)

// Names a client uses to find and read runs.
const (
	WorkflowName  = "EvalRun"
	ProgressQuery = "progress"
)

// aggregateReserve is kept back from the global budget so the scoring,
// audit and aggregate stages always run after the last axis stops; a budget
// at or below it is refused (config.AggregateReserveSeconds).
const aggregateReserve = config.AggregateReserveSeconds * time.Second

// EvalRunInput is the workflow input: a small JSON document that the CLI and
// `temporal workflow start --input` both send.
type EvalRunInput struct {
	ConfigPath     string `json:"config_path,omitempty"` // a path the workers can read
	Config         string `json:"config,omitempty"`      // or the YAML inline
	Model          string `json:"model,omitempty"`       // model spec; overrides the config
	ModelID        string `json:"model_id,omitempty"`
	RunID          string `json:"run_id,omitempty"`           // default: the workflow id
	MaxWallSeconds int    `json:"max_wall_seconds,omitempty"` // overrides run.max_wall_seconds
	JudgeOverlay   bool   `json:"judge_overlay,omitempty"`    // judges also rate verifiable axes' responses (secondary)
	ChatTemplate   string `json:"chat_template,omitempty"`    // auto | always: apply the model's chat template on the generate path
}

// EvalRunResult is the workflow result.
type EvalRunResult struct {
	RunID   string             `json:"run_id"`
	Summary activities.Summary `json:"summary"`
}

// AxisProgress is one axis in the progress query.
type AxisProgress struct {
	Axis   string `json:"axis"`
	Total  int    `json:"total"`
	Done   int    `json:"done"`
	Shards int    `json:"shards"`
	Stage  string `json:"stage"` // pending | inference | scoring | done | stopped | skipped
}

// Progress is the answer to the progress query.
type Progress struct {
	RunID string         `json:"run_id"`
	Stage string         `json:"stage"`
	Axes  []AxisProgress `json:"axes"`
}

// a is used only to name activity methods; workers register a real value.
var a *activities.Activities

func cpuOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           TaskQueue,
		StartToCloseTimeout: 30 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        time.Minute,
			MaximumAttempts:        20,
			NonRetryableErrorTypes: []string{activities.ErrConfig, activities.ErrData},
		},
	})
}

// EvalRun scores one model on the configured axes.
func EvalRun(ctx workflow.Context, in EvalRunInput) (EvalRunResult, error) {
	runID := in.RunID
	if runID == "" {
		runID = workflow.GetInfo(ctx).WorkflowExecution.ID
	}
	prog := &Progress{RunID: runID, Stage: "prepare"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return *prog, nil }); err != nil {
		return EvalRunResult{}, err
	}
	start := workflow.Now(ctx)
	cpu := cpuOptions(ctx)

	var plan activities.Plan
	err := workflow.ExecuteActivity(cpu, a.Prepare, activities.PrepareInput{
		RunID: runID, ConfigPath: in.ConfigPath, ConfigYAML: in.Config, Model: in.Model, ModelID: in.ModelID,
		JudgeOverlay: in.JudgeOverlay, ChatTemplate: in.ChatTemplate,
	}).Get(ctx, &plan)
	if err != nil {
		return EvalRunResult{}, err
	}
	axisNames := make([]string, len(plan.Axes))
	for i, ax := range plan.Axes {
		axisNames[i] = ax.Name
		prog.Axes = append(prog.Axes, AxisProgress{Axis: ax.Name, Total: ax.Items, Stage: "pending"})
	}
	for _, s := range plan.Skipped {
		prog.Axes = append(prog.Axes, AxisProgress{Axis: s.Axis, Stage: "skipped"})
	}
	// The memo lets operators find and read runs in the Temporal UI.
	if err := workflow.UpsertMemo(ctx, map[string]any{
		"model_id": plan.ModelID, "bench_version": plan.BenchVersion, "axes": axisNames, "config_hash": plan.ConfigHash,
	}); err != nil {
		return EvalRunResult{}, err
	}

	wall := plan.MaxWallSeconds
	if in.MaxWallSeconds > 0 {
		wall = in.MaxWallSeconds
	}
	if time.Duration(wall)*time.Second <= aggregateReserve {
		return EvalRunResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"max_wall_seconds %d is at or below the %d s kept back for scoring and aggregation: no axis would get any time", wall, config.AggregateReserveSeconds), activities.ErrConfig, nil)
	}
	deadline := start.Add(time.Duration(wall) * time.Second)
	ref := activities.RunRef{RunID: runID, StoreURI: plan.StoreURI}

	prog.Stage = "dedup"
	// Screening a large corpus takes long: it may use the whole budget and
	// heartbeats its shard offsets, so a dead worker is noticed in minutes.
	dedupCtx := workflow.WithActivityOptions(cpu, workflow.ActivityOptions{
		TaskQueue:           TaskQueue,
		StartToCloseTimeout: time.Duration(wall) * time.Second,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{NonRetryableErrorTypes: []string{activities.ErrConfig, activities.ErrData}},
	})
	if err := screenCorpus(ctx, dedupCtx, ref, plan); err != nil {
		return EvalRunResult{}, err
	}
	var dd activities.DedupResult
	if err := workflow.ExecuteActivity(dedupCtx, a.Dedup, ref).Get(ctx, &dd); err != nil {
		return EvalRunResult{}, err
	}
	shards := map[string][]int{}
	for _, ad := range dd.Axes {
		shards[ad.Axis] = ad.Shards
	}

	var outcomes []activities.AxisOutcome
	skipped := append([]activities.Skip(nil), plan.Skipped...)
	var notes []string
	for i, ax := range plan.Axes {
		p := &prog.Axes[i]
		p.Total, p.Shards = sum(shards[ax.Name]), len(shards[ax.Name])
		// Each axis gets an equal share of what is left; time an axis does not
		// use rolls over to the next.
		left := deadline.Sub(workflow.Now(ctx)) - aggregateReserve
		budget := left / time.Duration(len(plan.Axes)-i)
		if budget <= 0 {
			p.Stage = "skipped"
			skipped = append(skipped, activities.Skip{Axis: ax.Name, Reason: "budget exhausted before the axis started"})
			notes = append(notes, fmt.Sprintf("axis %s skipped: the global budget (%ds) ran out before it started; %d items not scored", ax.Name, wall, p.Total))
			continue
		}
		prog.Stage = ax.Name
		out, err := runAxis(ctx, plan, ref, ax, shards[ax.Name], budget, deadline, p)
		if err != nil {
			return EvalRunResult{}, err
		}
		if out.StoppedEarly {
			notes = append(notes, fmt.Sprintf("axis %s stopped early at its budget of %s: %d of %d kept items not scored", ax.Name, budget.Round(time.Second), out.Dropped, p.Total))
		}
		outcomes = append(outcomes, out)
	}

	prog.Stage = "aggregate"
	var summary activities.Summary
	err = workflow.ExecuteActivity(cpu, a.Aggregate, activities.AggregateInput{
		RunRef: ref, Plan: plan, Dedup: dd, Outcomes: outcomes, Skipped: skipped, Notes: notes,
	}).Get(ctx, &summary)
	if err != nil {
		return EvalRunResult{}, err
	}
	prog.Stage = "done"
	return EvalRunResult{RunID: runID, Summary: summary}, nil
}

// screenCorpus fans the corpus shards out to ScreenShard activities on any
// number of workers, parallel_shards at a time.
func screenCorpus(ctx, actx workflow.Context, ref activities.RunRef, plan activities.Plan) error {
	sel := workflow.NewSelector(ctx)
	var firstErr error
	next, inflight := 0, 0
	for next < plan.CorpusShards || inflight > 0 {
		for next < plan.CorpusShards && inflight < max(plan.ParallelShards, 1) && firstErr == nil {
			f := workflow.ExecuteActivity(actx, a.ScreenShard, activities.ShardInput{RunRef: ref, Shard: next})
			next++
			inflight++
			sel.AddFuture(f, func(f workflow.Future) {
				inflight--
				if err := f.Get(ctx, nil); err != nil && firstErr == nil {
					firstErr = err
				}
			})
		}
		if inflight == 0 {
			break
		}
		sel.Select(ctx)
	}
	return firstErr
}

// runAxis runs one axis: inference over its shards raced against the axis
// budget, then judging, probes, scoring and the audit. When the budget timer
// fires the in-flight shards are cancelled; they checkpoint what they answered
// and the axis is scored on that.
func runAxis(ctx workflow.Context, plan activities.Plan, ref activities.RunRef, ax activities.AxisPlan, shards []int, budget time.Duration, deadline time.Time, p *AxisProgress) (activities.AxisOutcome, error) {
	p.Stage = "inference"
	inferCtx, cancelInfer := workflow.WithCancel(ctx)
	defer cancelInfer()
	inferCtx = workflow.WithActivityOptions(inferCtx, workflow.ActivityOptions{
		TaskQueue:           InferenceTaskQueue,
		StartToCloseTimeout: budget + time.Minute,
		HeartbeatTimeout:    time.Duration(max(plan.HeartbeatSecs, 5)) * time.Second,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        30 * time.Second,
			NonRetryableErrorTypes: []string{activities.ErrConfig, activities.ErrData},
		},
	})
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	timer := workflow.NewTimer(timerCtx, budget)

	expired := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(timer, func(f workflow.Future) {
		if f.Get(ctx, nil) == nil {
			expired = true
			cancelInfer()
		}
	})
	var firstErr error
	next, inflight := 0, 0
	parallel := max(plan.ParallelShards, 1)
	for next < len(shards) || inflight > 0 {
		for !expired && next < len(shards) && inflight < parallel {
			shard := next
			next++
			inflight++
			f := workflow.ExecuteActivity(inferCtx, a.Infer, activities.ShardInput{RunRef: ref, Axis: ax.Name, Shard: shard})
			sel.AddFuture(f, func(f workflow.Future) {
				inflight--
				var r activities.ShardResult
				if err := f.Get(ctx, &r); err != nil {
					if !temporal.IsCanceledError(err) && firstErr == nil {
						firstErr = err
					}
					return
				}
				p.Done += r.Done
			})
		}
		if expired && next < len(shards) {
			next = len(shards) // never start a shard after the budget ran out
		}
		if inflight == 0 {
			break
		}
		sel.Select(ctx)
		if firstErr != nil && !expired {
			cancelInfer()
		}
	}
	cancelTimer()
	if firstErr != nil && !expired {
		return activities.AxisOutcome{}, fmt.Errorf("axis %s: inference: %w", ax.Name, firstErr)
	}

	cpu := cpuOptions(ctx)
	axisRef := activities.AxisInput{RunRef: ref, Axis: ax.Name}
	var stageNotes []string
	if ax.Judged {
		p.Stage = "judging"
		note, err := judge(ctx, axisRef, len(shards), budget, deadline)
		if err != nil {
			return activities.AxisOutcome{}, err
		}
		stageNotes = append(stageNotes, note)
	}
	if len(ax.Probes) > 0 {
		p.Stage = "probes"
		var n activities.StageNote
		if err := workflow.ExecuteActivity(cpu, a.Probes, activities.ScoreInput{AxisInput: axisRef, Shards: len(shards)}).Get(ctx, &n); err != nil {
			return activities.AxisOutcome{}, err
		}
		stageNotes = append(stageNotes, n.Note)
	}
	p.Stage = "scoring"
	var out activities.AxisOutcome
	if err := workflow.ExecuteActivity(cpu, a.Score, activities.ScoreInput{AxisInput: axisRef, Shards: len(shards)}).Get(ctx, &out); err != nil {
		return activities.AxisOutcome{}, err
	}
	// Only a real stop is a stop: the timer may fire as the last shard
	// finishes, leaving every kept item scored.
	out.StoppedEarly = expired && out.Dropped > 0
	out.StageNotes = stageNotes
	p.Stage = "audit"
	var au activities.AuditSummary
	if err := workflow.ExecuteActivity(cpu, a.Audit, axisRef).Get(ctx, &au); err != nil {
		return activities.AxisOutcome{}, err
	}
	out.Audit = &au
	p.Stage = "done"
	if out.StoppedEarly {
		p.Stage = "stopped"
	}
	p.Done = p.Total - out.Dropped
	return out, nil
}

// judgeDeadlineVersion marks the change that bounds judging by the global
// deadline; histories recorded before it replay the unbounded judging.
const judgeDeadlineVersion = "judge-bounded-by-deadline"

// judge rates an axis's responses. Judging is bounded by the global deadline
// (less the aggregate reserve): at the deadline it is cancelled, the chunks
// already rated stay checkpointed, and the axis is scored on them.
func judge(ctx workflow.Context, axisRef activities.AxisInput, shards int, budget time.Duration, deadline time.Time) (string, error) {
	in := activities.ScoreInput{AxisInput: axisRef, Shards: shards}
	retry := &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrConfig, activities.ErrData}}
	var n activities.StageNote
	if workflow.GetVersion(ctx, judgeDeadlineVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		judgeCtx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: InferenceTaskQueue, StartToCloseTimeout: max(budget, time.Hour), HeartbeatTimeout: 5 * time.Minute, RetryPolicy: retry,
		})
		err := workflow.ExecuteActivity(judgeCtx, a.Judge, in).Get(ctx, &n)
		return n.Note, err
	}
	left := deadline.Sub(workflow.Now(ctx)) - aggregateReserve
	if left <= 0 {
		return "judge: not run: the global budget ran out before judging; the axis is scored on no rating", nil
	}
	jctx, cancelJudge := workflow.WithCancel(ctx)
	defer cancelJudge()
	jctx = workflow.WithActivityOptions(jctx, workflow.ActivityOptions{
		TaskQueue: InferenceTaskQueue, StartToCloseTimeout: left + time.Minute, HeartbeatTimeout: 5 * time.Minute,
		WaitForCancellation: true, RetryPolicy: retry,
	})
	f := workflow.ExecuteActivity(jctx, a.Judge, in)
	tctx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	stopped := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(f, func(workflow.Future) {})
	sel.AddFuture(workflow.NewTimer(tctx, left), func(t workflow.Future) {
		if t.Get(ctx, nil) == nil {
			stopped = true
			cancelJudge()
		}
	})
	sel.Select(ctx)
	err := f.Get(ctx, &n)
	if stopped && (err == nil || temporal.IsCanceledError(err)) {
		return fmt.Sprintf("judge: judging stopped at the global deadline (%s left for it): the ratings checkpointed so far are kept and scored, the rest of the responses are unrated", left.Round(time.Second)), nil
	}
	return n.Note, err
}

func sum(x []int) int {
	t := 0
	for _, v := range x {
		t += v
	}
	return t
}

func workflowOptions() workflow.RegisterOptions { return workflow.RegisterOptions{Name: WorkflowName} }

// Register registers EvalRun and LeaderboardRefresh under their public names on a worker.
func Register(w interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
}) {
	w.RegisterWorkflowWithOptions(EvalRun, workflowOptions())
	w.RegisterWorkflowWithOptions(LeaderboardRefresh, workflow.RegisterOptions{Name: LeaderboardRefreshName})
}
