// Package workflows holds EvalRun, the durable evaluation pipeline. Workflow
// code only orchestrates: it is deterministic (no wall clock, randomness, I/O
// or goroutines) and passes storage keys and small summaries, never items.
package workflows

import (
	"fmt"
	"slices"
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
// audit and aggregate stages always run after the last axis stops.
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
	Limit          int    `json:"limit,omitempty"`            // overrides run.limit: every dataset read to at most this many rows
	// AllowNewModel resumes a run whose model changed by starting its
	// unfinished axes over on the new model (stated in the notes).
	AllowNewModel bool `json:"allow_new_model,omitempty"`
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
	// Child is the InferAxis workflow running the axis's inference, whose
	// own progress query counts its answered items (see QueryProgress).
	Child string `json:"child,omitempty"`
}

// Progress is the answer to the progress query.
type Progress struct {
	RunID string         `json:"run_id"`
	Stage string         `json:"stage"`
	Axes  []AxisProgress `json:"axes"`
}

// a is used only to name activity methods; workers register a real value.
var a *activities.Activities

// evalRun is one EvalRun execution: what it learned so far and the progress
// the query reports. Each method is one step of the pipeline.
type evalRun struct {
	in       EvalRunInput
	prog     Progress
	plan     activities.Plan
	ref      activities.RunRef
	wall     time.Duration // the global budget
	deadline time.Time

	dedup    activities.DedupCounts
	outcomes []activities.AxisOutcome
	skipped  []activities.Skip
	notes    []string

	pipelined bool // axes run as a pipeline: InferAxis children signal their tail
}

// EvalRun scores one model on the configured axes.
func EvalRun(ctx workflow.Context, in EvalRunInput) (EvalRunResult, error) {
	r := &evalRun{in: in}
	r.prog = Progress{RunID: in.RunID, Stage: StagePrepare}
	if r.prog.RunID == "" {
		r.prog.RunID = workflow.GetInfo(ctx).WorkflowExecution.ID
	}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return r.prog, nil }); err != nil {
		return EvalRunResult{}, err
	}
	start := workflow.Now(ctx)
	if err := r.prepare(ctx); err != nil {
		return EvalRunResult{}, err
	}
	r.deadline = start.Add(r.wall)
	if err := r.screenAndDedup(ctx); err != nil {
		return EvalRunResult{}, err
	}
	if err := r.runAxes(ctx); err != nil {
		return EvalRunResult{}, err
	}
	return r.aggregate(ctx)
}

// prepare loads the config and items (Prepare) and publishes what the run
// is in the progress query, the memo and the search attributes.
func (r *evalRun) prepare(ctx workflow.Context) error {
	err := workflow.ExecuteActivity(stage(ctx, cpuPreset(0), "prepare"), a.Prepare, activities.PrepareInput{
		RunID: r.prog.RunID, ConfigPath: r.in.ConfigPath, ConfigYAML: r.in.Config, Model: r.in.Model, ModelID: r.in.ModelID,
		JudgeOverlay: r.in.JudgeOverlay, ChatTemplate: r.in.ChatTemplate, Limit: r.in.Limit, AllowNewModel: r.in.AllowNewModel,
	}).Get(ctx, &r.plan)
	if err != nil {
		return err
	}
	r.ref = activities.RunRef{RunID: r.prog.RunID, StoreURI: r.plan.StoreURI}
	r.skipped = append([]activities.Skip(nil), r.plan.Skipped...)
	r.wall = time.Duration(r.plan.MaxWallSeconds) * time.Second
	if r.in.MaxWallSeconds > 0 {
		r.wall = time.Duration(r.in.MaxWallSeconds) * time.Second
	}
	if r.wall <= aggregateReserve {
		return activities.ConfigError("max_wall_seconds %d is at or below the %d s kept back for scoring and aggregation: no axis would get any time",
			int(r.wall/time.Second), config.AggregateReserveSeconds)
	}
	axisNames := make([]string, len(r.plan.Axes))
	for i, ax := range r.plan.Axes {
		axisNames[i] = ax.Name
		r.prog.Axes = append(r.prog.Axes, AxisProgress{Axis: ax.Name, Total: ax.Items, Stage: StagePending})
	}
	configured := slices.Clone(axisNames)
	for _, s := range r.plan.Skipped {
		r.prog.Axes = append(r.prog.Axes, AxisProgress{Axis: s.Axis, Stage: StageSkipped})
		configured = append(configured, s.Axis)
	}
	// The memo lets operators find and read runs in the Temporal UI.
	if err := workflow.UpsertMemo(ctx, map[string]any{
		"model_id": r.plan.ModelID, "bench_version": r.plan.BenchVersion, "axes": axisNames, "config_hash": r.plan.ConfigHash,
	}); err != nil {
		return err
	}
	return r.upsertSearchAttributes(ctx, configured)
}

// dedupCountsVersion marks the change from Dedup, whose result (an item
// count per shard) grew the history with the shards, to DedupCounts;
// histories recorded before it replay Dedup and its whole result.
const dedupCountsVersion = "dedup-counts"

// screenAndDedup screens the corpus, then drops contaminated items and
// shards what is kept (DedupCounts).
func (r *evalRun) screenAndDedup(ctx workflow.Context) error {
	r.prog.Stage = StageDedup
	if err := r.screenCorpus(ctx); err != nil {
		return err
	}
	actx := stage(ctx, screenPreset(r.wall), "dedup")
	if workflow.GetVersion(ctx, dedupCountsVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		var full activities.DedupResult
		err := workflow.ExecuteActivity(actx, a.Dedup, r.ref).Get(ctx, &full)
		r.dedup = activities.CountsOf(full)
		return err
	}
	return workflow.ExecuteActivity(actx, a.DedupCounts, r.ref).Get(ctx, &r.dedup)
}

// axisCounts is what dedup kept of an axis.
func (r *evalRun) axisCounts(axis string) activities.AxisCounts {
	for _, ad := range r.dedup.Axes {
		if ad.Axis == axis {
			return ad
		}
	}
	return activities.AxisCounts{Axis: axis}
}

// axisRun is what one axis left for Aggregate: an outcome, or a skip, and
// the note saying why it stopped early or was skipped.
type axisRun struct {
	out  *activities.AxisOutcome
	skip *activities.Skip
	note string
}

// keep adds an axis's run to what Aggregate reads. Axes are kept in the
// plan's order however they finished, so the pipeline hands Aggregate the
// same input as the sequential loop did.
func (r *evalRun) keep(run axisRun) {
	if run.skip != nil {
		r.skipped = append(r.skipped, *run.skip)
	}
	if run.note != "" {
		r.notes = append(r.notes, run.note)
	}
	if run.out != nil {
		r.outcomes = append(r.outcomes, *run.out)
	}
}

// runAxis runs axis i on its share of what is left of the budget: an equal
// share, so time an axis does not use rolls over to the next. inferred is
// called once the axis's model calls are over (or the axis is skipped).
func (r *evalRun) runAxis(ctx workflow.Context, i int, inferred func()) (axisRun, error) {
	ax, p := r.plan.Axes[i], &r.prog.Axes[i]
	kept := r.axisCounts(ax.Name)
	shards := kept.Shards
	p.Total, p.Shards = kept.Kept, shards
	left := r.deadline.Sub(workflow.Now(ctx)) - aggregateReserve
	budget := left / time.Duration(len(r.plan.Axes)-i)
	if budget <= 0 {
		inferred()
		p.Stage = StageSkipped
		return axisRun{
			skip: &activities.Skip{Axis: ax.Name, Reason: "budget exhausted before the axis started"},
			note: fmt.Sprintf("axis %s skipped: the global budget (%ds) ran out before it started; %d items not scored", ax.Name, int(r.wall/time.Second), p.Total),
		}, nil
	}
	r.prog.Stage = ax.Name
	expired, err := r.infer(ctx, ax, shards, budget, p)
	inferred()
	if err != nil {
		return r.axisFailed(ctx, ax, p, err)
	}
	out, err := r.score(ctx, ax, shards, budget, p)
	if err != nil {
		return r.judgeFailed(ctx, ax, p, err)
	}
	// Only a real stop is a stop: the timer may fire as the last shard
	// finishes, leaving every kept item scored.
	out.StoppedEarly = expired && out.Dropped > 0
	run := axisRun{out: &out}
	p.Stage = StageDone
	if out.StoppedEarly {
		p.Stage = StageStopped
		run.note = fmt.Sprintf("axis %s stopped early at its budget of %s: %d of %d kept items not scored", ax.Name, budget.Round(time.Second), out.Dropped, p.Total)
	}
	p.Done = p.Total - out.Dropped
	return run, nil
}

// pipelineVersion marks the changes to how axes follow one another: from
// one after another (DefaultVersion) to the pipeline with two axes
// inferring at once (1), then three (2). Histories keep what they recorded.
const pipelineVersion = "axis-pipeline"

// inferTailSignal is what an InferAxis child of the pipeline sends EvalRun
// once it has started its last shard (the signal carries the axis name):
// from then on the axis's requests thin out, and the next axis may fill the
// model's empty slots.
const inferTailSignal = "infer-tail"

// maxInferring is how many axes infer at once in the pipeline, by its
// version. Two (an axis in its tail and the next) left the model's slots
// empty whenever the next axis was itself small or in its tail: an axis of
// one shard is in its tail from the start and keeps only model.concurrency
// requests in flight, and a new axis takes a few workflow and activity
// round trips to send its first request. A third keeps requests queued at
// the model while one axis ends and the next begins. More would have axes
// compete for the model through their whole budgets, which are shares of
// the time as if each had it alone.
func maxInferring(version workflow.Version) int {
	if version == 1 {
		return 2
	}
	return 3
}

// runAxes runs every axis: one after another in histories recorded before
// the pipeline; else as a pipeline, so the model is never idle while the
// harness works. Axis i+1's inference starts once axis i has started its
// last shard (or finished inference), with at most maxInferring axes
// inferring at once; each axis's judging, probes, scoring and audit run
// in their own coroutine while later axes infer. Each axis keeps its own
// budget, an equal share of what is left when its inference starts.
func (r *evalRun) runAxes(ctx workflow.Context) error {
	version := workflow.GetVersion(ctx, pipelineVersion, workflow.DefaultVersion, 2)
	if version == workflow.DefaultVersion {
		for i := range r.plan.Axes {
			run, err := r.runAxis(ctx, i, func() {})
			if err != nil {
				return err
			}
			r.keep(run)
		}
		return nil
	}
	atOnce := maxInferring(version)
	r.pipelined = true
	tailed := map[string]bool{}
	tail := workflow.GetSignalChannel(ctx, inferTailSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var axis string
			tail.Receive(ctx, &axis)
			tailed[axis] = true
		}
	})
	n := len(r.plan.Axes)
	runs := make([]axisRun, n)
	inferDone := make([]bool, n)
	var firstErr error
	started, finished, inferring := 0, 0, 0
	for i := range r.plan.Axes {
		if i > 0 {
			prev := r.plan.Axes[i-1].Name
			if err := workflow.Await(ctx, func() bool {
				return firstErr != nil || inferring < atOnce && (inferDone[i-1] || tailed[prev])
			}); err != nil {
				return err
			}
		}
		if firstErr != nil {
			break
		}
		started++
		inferring++
		workflow.Go(ctx, func(ctx workflow.Context) {
			run, err := r.runAxis(ctx, i, func() {
				inferDone[i] = true
				inferring--
			})
			if err != nil && firstErr == nil {
				firstErr = err
			}
			runs[i] = run
			finished++
		})
	}
	if err := workflow.Await(ctx, func() bool { return firstErr != nil || finished == started }); err != nil {
		return err
	}
	if firstErr != nil {
		return firstErr
	}
	for _, run := range runs {
		r.keep(run)
	}
	return nil
}

// axisFailedVersion marks the change that ends an axis whose model fails
// every request alike (activities.ErrModel) with the cause as its note, and
// goes on with the next axis; histories recorded before it fail the run.
const axisFailedVersion = "axis-fails-alone"

// axisFailed is how an axis's inference error ends: a model failing every
// request alike ends the axis (skipped, failed, its cause the note; `run`
// then exits non-zero), any other error fails the run.
func (r *evalRun) axisFailed(ctx workflow.Context, ax activities.AxisPlan, p *AxisProgress, err error) (axisRun, error) {
	cause, ok := activities.ModelFailed(err)
	if !ok || workflow.GetVersion(ctx, axisFailedVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return axisRun{}, err
	}
	return failedAxis(ax, p, cause), nil
}

// judgeFailsAxisVersion marks the change that ends an axis whose judge
// fails every request alike (the Judge activity's ErrModel: NaN, a client
// error, a judge that cannot load) with the cause as its note, as a failed
// model does; before it the Judge activity never failed so.
const judgeFailsAxisVersion = "judge-fails-axis"

// judgeFailed is how an error after inference (judging, scoring, audit)
// ends: a judge failing every request alike ends the axis as failed, with
// the cause as its note (`run` then exits non-zero); any other error fails
// the run.
func (r *evalRun) judgeFailed(ctx workflow.Context, ax activities.AxisPlan, p *AxisProgress, err error) (axisRun, error) {
	cause, ok := activities.ModelFailed(err)
	if !ok || workflow.GetVersion(ctx, judgeFailsAxisVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return axisRun{}, err
	}
	return failedAxis(ax, p, cause), nil
}

// failedAxis is an axis ended by a model or judge failing every request
// alike: skipped as failed, with the cause as its note.
func failedAxis(ax activities.AxisPlan, p *AxisProgress, cause string) axisRun {
	p.Stage = StageFailed
	return axisRun{
		skip: &activities.Skip{Axis: ax.Name, Reason: cause, Failed: true},
		note: fmt.Sprintf("axis %s failed: %s; %d of %d kept items not scored", ax.Name, cause, p.Total, p.Total),
	}
}

// score judges, checks the probes, scores and audits an answered axis.
func (r *evalRun) score(ctx workflow.Context, ax activities.AxisPlan, shards int, budget time.Duration, p *AxisProgress) (activities.AxisOutcome, error) {
	in := activities.ScoreInput{AxisInput: activities.AxisInput{RunRef: r.ref, Axis: ax.Name}, Shards: shards}
	var stageNotes []string
	note := func(st string, preset workflow.ActivityOptions, fn any) error {
		p.Stage = st
		var n activities.StageNote
		if err := workflow.ExecuteActivity(stage(ctx, preset, "%s %s", st, ax.Name), fn, in).Get(ctx, &n); err != nil {
			return err
		}
		stageNotes = append(stageNotes, n.Note)
		return nil
	}
	if ax.Judged {
		p.Stage = StageJudging
		n, err := r.judge(ctx, in, ax.Name, budget)
		if err != nil {
			return activities.AxisOutcome{}, err
		}
		stageNotes = append(stageNotes, n)
	}
	if len(ax.Probes) > 0 {
		if err := note(StageProbes, cpuPreset(r.plan.HeartbeatSecs), a.Probes); err != nil {
			return activities.AxisOutcome{}, err
		}
	}
	p.Stage = StageScoring
	var out activities.AxisOutcome
	if err := workflow.ExecuteActivity(stage(ctx, cpuPreset(r.plan.HeartbeatSecs), "score %s", ax.Name), a.Score, in).Get(ctx, &out); err != nil {
		return activities.AxisOutcome{}, err
	}
	out.StageNotes = stageNotes
	p.Stage = StageAudit
	var au activities.AuditSummary
	if err := workflow.ExecuteActivity(stage(ctx, cpuPreset(r.plan.HeartbeatSecs), "audit %s", ax.Name), a.Audit, in.AxisInput).Get(ctx, &au); err != nil {
		return activities.AxisOutcome{}, err
	}
	out.Audit = &au
	return out, nil
}

// judgeDeadlineVersion marks the change that bounds judging by the global
// deadline; histories recorded before it replay the unbounded judging.
const judgeDeadlineVersion = "judge-bounded-by-deadline"

// judgeStopNoteVersion marks the change that takes the note of a judge stage
// stopped at the deadline from the activity, which counts the responses it
// rated and left unrated, instead of a fixed sentence that said "the rest
// are unrated" even when every response was rated.
const judgeStopNoteVersion = "judge-stop-note"

// judge rates an axis's responses. Judging is bounded by the global deadline
// (less the aggregate reserve): at the deadline it is cancelled, the chunks
// already rated stay checkpointed, and the axis is scored on them.
func (r *evalRun) judge(ctx workflow.Context, in activities.ScoreInput, axis string, budget time.Duration) (string, error) {
	var n activities.StageNote
	if workflow.GetVersion(ctx, judgeDeadlineVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		err := workflow.ExecuteActivity(stage(ctx, judgePreset(budget, r.plan.HeartbeatSecs), "%s %s", StageJudging, axis), a.Judge, in).Get(ctx, &n)
		return n.Note, err
	}
	left := r.deadline.Sub(workflow.Now(ctx)) - aggregateReserve
	if left <= 0 {
		return "judge: not run: the global budget ran out before judging; the axis is scored on no rating", nil
	}
	jctx, cancelJudge := workflow.WithCancel(ctx)
	defer cancelJudge()
	f := workflow.ExecuteActivity(stage(jctx, judgeUntilPreset(left, r.plan.HeartbeatSecs), "%s %s", StageJudging, axis), a.Judge, in)
	tctx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	stopped := false
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(f, func(workflow.Future) {})
	sel.AddFuture(workflow.NewTimerWithOptions(tctx, left, workflow.TimerOptions{Summary: "deadline judging " + axis}), func(t workflow.Future) {
		if t.Get(ctx, nil) == nil {
			stopped = true
			cancelJudge()
		}
	})
	sel.Select(ctx)
	err := f.Get(ctx, &n)
	if stopped && err == nil && workflow.GetVersion(ctx, judgeStopNoteVersion, workflow.DefaultVersion, 1) == 1 {
		return n.Note, nil // the activity's own count of what it rated and left unrated
	}
	if stopped && (err == nil || temporal.IsCanceledError(err)) {
		return fmt.Sprintf("judge: judging stopped at the global deadline (%s left for it): the ratings checkpointed so far are kept and scored, the rest of the responses are unrated", left.Round(time.Second)), nil
	}
	return n.Note, err
}

// aggregate computes the mean scores and writes result.json.
func (r *evalRun) aggregate(ctx workflow.Context) (EvalRunResult, error) {
	r.prog.Stage = StageAggregate
	var summary activities.Summary
	err := workflow.ExecuteActivity(stage(ctx, cpuPreset(r.plan.HeartbeatSecs), "aggregate"), a.Aggregate, activities.AggregateInput{
		RunRef: r.ref, Plan: r.plan, Outcomes: r.outcomes, Skipped: r.skipped, Notes: r.notes,
	}).Get(ctx, &summary)
	if err != nil {
		return EvalRunResult{}, err
	}
	r.prog.Stage = StageDone
	return EvalRunResult{RunID: r.prog.RunID, Summary: summary}, nil
}

func workflowOptions() workflow.RegisterOptions { return workflow.RegisterOptions{Name: WorkflowName} }

// Register registers EvalRun, its ScreenCorpus and InferAxis children and
// LeaderboardRefresh under their public names on a worker.
func Register(w interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
}) {
	w.RegisterWorkflowWithOptions(EvalRun, workflowOptions())
	w.RegisterWorkflowWithOptions(ScreenCorpus, workflow.RegisterOptions{Name: ScreenCorpusName})
	w.RegisterWorkflowWithOptions(InferAxis, workflow.RegisterOptions{Name: InferAxisName})
	w.RegisterWorkflowWithOptions(LeaderboardRefresh, workflow.RegisterOptions{Name: LeaderboardRefreshName})
}
