package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/scorers"
)

// maxHistory is the bound every history of a run stays below, whatever the
// number of items: a fifth of Temporal's 10,000-event warning.
const maxHistory = 2000

// bigAxis is a run of one axis of items items in shards of 100 (the default
// run.shard_size), answered by a mocked Infer that takes (simulated) time
// each and counts each shard's runs.
func bigAxis(t *testing.T, items, parallel int, each time.Duration) (*testsuite.TestWorkflowEnvironment, *inferCounts) {
	env := newEnv(t)
	p := plan("knowledge")
	p.Axes[0].Items = items
	p.ParallelShards = parallel
	p.MaxWallSeconds = 10 * 24 * 3600
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	d := dedup("knowledge")
	d.Axes[0].Kept, d.Axes[0].Shards = items, items/100
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(d, nil)
	c := &inferCounts{shards: map[int]int{}}
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		c.mu.Lock()
		c.shards[in.Shard]++
		c.mu.Unlock()
		return activities.ShardResult{Total: 100, Done: 100}, nil
	}).After(each)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(activities.AxisOutcome{Result: scorers.AxisResult{Axis: "knowledge", Score: score(1), N: items}}, nil)
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{}, nil)
	env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(activities.Summary{}, nil)
	return env, c
}

type inferCounts struct {
	mu     sync.Mutex
	shards map[int]int // Infer calls per shard
}

// runHistory is what one workflow run did that lands in its history.
type runHistory struct {
	workflow, runID string
	acts            int
	children        int
	input           []byte // the run's input, as its history stores it
}

// An axis of 10^6 items is 10,000 Infer shards. EvalRun holds one InferAxis
// child for the axis, which continues as new every inferRunShards shards:
// every history (EvalRun's, and each of the child's runs) stays below
// maxHistory events, each shard runs exactly once, a continued run
// carries counts, not items, and no activity input or result in EvalRun's
// history carries a list per shard.
func TestInferMillionItemsKeepsHistoriesSmall(t *testing.T) {
	const items, shards = 1_000_000, 10_000
	env, counts := bigAxis(t, items, 8, 0)

	var mu sync.Mutex
	runs := map[string]*runHistory{} // by run id
	var order []string
	run := func(wf, id string) *runHistory {
		if runs[id] == nil {
			runs[id] = &runHistory{workflow: wf, runID: id}
			order = append(order, id)
		}
		return runs[id]
	}
	const parent = "evalrun-r1"
	// The largest activity input and result of the parent: its history
	// holds each of them, so none may grow with the shards.
	var parentPayload struct {
		bytes    int
		activity string
	}
	payload := func(info *activity.Info, get func(...any) error, what string) {
		var raw json.RawMessage
		if info.WorkflowExecution.ID != parent || get(&raw) != nil || len(raw) <= parentPayload.bytes {
			return
		}
		parentPayload.bytes, parentPayload.activity = len(raw), info.ActivityType.Name+" "+what
	}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		mu.Lock()
		run(info.WorkflowExecution.ID, info.WorkflowExecution.RunID).acts++
		payload(info, args.Get, "input")
		mu.Unlock()
	})
	env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
		mu.Lock()
		if err == nil {
			payload(info, func(v ...any) error { return result.Get(v[0]) }, "result")
		}
		mu.Unlock()
	})
	timers := 0
	env.SetOnTimerScheduledListener(func(string, time.Duration) {
		mu.Lock()
		timers++
		mu.Unlock()
	})
	var last InferAxisResult
	childIDs := map[string]bool{}
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, args converter.EncodedValues) {
		var in InferAxisInput
		if err := args.Get(&in); err != nil {
			t.Error(err)
		}
		data, _ := json.Marshal(in)
		mu.Lock()
		childIDs[info.WorkflowExecution.ID] = true // a continued run keeps its id
		run(info.WorkflowExecution.ID, info.WorkflowExecution.RunID).input = data
		mu.Unlock()
	})
	env.SetOnChildWorkflowCompletedListener(func(_ *workflow.Info, result converter.EncodedValue, err error) {
		if err == nil {
			result.Get(&last)
		}
	})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: parent})
	runEvalRun(t, env)

	for s := range shards {
		if counts.shards[s] != 1 {
			t.Fatalf("shard %d ran %d times", s, counts.shards[s])
		}
	}
	if len(counts.shards) != shards {
		t.Fatalf("%d shards ran, want %d", len(counts.shards), shards)
	}
	// The parent's own activities ran under the test's default run id.
	parentRun := runs["default-test-run-id"]
	if parentRun == nil {
		t.Fatal("parent run not seen")
	}
	parentRun.children = len(childIDs)
	childRuns := 0
	for _, id := range order {
		r := runs[id]
		if r == nil {
			continue
		}
		// EvalRun: three version markers (search attributes, DedupCounts,
		// InferAxis) and the memo upsert, no timer (the child holds the budget). Each
		// InferAxis run: its budget timer.
		bound := historyBound(r.acts, 0, 1, 0, 0)
		if r == parentRun {
			bound = historyBound(r.acts, r.children, 0, 3, 1)
		} else {
			childRuns++
			if r.acts > inferRunShards {
				t.Errorf("%s run %s started %d shards, more than %d", r.workflow, id, r.acts, inferRunShards)
			}
			if len(r.input) > 512 {
				t.Errorf("%s run %s input is %d bytes: %s", r.workflow, id, len(r.input), r.input)
			}
		}
		t.Logf("%-26s run %-10s %4d activities, %d children: at most %4d history events", r.workflow, id, r.acts, r.children, bound)
		if bound >= maxHistory {
			t.Errorf("%s run %s: up to %d history events, want below %d", r.workflow, id, bound, maxHistory)
		}
	}
	if last.Done != items || last.Expired {
		t.Errorf("InferAxis ended with %+v, want %d items done", last, items)
	}
	if want := shards / inferRunShards; childRuns != want || timers != want {
		t.Fatalf("InferAxis ran %d runs with %d budget timers, want %d each", childRuns, timers, want)
	}
	t.Logf("the parent's largest activity payload: %s, %d bytes", parentPayload.activity, parentPayload.bytes)
	if parentPayload.bytes > 1024 {
		t.Errorf("the parent's history holds a %d-byte %s; what grows with the shards belongs in the store", parentPayload.bytes, parentPayload.activity)
	}
	if parentRun.acts > 10 || parentRun.children != 1 {
		t.Fatalf("the parent ran %d activities and %d children; the shards belong in one InferAxis child", parentRun.acts, parentRun.children)
	}
}

// The budget runs out in the child's second run: the shards in flight are
// cancelled, no later shard starts, the run does not continue as new, and
// EvalRun scores the axis on what was answered and notes the early stop.
func TestInferBudgetExpiresInContinuedRun(t *testing.T) {
	env := newEnv(t)
	p := plan("knowledge")
	p.ParallelShards = 2
	p.MaxWallSeconds = 60*60 + 120 // an hour for the one axis
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	d := dedup("knowledge")
	d.Axes[0].Kept, d.Axes[0].Shards = 4*3*inferRunShards, 3*inferRunShards
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(d, nil)
	// Each shard takes a (simulated) 10 s: 2 at a time, the hour ends after
	// about 720 shards, in the child's third run; a shard in flight then
	// stops when cancelled.
	var mu sync.Mutex
	started := map[int]bool{}
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		mu.Lock()
		started[in.Shard] = true
		mu.Unlock()
		return activities.ShardResult{Total: 4, Done: 4}, nil
	}).After(10 * time.Second)
	var scoredShards int
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ScoreInput) (activities.AxisOutcome, error) {
		scoredShards = in.Shards
		return activities.AxisOutcome{Result: scorers.AxisResult{Axis: "knowledge", Score: score(0.5), N: 4}, Dropped: 100}, nil
	})
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{}, nil)
	got := aggregated(env)
	var results []InferAxisResult
	runs := 0
	env.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) { runs++ })
	env.SetOnChildWorkflowCompletedListener(func(_ *workflow.Info, v converter.EncodedValue, err error) {
		var r InferAxisResult
		if err == nil && v.Get(&r) == nil {
			results = append(results, r)
		}
	})
	runEvalRun(t, env)
	n := len(started)
	if n <= 2*inferRunShards || n >= 3*inferRunShards {
		t.Fatalf("%d shards started; the budget should stop the axis in the child's third run", n)
	}
	if runs != 3 {
		t.Fatalf("InferAxis ran %d runs, want 3 (it continues as new twice and stops at the budget)", runs)
	}
	if r := results[len(results)-1]; !r.Expired || r.Done > 4*n || r.Done < 4*(n-2) {
		t.Fatalf("InferAxis ended with %+v after %d shards started", r, n)
	}
	if scoredShards != 3*inferRunShards {
		t.Fatalf("Score got %d shards, want the axis's %d", scoredShards, 3*inferRunShards)
	}
	if len(got.Outcomes) != 1 || !got.Outcomes[0].StoppedEarly || !strings.Contains(strings.Join(got.Notes, "\n"), "axis knowledge stopped early at its budget of 1h0m0s") {
		t.Fatalf("outcomes %+v notes %v", got.Outcomes, got.Notes)
	}
}

// A shard that fails for good fails the run with the activity's own message,
// and the child starts no shard after it.
func TestInferShardFailureFailsRun(t *testing.T) {
	env := newEnv(t)
	p := plan("knowledge")
	p.ParallelShards = 1
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(dedup("knowledge"), nil)
	var calls []int
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (activities.ShardResult, error) {
		calls = append(calls, in.Shard)
		if in.Shard == 1 {
			return activities.ShardResult{}, temporal.NewNonRetryableApplicationError("knowledge/g.jsonl line 7: no question", activities.ErrData, nil)
		}
		return activities.ShardResult{Total: 4, Done: 4}, nil
	})
	env.ExecuteWorkflow(EvalRun, EvalRunInput{ConfigPath: "c.yaml", RunID: "r1"})
	err := env.GetWorkflowError()
	var cause *temporal.ApplicationError // the innermost: what the activity said
	for e := err; e != nil; e = errors.Unwrap(e) {
		if ae, ok := e.(*temporal.ApplicationError); ok {
			cause = ae
		}
	}
	if err == nil || !strings.Contains(err.Error(), "axis knowledge: inference: ") || cause == nil ||
		cause.Type() != activities.ErrData || cause.Message() != "knowledge/g.jsonl line 7: no question" {
		t.Fatalf("error = %v", err)
	}
	if fmt.Sprint(calls) != "[0 1]" {
		t.Fatalf("Infer ran on shards %v, want [0 1]", calls)
	}
}

// While the child answers, the progress a client reads (QueryProgress)
// counts the items the child has answered, though EvalRun itself learns
// them only when the child ends.
func TestInferProgressCountsChildItems(t *testing.T) {
	env, _ := bigAxis(t, 100*3*inferRunShards, 1, time.Minute)
	var seen Progress
	var qerr error
	// At 400 minutes, 399 or 400 shards are answered, in the child's second run.
	env.RegisterDelayedCallback(func() {
		seen, qerr = progressOf(func(id string) (converter.EncodedValue, error) {
			if id == "evalrun-r1" {
				return env.QueryWorkflow(ProgressQuery)
			}
			return env.QueryWorkflowByID(id, ProgressQuery)
		}, "evalrun-r1")
	}, 400*time.Minute+time.Second)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "evalrun-r1"})
	runEvalRun(t, env)
	if qerr != nil {
		t.Fatal(qerr)
	}
	ax := seen.Axes[0]
	if ax.Stage != StageInference || ax.Child != "evalrun-r1-infer-knowledge" || ax.Done != 400*100 {
		t.Fatalf("progress at 400 minutes: %+v", ax)
	}
}

// A cancelled EvalRun cancels its InferAxis child, which starts no shard
// after that and does not continue as new.
func TestInferCancelledRunStops(t *testing.T) {
	env, counts := bigAxis(t, 100*3*inferRunShards, 1, time.Minute)
	runs := 0
	env.SetOnChildWorkflowStartedListener(func(*workflow.Info, workflow.Context, converter.EncodedValues) { runs++ })
	env.RegisterDelayedCallback(env.CancelWorkflow, 100*time.Minute+time.Second)
	env.ExecuteWorkflow(EvalRun, EvalRunInput{ConfigPath: "c.yaml", RunID: "r1"})
	if err := env.GetWorkflowError(); err == nil || !temporal.IsCanceledError(err) {
		t.Fatalf("error = %v, want cancelled", err)
	}
	if n := len(counts.shards); n > 101 || runs != 1 {
		t.Fatalf("after the cancel at 100 minutes: %d shards started in %d InferAxis runs", n, runs)
	}
}
