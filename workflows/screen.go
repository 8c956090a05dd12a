package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
)

// ScreenCorpusName is the child workflow that screens a range of the
// training corpus's shards.
const ScreenCorpusName = "ScreenCorpus"

// screenBatch is how many corpus shards one ScreenCorpus child screens. A
// shard costs its child about six history events (the activity's three and
// a workflow task's), so a child stays near 3,000 events and the parent
// needs a handful per 500 shards: a 1 TB corpus (about 4,000 shards) keeps
// every history far below Temporal's 10,000-event warning.
const screenBatch = 500

// ScreenCorpusInput names shards [From, To) of a run's corpus of Total shards.
type ScreenCorpusInput struct {
	activities.RunRef
	From     int `json:"from"`
	To       int `json:"to"`
	Total    int `json:"total"`
	Parallel int `json:"parallel"`
	// WallSeconds bounds each shard's screening (the run's budget).
	WallSeconds int `json:"wall_seconds"`
}

// ScreenCorpus screens its shards parallel at a time; each ScreenShard
// checkpoints its matches in the store, where Dedup reads them.
func ScreenCorpus(ctx workflow.Context, in ScreenCorpusInput) error {
	preset := screenPreset(time.Duration(in.WallSeconds) * time.Second)
	sel := workflow.NewSelector(ctx)
	return fanOut(ctx, sel, in.To-in.From, in.Parallel, never, func(i int) workflow.Future {
		shard := in.From + i
		sctx := stage(ctx, preset, "screen corpus shard %d/%d", shard+1, in.Total)
		return workflow.ExecuteActivity(sctx, a.ScreenShard, activities.ShardInput{RunRef: in.RunRef, Shard: shard})
	}, func(f workflow.Future) error { return f.Get(ctx, nil) })
}

// screenCorpus screens the run's corpus before Dedup: in ScreenCorpus
// children of screenBatch shards each, one after another. Runs started
// before the children existed screen in their own history, as they did.
func (r *evalRun) screenCorpus(ctx workflow.Context) error {
	n := r.plan.CorpusShards
	if n == 0 {
		return nil
	}
	whole := ScreenCorpusInput{RunRef: r.ref, To: n, Total: n, Parallel: r.plan.ParallelShards, WallSeconds: int(r.wall / time.Second)}
	if workflow.GetVersion(ctx, "screen-corpus-child", workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return ScreenCorpus(ctx, whole)
	}
	batches := (n + screenBatch - 1) / screenBatch
	parent := workflow.GetInfo(ctx).WorkflowExecution.ID
	return fanOut(ctx, workflow.NewSelector(ctx), batches, 1, never, func(b int) workflow.Future {
		in := whole
		in.From, in.To = b*screenBatch, min((b+1)*screenBatch, n)
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:    fmt.Sprintf("%s-screen-%d", parent, b+1),
			TaskQueue:     TaskQueue,
			StaticSummary: fmt.Sprintf("screen corpus shards %d-%d/%d", in.From+1, in.To, n),
		})
		return workflow.ExecuteChildWorkflow(cctx, ScreenCorpusName, in)
	}, func(f workflow.Future) error { return f.Get(ctx, nil) })
}
