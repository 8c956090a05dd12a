package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
)

func newRefreshEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *[]string) {
	env := newEnv(t)
	env.RegisterWorkflowWithOptions(LeaderboardRefresh, workflow.RegisterOptions{Name: LeaderboardRefreshName})
	var acts *activities.Activities
	for _, fn := range []any{acts.PlanRefresh, acts.AppendLeaderboard, acts.RecomputeElo} {
		env.RegisterActivity(fn)
	}
	var children []string
	env.OnWorkflow(WorkflowName, mock.Anything, mock.Anything).Return(func(_ workflow.Context, in EvalRunInput) (EvalRunResult, error) {
		children = append(children, in.RunID)
		return EvalRunResult{RunID: in.RunID}, nil
	})
	env.OnActivity("AppendLeaderboard", mock.Anything, mock.Anything).Return("leaderboard/ms/v1/leaderboard.jsonl", nil)
	return env, &children
}

// A refresh runs each model whose pins changed as a child EvalRun, appends
// its row, then recomputes Elo once over the leaderboard.
func TestLeaderboardRefreshRecomputesElo(t *testing.T) {
	env, children := newRefreshEnv(t)
	env.OnActivity("PlanRefresh", mock.Anything, mock.Anything).Return(activities.RefreshPlan{
		Todo:    []activities.RefreshItem{{Input: activities.PrepareInput{RunID: "a-1"}}, {Input: activities.PrepareInput{RunID: "b-1"}}},
		Current: []string{"c"},
	}, nil)
	eloCalls := 0
	env.OnActivity("RecomputeElo", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.EloInput) (activities.EloSummary, error) {
		eloCalls++
		if in.Lang != "ms" || in.StoreURI != "/store" {
			t.Errorf("RecomputeElo input %+v", in)
		}
		return activities.EloSummary{Boards: []activities.EloBoard{{Dir: "leaderboard/ms/v1", Ratings: map[string]float64{"a": 1010, "b": 990}}}}, nil
	})
	env.ExecuteWorkflow(LeaderboardRefresh, activities.RefreshInput{Lang: "ms", StoreURI: "/store"})
	var res LeaderboardRefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(*children) != 2 || len(res.Ran) != 2 || eloCalls != 1 || res.Elo == nil || res.Elo.Boards[0].Ratings["a"] != 1010 {
		t.Fatalf("children %v, result %+v, Elo recomputed %d times", *children, res, eloCalls)
	}
}

// Nothing appended, nothing to re-rank.
func TestLeaderboardRefreshWithCurrentPinsSkipsElo(t *testing.T) {
	env, children := newRefreshEnv(t)
	env.OnActivity("PlanRefresh", mock.Anything, mock.Anything).Return(activities.RefreshPlan{Current: []string{"a", "b"}}, nil)
	eloCalls := 0
	env.OnActivity("RecomputeElo", mock.Anything, mock.Anything).Return(func(context.Context, activities.EloInput) (activities.EloSummary, error) {
		eloCalls++
		return activities.EloSummary{}, nil
	})
	env.ExecuteWorkflow(LeaderboardRefresh, activities.RefreshInput{})
	var res LeaderboardRefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(*children) != 0 || eloCalls != 0 || res.Elo != nil {
		t.Fatalf("children %v, Elo calls %d, result %+v", *children, eloCalls, res)
	}
}
