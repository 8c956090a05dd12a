package workflows

import (
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
	// Elo is the recomputed ranking of each leaderboard version, when a
	// row was appended.
	Elo *activities.EloSummary `json:"elo,omitempty"`
}

// LeaderboardRefresh re-runs the configured models whose pins changed since
// their last leaderboard row (each as a child EvalRun), appends their rows
// and, when any row was appended, recomputes the leaderboard's Elo. Runs go
// one after another: one model server is the usual bottleneck.
func LeaderboardRefresh(ctx workflow.Context, in activities.RefreshInput) (LeaderboardRefreshResult, error) {
	cpu := cpuOptions(ctx)
	var plan activities.RefreshPlan
	if err := workflow.ExecuteActivity(cpu, a.PlanRefresh, in).Get(ctx, &plan); err != nil {
		return LeaderboardRefreshResult{}, err
	}
	res := LeaderboardRefreshResult{Current: plan.Current}
	for _, item := range plan.Todo {
		child := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID: "evalrun-" + item.Input.RunID,
			TaskQueue:  TaskQueue,
		})
		var run EvalRunResult
		err := workflow.ExecuteChildWorkflow(child, WorkflowName, EvalRunInput{
			ConfigPath: item.Input.ConfigPath, Model: item.Input.Model, ModelID: item.Input.ModelID, RunID: item.Input.RunID,
		}).Get(ctx, &run)
		if err != nil {
			return res, err
		}
		var path string
		if err := workflow.ExecuteActivity(cpu, a.AppendLeaderboard, activities.AppendInput{
			RunRef: activities.RunRef{RunID: run.RunID, StoreURI: in.StoreURI}, Lang: in.Lang,
		}).Get(ctx, &path); err != nil {
			return res, err
		}
		res.Ran = append(res.Ran, run.RunID)
		res.Appended = append(res.Appended, path)
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
