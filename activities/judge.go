package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/judge"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

func ratingsPrefix(run, axis string, shard, gen int) string {
	return runfiles.ShardPrefix(run, axis, shard) + runfiles.CheckpointKind(runfiles.Rated, gen)
}

// Judge rates an axis's responses with the judge ensemble, shard by shard.
// Rated predictions are checkpointed per shard and chunk (rated-<k>.jsonl), so
// a resumed run never pays for a rating twice; the scorer reads them in place
// of the unrated predictions.
func (a *Activities) Judge(ctx context.Context, in ScoreInput) (StageNote, error) {
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return StageNote{}, err
	}
	requests, overlay := runplan.JudgeRequests(m.Config, in.Axis)
	cfgs, excluded := runplan.KeptJudges(m.Config, m.ModelMeta)
	if requests == nil || len(cfgs) == 0 {
		return StageNote{Note: "judge: no judges configured"}, nil
	}
	// One heartbeat for the whole stage, from before the judges open (a GGUF
	// judge may take longer than the 5 s heartbeat timeout to open) to the
	// end; it carries the shard and ratings saved so far, and the workflow's
	// cancellation back.
	var prog judgeProgress
	defer beat(ctx, prog.detail)()
	ens, err := openEnsemble(cfgs, m.Config.Run.JudgeFloor)
	if err != nil {
		return StageNote{}, err
	}
	defer ens.Close()
	jctx, stop := a.judging(ctx)
	defer stop()
	gen, parts := m.Plan.Generation(in.Axis), 0
	pass := judge.Pass{Ensemble: ens, Requests: requests, Every: m.Config.Run.CheckpointEvery}
	pass.Save = func(shard int, rated []scorers.Prediction, counts []judge.JudgeCount) error {
		key := fmt.Sprintf("%s%05d.jsonl", ratingsPrefix(in.RunID, in.Axis, shard, gen), parts)
		parts++
		return prog.save(ctx, st, key, shard, pass.Rated, rated, counts)
	}
	for s := 0; s < in.Shards; s++ {
		sh, err := a.readShard(ctx, st, in.RunID, in.Axis, s, gen)
		if err != nil {
			return StageNote{}, err
		}
		parts = sh.ratedParts
		if err := pass.Shard(jctx, s, sh.items, sh.preds, sh.rated); err != nil {
			return StageNote{}, judgeError(err)
		}
	}
	if err := interrupted(ctx); pass.Stopped && err != nil {
		// Not a stop at the deadline: this attempt's result is not the
		// stage's. What it rated is checkpointed; the next attempt goes on.
		return StageNote{}, err
	}
	return StageNote{Note: pass.Note(overlay, excluded)}, nil
}

// openEnsemble opens the judges. A judge that cannot load fails every
// attempt alike; one whose server is away is tried again later.
func openEnsemble(cfgs []judge.Config, runFloor *float64) (*judge.Ensemble, error) {
	floor, _ := judge.FloorOption(nil, runFloor)
	// A judge error that every request would meet (NaN, a client error)
	// ends the stage at once, and the axis with it (see judgeError);
	// outages are retried, and a request that still fails is dropped.
	ens := &judge.Ensemble{Floor: floor, Fatal: func(err error) bool { return Classify(err) == ModelFailure }}
	for _, c := range cfgs {
		j, err := judge.Dial(c)
		if err != nil {
			ens.Close()
			if Classify(err) == Outage {
				return nil, fmt.Errorf("judge %s: %w", c.Name, err)
			}
			return nil, nonRetryable(ErrModel, fmt.Sprintf("judge %s (%s) cannot be opened: %v", c.Name, c.Spec, err))
		}
		ens.Judges = append(ens.Judges, j)
	}
	return ens, nil
}

// judgeError is a judging error as the stage returns it: a judge failing
// every request alike is not retried.
func judgeError(err error) error {
	if f := (*judge.Failure)(nil); errors.As(err, &f) {
		return nonRetryable(ErrModel, fmt.Sprintf("%v; every request fails alike, so it is not retried", f))
	}
	return err
}

// judging is the context judging runs in. Judging stops inside a chunk,
// in-flight judge requests included, when the workflow cancels it at the
// run's deadline (heartbeats carry the cancellation, so they are sent while
// a slow judge holds a chunk) or shortly before the activity's own
// deadline, so that a judge slower than the time left ends the stage with
// its ratings kept instead of a StartToClose timeout that fails the run.
func (a *Activities) judging(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl := activity.GetInfo(ctx).Deadline; !dl.IsZero() {
		return context.WithDeadline(ctx, dl.Add(-a.judgeWrapUp()))
	}
	return context.WithCancel(ctx)
}

// judgeProgress is the judge stage's heartbeat detail: the shard and the
// responses rated and saved so far.
type judgeProgress struct {
	mu           sync.Mutex
	shard, rated int
}

func (p *judgeProgress) detail() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return map[string]int{"shard": p.shard, "rated": p.rated}
}

// save checkpoints a chunk's rated predictions under key; rated is how many
// responses the stage has rated with them.
func (p *judgeProgress) save(ctx context.Context, st store.Store, key string, shard, rated int, preds []scorers.Prediction, counts []judge.JudgeCount) error {
	for _, jc := range counts {
		metrics.JudgeParseFailures(jc.Judge, jc.ParseFail)
	}
	data, err := runfiles.EncodeJSONL(preds)
	if err != nil {
		return err
	}
	err = st.Put(ctx, key, data)
	if errors.Is(err, store.ErrExists) {
		err = nil // an earlier attempt's write of the same ratings
	}
	metrics.CheckpointWrite("ratings", err)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.shard, p.rated = shard, rated
	p.mu.Unlock()
	return nil
}

// judgeWrapUp is how long before its deadline the judge activity stops
// asking, to checkpoint what was rated and return. EvalRun gives judging the
// time left to the run's deadline plus one minute (judgeUntilPreset), so 75 s
// ends the stage, with its own count, before the run's deadline, rather
// than in a StartToClose timeout that would fail the run.
func (a *Activities) judgeWrapUp() time.Duration {
	if a.JudgeWrapUp > 0 {
		return a.JudgeWrapUp
	}
	return 75 * time.Second
}

// readRated reads a shard's rated predictions.
func readRated(ctx context.Context, st store.Store, run, axis string, shard, gen int) (map[string]scorers.Prediction, int, error) {
	return runfiles.InStore(ctx, st, run).ShardCheckpoints(axis, shard, runfiles.CheckpointKind(runfiles.Rated, gen))
}

// interrupted says why the activity's context ended when it ended for
// another reason than the workflow stopping the stage (its cancellation at
// the run's deadline): the attempt timed out, or its heartbeats failed,
// which the SDK also reports by cancelling the context (a heartbeat call
// timing out on a loaded machine). nil while the context lives or when the
// workflow cancelled it. Judging stopped so used to end the stage "at the
// deadline" with what little it had rated.
func interrupted(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if temporal.IsCanceledError(cause) {
		return nil
	}
	return fmt.Errorf("judging interrupted, not at its deadline: %w", cause)
}
