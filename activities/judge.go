package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/judge"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// judgedAxis is an axis whose responses a judge ensemble rates.
type judgedAxis interface {
	JudgeRequests(items []scorers.Item, preds []scorers.Prediction) []judge.Request
}

// judgedBy reports whether the axis's judges score it (not the axis's
// explicit scorer: rules).
func judgedBy(ax scorers.Axis, ac scorers.AxisConfig) bool {
	_, ok := ax.(judgedAxis)
	return ok && ac.Scorer != scorers.ScorerRules
}

// overlayOn reports whether the judge overlay is on for an axis.
func overlayOn(cfg *config.Config, axis string) bool {
	return cfg.Run.JudgeOverlay || cfg.Axes[axis].JudgeOverlay
}

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
	ax, _ := scorers.AxisNamed(in.Axis)
	gen := m.Plan.Generation(in.Axis)
	requests := func(items []scorers.Item, preds []scorers.Prediction) []judge.Request {
		return ax.(judgedAxis).JudgeRequests(items, preds)
	}
	judged := judgedBy(ax, m.Config.Axes[in.Axis])
	overlay := !judged && overlayOn(m.Config, in.Axis)
	if overlay {
		// Spec §4: a verifiable axis asks the judges for a secondary 0-10
		// judge_quality of each generated response; its score stays the headline.
		requests = judge.OverlayRequests
	}
	cfgs, excluded := runplan.KeptJudges(m.Config, m.ModelMeta)
	if (!judged && !overlay) || len(cfgs) == 0 {
		return StageNote{Note: "judge: no judges configured"}, nil
	}
	// One heartbeat for the whole stage, from before the judges open (a GGUF
	// judge may take longer than the 5 s heartbeat timeout to open) to the
	// end; it carries the shard and ratings saved so far, and the workflow's
	// cancellation back.
	var mu sync.Mutex
	var progress [2]int // shard, responses rated and saved
	defer beat(ctx, func() any {
		mu.Lock()
		defer mu.Unlock()
		return map[string]int{"shard": progress[0], "rated": progress[1]}
	})()
	var js []*judge.Judge
	for _, c := range cfgs {
		j, err := judge.Dial(c)
		if err != nil {
			if Classify(err) == Outage {
				return StageNote{}, fmt.Errorf("judge %s: %w", c.Name, err)
			}
			// A judge that cannot load fails every attempt alike.
			return StageNote{}, nonRetryable(ErrModel, fmt.Sprintf("judge %s (%s) cannot be opened: %v", c.Name, c.Spec, err))
		}
		defer j.Close()
		js = append(js, j)
	}
	floor, _ := judge.FloorOption(nil, m.Config.Run.JudgeFloor)
	// A judge error that every request would meet (NaN, a client error)
	// ends the stage at once, and the axis with it (see judgeFailed);
	// outages are retried, and a request that still fails is dropped.
	ens := &judge.Ensemble{Judges: js, Floor: floor, Fatal: func(err error) bool { return Classify(err) == ModelFailure }}
	rated, unrequested := 0, 0 // responses sent to the judges; items with no response to rate
	unrated := 0               // responses left unrated when judging stopped
	earlier := 0               // responses an earlier attempt rated and saved
	var counts []judge.JudgeCount
	// Judging stops inside a chunk, in-flight judge requests included, when
	// the workflow cancels it at the run's deadline (heartbeats carry the
	// cancellation, so they are sent while a slow judge holds a chunk) or
	// shortly before the activity's own deadline, so that a judge slower than
	// the time left ends the stage with its ratings kept instead of a
	// StartToClose timeout that fails the run.
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	if dl := activity.GetInfo(ctx).Deadline; !dl.IsZero() {
		var cancel context.CancelFunc
		jctx, cancel = context.WithDeadline(jctx, dl.Add(-a.judgeWrapUp()))
		defer cancel()
	}
	stopped := false
	every := m.Config.Run.CheckpointEvery
	for s := 0; s < in.Shards; s++ {
		items, err := a.shardItems(ctx, st, in.RunID, in.Axis, s)
		if err != nil {
			return StageNote{}, err
		}
		preds, _, err := shardPredictions(ctx, st, in.RunID, in.Axis, s, gen)
		if err != nil {
			return StageNote{}, err
		}
		done, parts, err := readRated(ctx, st, in.RunID, in.Axis, s, gen)
		if err != nil {
			return StageNote{}, err
		}
		var todoItems []scorers.Item
		var todoPreds []scorers.Prediction
		for _, it := range items {
			p, answered := preds[it.ID]
			if r, ok := done[it.ID]; ok {
				earlier += len(requests([]scorers.Item{it}, []scorers.Prediction{r}))
				continue
			}
			if !answered {
				continue
			}
			todoItems, todoPreds = append(todoItems, it), append(todoPreds, p)
		}
		for start := 0; start < len(todoItems); start += every {
			its, ps := todoItems[start:min(start+every, len(todoItems))], todoPreds[start:min(start+every, len(todoItems))]
			reqs := requests(its, ps)
			if stopped = stopped || jctx.Err() != nil; stopped {
				unrated += len(reqs) // counted, not asked
				continue
			}
			c, err := ens.RateInto(jctx, reqs, ps)
			if f := (*judge.Failure)(nil); errors.As(err, &f) {
				return StageNote{}, nonRetryable(ErrModel, fmt.Sprintf("%v; every request fails alike, so it is not retried", f))
			}
			if err != nil && jctx.Err() == nil {
				return StageNote{}, err
			}
			if err != nil {
				// Stopped within the chunk: checkpoint the items every judge
				// rated in full; the rest of the chunk stays unrated.
				stopped = true
				var keep []scorers.Prediction
				var keptReqs []judge.Request
				for _, p := range ps {
					mine := slices.DeleteFunc(slices.Clone(reqs), func(r judge.Request) bool { return r.ItemID != p.ItemID })
					if ratedByAll(mine, p, cfgs) {
						keep, keptReqs = append(keep, p), append(keptReqs, mine...)
					}
				}
				unrated += len(reqs) - len(keptReqs)
				ps, reqs = keep, keptReqs
				if len(ps) == 0 {
					continue
				}
			}
			for _, jc := range c {
				metrics.JudgeParseFailures(jc.Judge, jc.ParseFail)
			}
			counts = addCounts(counts, c)
			rated += len(reqs)
			unrequested += len(ps) - distinctItems(reqs)
			data, err := runfiles.EncodeJSONL(ps)
			if err != nil {
				return StageNote{}, err
			}
			key := fmt.Sprintf("%s%05d.jsonl", ratingsPrefix(in.RunID, in.Axis, s, gen), parts)
			err = st.Put(ctx, key, data)
			if errors.Is(err, store.ErrExists) {
				err = nil // an earlier attempt's write of the same ratings
			}
			metrics.CheckpointWrite("ratings", err)
			if err != nil {
				return StageNote{}, err
			}
			parts++
			mu.Lock()
			progress = [2]int{s, rated}
			mu.Unlock()
		}
	}
	if err := interrupted(ctx); stopped && err != nil {
		// Not a stop at the deadline: this attempt's result is not the
		// stage's. What it rated is checkpointed; the next attempt goes on.
		return StageNote{}, err
	}
	names := make([]string, len(cfgs))
	for i, c := range cfgs {
		names[i] = c.Name
	}
	// The note is the stage's, not this attempt's: a retried attempt counts
	// what the attempts before it rated and saved.
	by := strings.Join(names, ", ")
	if earlier > 0 {
		by += fmt.Sprintf(" (%d by an earlier attempt)", earlier)
	}
	note := fmt.Sprintf("judge: %d responses rated by %s", rated+earlier, by)
	if stopped {
		note = fmt.Sprintf("judge: judging stopped at the deadline: %d responses rated by %s and kept, %d unrated", rated+earlier, by, unrated)
	}
	if unrequested > 0 {
		note += fmt.Sprintf(" (%d items have no generated response to rate)", unrequested)
	}
	for _, c := range counts {
		if c.ParseFail+c.Dropped > 0 {
			note += fmt.Sprintf("; %s: %d valid, %d parse_fail, %d dropped", c.Judge, c.Valid, c.ParseFail, c.Dropped)
		}
	}
	if overlay {
		note = "judge overlay: " + note + " (judge_quality is secondary; the verifiable score stays the headline)"
	}
	if len(excluded) > 0 {
		note += fmt.Sprintf("; self-judge excluded (same family as the model): %s", strings.Join(excluded, ", "))
	}
	return StageNote{Note: note}, nil
}

// ratedByAll reports whether every judge rated every request of p's item.
func ratedByAll(reqs []judge.Request, p scorers.Prediction, cfgs []judge.Config) bool {
	for _, c := range cfgs {
		m, err := judge.Missing(reqs, []scorers.Prediction{p}, c.Name)
		if err != nil || len(m) > 0 {
			return false
		}
	}
	return true
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

// addCounts adds one chunk's per-judge counts to the running ones.
func addCounts(into, c []judge.JudgeCount) []judge.JudgeCount {
	if into == nil {
		return append([]judge.JudgeCount(nil), c...)
	}
	for k := range c {
		into[k].Reused += c[k].Reused
		into[k].Asked += c[k].Asked
		into[k].Valid += c[k].Valid
		into[k].ParseFail += c[k].ParseFail
		into[k].Dropped += c[k].Dropped
	}
	return into
}

// distinctItems counts the items the requests are about (MT asks once per turn).
func distinctItems(reqs []judge.Request) int {
	seen := map[string]bool{}
	for _, r := range reqs {
		seen[r.ItemID] = true
	}
	return len(seen)
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
