package workflows

import (
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
)

// LeaderboardRefreshName is the refresh workflow's type name; schedules start it.
const LeaderboardRefreshName = "LeaderboardRefresh"

// LeaderboardRefreshResult says what a refresh did.
type LeaderboardRefreshResult struct {
	Ran      []string `json:"ran"`      // run ids evaluated and appended
	Current  []string `json:"current"`  // model ids whose pins had not changed
	Appended []string `json:"appended"` // leaderboard files appended to
	// Failed lists each model that got no row this time, with the reason;
	// it has no row with its pins, so the next refresh tries it again.
	Failed []activities.RefreshFailure `json:"failed,omitempty"`
	// Elo is the recomputed ranking of each leaderboard version, when a
	// row was appended.
	Elo *activities.EloSummary `json:"elo,omitempty"`
	// Anchors are the hashes of the rows appended, kept in this history
	// outside the leaderboard's store (as in each run's folder), so a row
	// edited and re-hashed afterwards is told from the row appended.
	Anchors []activities.RowAnchor `json:"anchors,omitempty"`
}

// LeaderboardRefresh re-runs the configured models whose pins changed since
// their last leaderboard row (each as a child EvalRun, so each run's history
// is its own), appends their rows and, when any row was appended, recomputes
// the leaderboard's Elo. One model's failure is that model's: the others go
// on. Models run max_parallel at a time (default 1: one model server is the
// usual bottleneck).
func LeaderboardRefresh(ctx workflow.Context, in activities.RefreshInput) (LeaderboardRefreshResult, error) {
	cpu := cpuOptions(ctx)
	var plan activities.RefreshPlan
	if err := workflow.ExecuteActivity(cpu, a.PlanRefresh, in).Get(ctx, &plan); err != nil {
		return LeaderboardRefreshResult{}, err
	}
	res := LeaderboardRefreshResult{Current: plan.Current, Failed: plan.Failed}
	type outcome struct {
		path   string
		anchor *activities.RowAnchor
		err    error
	}
	outcomes := make([]outcome, len(plan.Todo))
	sem := workflow.NewSemaphore(ctx, int64(max(in.MaxParallel, 1)))
	wg := workflow.NewWaitGroup(ctx)
	for i, item := range plan.Todo {
		if err := sem.Acquire(ctx, 1); err != nil {
			return res, err
		}
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			defer sem.Release(1)
			path, anchor, err := refreshModel(ctx, in, item)
			outcomes[i] = outcome{path, anchor, err}
		})
	}
	wg.Wait(ctx)
	for i, o := range outcomes {
		item := plan.Todo[i]
		if o.err != nil {
			res.Failed = append(res.Failed, activities.RefreshFailure{ModelID: item.ModelID, RunID: item.Input.RunID, Reason: failureReason(o.err)})
			continue
		}
		res.Ran = append(res.Ran, item.Input.RunID)
		res.Appended = append(res.Appended, o.path)
		if o.anchor != nil {
			res.Anchors = append(res.Anchors, *o.anchor)
		}
	}
	if len(res.Appended) == 0 {
		return res, nil
	}
	var ranked activities.EloSummary
	if err := workflow.ExecuteActivity(cpu, a.RecomputeElo, activities.EloInput{StoreURI: in.StoreURI, Lang: in.Lang}).Get(ctx, &ranked); err != nil {
		return res, err
	}
	res.Elo = &ranked
	return res, nil
}

// anchorVersion marks the change from AppendLeaderboard, which returned the
// leaderboard's path, to AppendLeaderboardRow, which also anchors the row's
// hash in the run's folder and returns it for the refresh's result;
// histories recorded before it replay AppendLeaderboard.
const anchorVersion = "leaderboard-row-anchor"

// refreshModel runs one model as a child EvalRun and appends its row. The
// run's result is read where the run wrote it (its config's store, which the
// child reports); the row goes to the refresh's store.
func refreshModel(ctx workflow.Context, in activities.RefreshInput, item activities.RefreshItem) (string, *activities.RowAnchor, error) {
	child := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID: "evalrun-" + item.Input.RunID,
		TaskQueue:  TaskQueue,
	})
	var run EvalRunResult
	err := workflow.ExecuteChildWorkflow(child, WorkflowName, EvalRunInput{
		ConfigPath: item.Input.ConfigPath, Model: item.Input.Model, ModelID: item.Input.ModelID, RunID: item.Input.RunID,
	}).Get(ctx, &run)
	if err != nil {
		return "", nil, err
	}
	appendIn := activities.AppendInput{
		RunRef:    activities.RunRef{RunID: run.RunID, StoreURI: run.Summary.StoreURI},
		ResultKey: run.Summary.ResultKey, Lang: in.Lang, BoardStoreURI: in.StoreURI,
	}
	if workflow.GetVersion(ctx, anchorVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		var path string
		err = workflow.ExecuteActivity(cpuOptions(ctx), a.AppendLeaderboard, appendIn).Get(ctx, &path)
		return path, nil, err
	}
	var res activities.AppendResult
	err = workflow.ExecuteActivity(cpuOptions(ctx), a.AppendLeaderboardRow, appendIn).Get(ctx, &res)
	return res.Path, res.Anchor, err
}

// failureReason is the innermost cause of err, in one sentence: a child
// run's failure wraps its activity's, which wraps the error that says what
// went wrong.
func failureReason(err error) string {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	msg := err.Error()
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		msg = app.Message()
	}
	msg, _, _ = strings.Cut(strings.TrimSpace(msg), "\n")
	return msg
}
