package workflows

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/scorers"
)

// historyBound is an upper bound on the events of a workflow that ran acts
// activities, children child workflows and timers timers, had markers
// markers and upserts upserts: the start and the close, each activity's
// scheduled/started/completed, each child's initiated/started/completed,
// each timer's started/fired, and a workflow task (scheduled/started/
// completed) for the start and for every event that wakes the workflow
// (a result, a child's start or end, a fired timer) as if none shared one.
func historyBound(acts, children, timers, markers, upserts int) int {
	tasks := 1 + acts + 2*children + timers
	return 2 + 3*tasks + 3*acts + 3*children + 2*timers + markers + upserts
}

// A 1 TB corpus is about 4,000 shards; 5,000 are screened here. The parent
// screens them in ScreenCorpus children of screenBatch shards, so neither the
// parent's history nor any child's comes near Temporal's 10,000-event warning.
func TestScreenCorpusKeepsHistoriesSmall(t *testing.T) {
	const shards = 5000
	env := newEnv(t)
	p := plan("knowledge")
	p.CorpusShards = shards
	p.ParallelShards = 8
	env.OnActivity("Prepare", mock.Anything, mock.Anything).Return(p, nil)
	var mu sync.Mutex
	screened := map[int]int{}
	env.OnActivity("ScreenShard", mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ShardInput) (int, error) {
		mu.Lock()
		screened[in.Shard]++
		mu.Unlock()
		return 0, nil
	})
	env.OnActivity("DedupCounts", mock.Anything, mock.Anything).Return(func(context.Context, activities.RunRef) (activities.DedupCounts, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(screened) != shards {
			t.Errorf("Dedup ran after %d of %d corpus shards", len(screened), shards)
		}
		return dedup("knowledge"), nil
	})
	env.OnActivity("Infer", mock.Anything, mock.Anything).Return(activities.ShardResult{Total: 4, Done: 4}, nil)
	env.OnActivity("Score", mock.Anything, mock.Anything).Return(activities.AxisOutcome{Result: scorers.AxisResult{Axis: "knowledge", Score: score(1)}}, nil)
	env.OnActivity("Audit", mock.Anything, mock.Anything).Return(activities.AuditSummary{}, nil)
	env.OnActivity("Aggregate", mock.Anything, mock.Anything).Return(activities.Summary{}, nil)

	actsBy := map[string]int{}   // activities per workflow id
	children := map[string]int{} // child workflows per parent id
	screens := 0
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		actsBy[info.WorkflowExecution.ID]++
		mu.Unlock()
	})
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		mu.Lock()
		children[info.ParentWorkflowExecution.ID]++
		if info.WorkflowType.Name == ScreenCorpusName {
			screens++
		}
		mu.Unlock()
	})
	const parent = "evalrun-r1"
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: parent})
	runEvalRun(t, env)
	for s := range shards {
		if screened[s] != 1 {
			t.Fatalf("corpus shard %d screened %d times", s, screened[s])
		}
	}
	if want := (shards + screenBatch - 1) / screenBatch; screens != want {
		t.Fatalf("parent started %d ScreenCorpus children, want %d", screens, want)
	}
	for id, n := range actsBy {
		// The parent: the three version markers, the memo and the
		// search-attribute upserts; its axis's InferAxis child holds the
		// budget timer.
		bound := historyBound(n, 0, 1, 0, 0)
		if id == parent {
			bound = historyBound(n, children[parent], 0, 3, 3)
		}
		if id == parent || id == parent+"-screen-1" {
			t.Logf("%-22s %4d activities, %2d children: at most %5d history events", id, n, children[id], bound)
		}
		if bound > 4000 {
			t.Errorf("%s: up to %d history events", id, bound)
		}
	}
	if actsBy[parent] > 10 {
		t.Fatalf("the parent ran %d activities itself; the corpus shards belong in the children", actsBy[parent])
	}
}
