package workflows

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/config"
)

// InferAxisName is the child workflow that runs an axis's Infer shards.
const InferAxisName = "InferAxis"

// inferChildVersion marks the change that moved an axis's Infer fan-out
// into an InferAxis child; histories recorded before it replay the fan-out
// in EvalRun's own history.
const inferChildVersion = "infer-axis-child"

// inferRunShards is how many shards one run of InferAxis starts before it
// continues as new. A shard costs a run at most six history events (the
// activity's three and a workflow task's three; one more if the budget
// cancels it in flight), so a run stays below 1,800 events whatever the
// number of items (on the embedded server a run of 250 shards holds about
// 900), and EvalRun holds one child per axis: an axis of 10^6 items (10,000
// shards of 100) keeps every history far below Temporal's 10,000-event
// warning. run.parallel_shards is at most this many: a run's shards can all
// be in flight at once.
const inferRunShards = config.MaxParallelShards

// InferAxisInput names what is left of an axis's inference: shards
// [Next, Shards) of the run's axis, until Deadline. A continued run carries
// only these counts, never items.
type InferAxisInput struct {
	activities.RunRef
	Axis          string    `json:"axis"`
	Shards        int       `json:"shards"` // the axis's kept shards
	Next          int       `json:"next"`   // the first shard this run starts
	Done          int       `json:"done"`   // items answered in earlier runs
	Parallel      int       `json:"parallel"`
	HeartbeatSecs int       `json:"heartbeat_secs"`
	Deadline      time.Time `json:"deadline"` // the axis's budget ends here
	// TailSignal asks the child to signal its parent (inferTailSignal) when
	// it starts its last shard; EvalRun's pipeline then starts the next axis.
	TailSignal bool `json:"tail_signal,omitempty"`
}

// InferAxisResult is how an axis's inference ended: the items answered,
// and whether the budget ran out first.
type InferAxisResult struct {
	Done    int  `json:"done"`
	Expired bool `json:"expired"`
}

// InferProgress is InferAxis's answer to the progress query.
type InferProgress struct {
	Axis    string `json:"axis"`
	Shards  int    `json:"shards"`
	Started int    `json:"started"` // shards started, in this run and earlier ones
	Done    int    `json:"done"`    // items answered
}

// InferAxis runs an axis's Infer shards parallel at a time until they are
// done or its deadline passes; then the in-flight shards are cancelled and
// checkpoint what they answered. After inferRunShards shards (all of them
// finished: activities do not outlive a run) it continues as new with the
// counts it has, so no run's history grows with the axis.
func InferAxis(ctx workflow.Context, in InferAxisInput) (InferAxisResult, error) {
	prog := InferProgress{Axis: in.Axis, Shards: in.Shards, Started: in.Next, Done: in.Done}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (InferProgress, error) { return prog, nil }); err != nil {
		return InferAxisResult{}, err
	}
	left := in.Deadline.Sub(workflow.Now(ctx))
	if left <= 0 {
		return InferAxisResult{Done: prog.Done, Expired: true}, nil
	}
	to := min(in.Next+inferRunShards, in.Shards)
	var tail workflow.Future // the tail signal sent to the parent
	started := func() {
		prog.Started++
		parent := workflow.GetInfo(ctx).ParentWorkflowExecution
		if in.TailSignal && prog.Started == in.Shards && parent != nil {
			tail = workflow.SignalExternalWorkflow(ctx, parent.ID, "", inferTailSignal, in.Axis)
		}
	}
	expired, err := inferShards(ctx, inferWindow{
		ref: in.RunRef, axis: in.Axis, from: in.Next, to: to, total: in.Shards,
		parallel: in.Parallel, left: left, heartbeatSecs: in.HeartbeatSecs, stopOnCancel: true,
	}, started, func(items int) { prog.Done += items })
	if tail != nil {
		// A parent that is gone or did not wait still learns the end from
		// the child's result: the signal only lets it start sooner.
		_ = tail.Get(ctx, nil)
	}
	switch {
	case err != nil:
		return InferAxisResult{}, err
	case ctx.Err() != nil: // EvalRun was cancelled: do not continue
		return InferAxisResult{}, temporal.NewCanceledError()
	case expired || to == in.Shards:
		return InferAxisResult{Done: prog.Done, Expired: expired}, nil
	}
	next := in
	next.Next, next.Done = to, prog.Done
	return InferAxisResult{}, workflow.NewContinueAsNewError(ctx, InferAxisName, next)
}

// inferWindow is shards [from, to) of an axis of total shards, raced
// against a budget of left.
type inferWindow struct {
	ref             activities.RunRef
	axis            string
	from, to, total int
	parallel        int
	left            time.Duration
	heartbeatSecs   int
	stopOnCancel    bool // start no shard once ctx is cancelled
}

// inferShards runs w's shards as a sliding window raced against a budget
// timer and reports whether the budget ran out. started is called as each
// shard starts, done with each finished shard's answered items. When the
// timer fires the in-flight shards are cancelled; they checkpoint what they
// answered, and a failure after that is no failure of the axis.
func inferShards(ctx workflow.Context, w inferWindow, started func(), done func(items int)) (expired bool, err error) {
	inferCtx, cancelInfer := workflow.WithCancel(ctx)
	defer cancelInfer()
	timerCtx, cancelTimer := workflow.WithCancel(ctx)
	defer cancelTimer()
	timer := workflow.NewTimerWithOptions(timerCtx, w.left, workflow.TimerOptions{Summary: "budget " + w.axis})
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(timer, func(f workflow.Future) {
		if f.Get(ctx, nil) == nil {
			expired = true
			cancelInfer()
		}
	})
	stopped := func() bool { return expired || w.stopOnCancel && ctx.Err() != nil }
	preset := inferPreset(w.left, w.heartbeatSecs)
	err = fanOut(ctx, sel, w.to-w.from, w.parallel, stopped, func(i int) workflow.Future {
		shard := w.from + i
		started()
		sctx := stage(inferCtx, preset, "infer %s shard %d/%d", w.axis, shard+1, w.total)
		return workflow.ExecuteActivity(sctx, a.Infer, activities.ShardInput{RunRef: w.ref, Axis: w.axis, Shard: shard})
	}, func(f workflow.Future) error {
		var res activities.ShardResult
		if err := f.Get(ctx, &res); err != nil {
			if temporal.IsCanceledError(err) {
				return nil
			}
			cancelInfer() // one shard failed for good: the axis fails, stop the rest
			return err
		}
		done(res.Done)
		return nil
	})
	cancelTimer()
	if err != nil && !expired {
		return false, err
	}
	return expired, nil
}

// infer runs the axis's shards against its budget and reports whether the
// budget ran out: in an InferAxis child, or, for runs started before the
// child existed, in EvalRun's own history as they did.
func (r *evalRun) infer(ctx workflow.Context, ax activities.AxisPlan, shards int, budget time.Duration, p *AxisProgress) (expired bool, err error) {
	p.Stage = StageInference
	if workflow.GetVersion(ctx, inferChildVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		expired, err = inferShards(ctx, inferWindow{
			ref: r.ref, axis: ax.Name, to: shards, total: shards,
			parallel: r.plan.ParallelShards, left: budget, heartbeatSecs: r.plan.HeartbeatSecs,
		}, func() {}, func(items int) { p.Done += items })
		if err != nil {
			return false, fmt.Errorf("axis %s: inference: %w", ax.Name, err)
		}
		return expired, nil
	}
	p.Child = fmt.Sprintf("%s-infer-%s", workflow.GetInfo(ctx).WorkflowExecution.ID, ax.Name)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:    p.Child,
		TaskQueue:     TaskQueue,
		StaticSummary: fmt.Sprintf("infer %s: %d shards", ax.Name, shards),
	})
	var res InferAxisResult
	err = workflow.ExecuteChildWorkflow(cctx, InferAxisName, InferAxisInput{
		RunRef: r.ref, Axis: ax.Name, Shards: shards, Parallel: r.plan.ParallelShards,
		HeartbeatSecs: r.plan.HeartbeatSecs, Deadline: workflow.Now(ctx).Add(budget), TailSignal: r.pipelined,
	}).Get(ctx, &res)
	if err != nil {
		return false, fmt.Errorf("axis %s: inference: %w", ax.Name, err)
	}
	p.Done += res.Done
	return res.Expired, nil
}

// QueryProgress asks run wfID for its progress, and the InferAxis child of
// each axis in inference for the items it has answered so far (EvalRun
// learns them only when the child ends: a report per shard would grow its
// history again).
func QueryProgress(ctx context.Context, c client.Client, wfID string) (Progress, error) {
	return progressOf(func(id string) (converter.EncodedValue, error) {
		return c.QueryWorkflow(ctx, id, "", ProgressQuery)
	}, wfID)
}

// progressOf is QueryProgress over a query function.
func progressOf(query func(wfID string) (converter.EncodedValue, error), wfID string) (Progress, error) {
	var p Progress
	v, err := query(wfID)
	if err != nil {
		return p, err
	}
	if err := v.Get(&p); err != nil {
		return p, err
	}
	for i := range p.Axes {
		ax := &p.Axes[i]
		if ax.Stage != StageInference || ax.Child == "" {
			continue
		}
		// A child not started yet answers nothing: EvalRun's count stands.
		var cp InferProgress
		if cv, err := query(ax.Child); err == nil && cv.Get(&cp) == nil {
			ax.Done = cp.Done
		}
	}
	return p, nil
}
