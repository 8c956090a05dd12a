package workflows

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
)

func newRefreshEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *[]string) {
	return newRefreshEnvWith(t, func(_ workflow.Context, in EvalRunInput) (EvalRunResult, error) { return ran(in), nil })
}

// ran is a child run that wrote its result to a store of its own.
func ran(in EvalRunInput) EvalRunResult {
	return EvalRunResult{RunID: in.RunID, Summary: activities.Summary{StoreURI: "/runs-" + in.RunID, ResultKey: "runs/" + in.RunID + "/result.json"}}
}

// newRefreshEnvWith mocks each child EvalRun with run, recording the run ids
// started.
func newRefreshEnvWith(t *testing.T, run func(workflow.Context, EvalRunInput) (EvalRunResult, error)) (*testsuite.TestWorkflowEnvironment, *[]string) {
	env := newEnv(t)
	var acts *activities.Activities
	for _, fn := range []any{acts.PlanRefresh, acts.AppendLeaderboardRow, acts.RecomputeElo} {
		env.RegisterActivity(fn)
	}
	var children []string
	env.OnWorkflow(WorkflowName, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in EvalRunInput) (EvalRunResult, error) {
		children = append(children, in.RunID)
		return run(ctx, in)
	})
	env.OnActivity("AppendLeaderboardRow", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.AppendInput) (activities.AppendResult, error) {
		// The run is read where the child says it wrote it; the row goes
		// to the refresh's store.
		if in.StoreURI != "/runs-"+in.RunID || in.ResultKey != "runs/"+in.RunID+"/result.json" || in.BoardStoreURI != "/store" {
			t.Errorf("AppendLeaderboardRow input %+v: want the child's store and key and the refresh's store", in)
		}
		return activities.AppendResult{Path: "leaderboard/ms/v1/leaderboard.jsonl",
			Anchor: &activities.RowAnchor{Board: "leaderboard/ms/v1", RunID: in.RunID, RowSHA256: "sum-" + in.RunID}}, nil
	})
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
	// The appended rows' hashes are kept in the refresh's result, outside
	// the leaderboard's store.
	if len(res.Anchors) != 2 || res.Anchors[0].RowSHA256 != "sum-a-1" || res.Anchors[1].RowSHA256 != "sum-b-1" {
		t.Errorf("anchors %+v, want the two appended rows'", res.Anchors)
	}
}

// A refresh recorded before the anchor version appends through
// AppendLeaderboard, whose result is the path alone, and records no anchor.
func TestLeaderboardRefreshBeforeAnchors(t *testing.T) {
	env, _ := newRefreshEnv(t)
	var acts *activities.Activities
	env.RegisterActivity(acts.AppendLeaderboard)
	env.OnGetVersion(anchorVersion, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	env.OnActivity("AppendLeaderboard", mock.Anything, mock.Anything).Return("leaderboard/ms/v1/leaderboard.jsonl", nil)
	env.OnActivity("PlanRefresh", mock.Anything, mock.Anything).Return(activities.RefreshPlan{Todo: todo("a")}, nil)
	env.OnActivity("RecomputeElo", mock.Anything, mock.Anything).Return(activities.EloSummary{}, nil)
	env.ExecuteWorkflow(LeaderboardRefresh, activities.RefreshInput{StoreURI: "/store"})
	var res LeaderboardRefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Appended, []string{"leaderboard/ms/v1/leaderboard.jsonl"}) || len(res.Anchors) != 0 {
		t.Fatalf("result %+v", res)
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
	env.ExecuteWorkflow(LeaderboardRefresh, activities.RefreshInput{StoreURI: "/store"})
	var res LeaderboardRefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(*children) != 0 || eloCalls != 0 || res.Elo != nil {
		t.Fatalf("children %v, Elo calls %d, result %+v", *children, eloCalls, res)
	}
}

func todo(ids ...string) []activities.RefreshItem {
	var items []activities.RefreshItem
	for _, id := range ids {
		items = append(items, activities.RefreshItem{Input: activities.PrepareInput{RunID: id + "-1"}, ModelID: id})
	}
	return items
}

// One model's failure is that model's: the others are still run and
// appended, Elo is recomputed, and the result names the failed model and the
// innermost reason, in one sentence.
func TestLeaderboardRefreshIsolatesAFailedModel(t *testing.T) {
	env, children := newRefreshEnvWith(t, func(_ workflow.Context, in EvalRunInput) (EvalRunResult, error) {
		if in.RunID == "b-1" {
			return EvalRunResult{}, temporal.NewNonRetryableApplicationError("infer: backend: dial tcp 127.0.0.1:9: connection refused", activities.ErrData, nil)
		}
		return ran(in), nil
	})
	env.OnActivity("PlanRefresh", mock.Anything, mock.Anything).Return(activities.RefreshPlan{
		Todo:   todo("a", "b", "c"),
		Failed: []activities.RefreshFailure{{ModelID: "d", Reason: "runs[3]: config: open d.yaml: no such file or directory"}},
	}, nil)
	eloCalls := 0
	env.OnActivity("RecomputeElo", mock.Anything, mock.Anything).Return(func(context.Context, activities.EloInput) (activities.EloSummary, error) {
		eloCalls++
		return activities.EloSummary{}, nil
	})
	env.ExecuteWorkflow(LeaderboardRefresh, activities.RefreshInput{Lang: "ms", StoreURI: "/store"})
	var res LeaderboardRefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(*children) != 3 || !slices.Equal(res.Ran, []string{"a-1", "c-1"}) || eloCalls != 1 {
		t.Fatalf("children %v, result %+v, Elo calls %d", *children, res, eloCalls)
	}
	want := []activities.RefreshFailure{
		{ModelID: "d", Reason: "runs[3]: config: open d.yaml: no such file or directory"},
		{ModelID: "b", RunID: "b-1", Reason: "infer: backend: dial tcp 127.0.0.1:9: connection refused"},
	}
	if !slices.Equal(res.Failed, want) {
		t.Fatalf("failed %+v, want %+v", res.Failed, want)
	}
}

// Every model failing appends nothing, so there is nothing to re-rank; the
// refresh itself still completes and reports them.
func TestLeaderboardRefreshAllFailed(t *testing.T) {
	env, _ := newRefreshEnvWith(t, func(workflow.Context, EvalRunInput) (EvalRunResult, error) {
		return EvalRunResult{}, errors.New("model down")
	})
	env.OnActivity("PlanRefresh", mock.Anything, mock.Anything).Return(activities.RefreshPlan{Todo: todo("a", "b")}, nil)
	env.OnActivity("RecomputeElo", mock.Anything, mock.Anything).Return(activities.EloSummary{}, errors.New("Elo must not run"))
	env.ExecuteWorkflow(LeaderboardRefresh, activities.RefreshInput{StoreURI: "/store"})
	var res LeaderboardRefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 2 || len(res.Ran) != 0 || res.Elo != nil || res.Failed[1].Reason != "model down" {
		t.Fatalf("result %+v", res)
	}
}

// max_parallel bounds how many child runs are in flight at once: each child
// takes an hour of (test) time, so five children take three hours two at a
// time, five one at a time, and never more than two run together.
func TestLeaderboardRefreshMaxParallel(t *testing.T) {
	for _, tc := range []struct{ parallel, hours int }{{0, 5}, {1, 5}, {2, 3}, {5, 1}} {
		inFlight, most := 0, 0
		env, _ := newRefreshEnvWith(t, func(ctx workflow.Context, in EvalRunInput) (EvalRunResult, error) {
			inFlight++
			most = max(most, inFlight)
			defer func() { inFlight-- }()
			if err := workflow.Sleep(ctx, time.Hour); err != nil {
				return EvalRunResult{}, err
			}
			return ran(in), nil
		})
		env.OnActivity("PlanRefresh", mock.Anything, mock.Anything).Return(activities.RefreshPlan{Todo: todo("a", "b", "c", "d", "e")}, nil)
		env.OnActivity("RecomputeElo", mock.Anything, mock.Anything).Return(activities.EloSummary{}, nil)
		start := env.Now()
		env.ExecuteWorkflow(LeaderboardRefresh, activities.RefreshInput{StoreURI: "/store", MaxParallel: tc.parallel})
		var res LeaderboardRefreshResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		took := env.Now().Sub(start).Round(time.Hour)
		if len(res.Ran) != 5 || took != time.Duration(tc.hours)*time.Hour || most != max(tc.parallel, 1) {
			t.Errorf("max_parallel %d: ran %v in %v with at most %d at once; want 5 runs in %dh, %d at once", tc.parallel, res.Ran, took, most, tc.hours, max(tc.parallel, 1))
		}
		// Results keep the plan's order whatever order the runs end in.
		if !slices.Equal(res.Ran, []string{"a-1", "b-1", "c-1", "d-1", "e-1"}) {
			t.Errorf("max_parallel %d: ran %v", tc.parallel, res.Ran)
		}
	}
}
