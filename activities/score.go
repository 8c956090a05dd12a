package activities

import (
	"context"
	"fmt"

	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/judge"
)

// ScoreInput names an axis to score and how many shards it has.
type ScoreInput struct {
	AxisInput
	Shards int `json:"shards"`
}

// Score scores one axis from its checkpointed predictions, writes the per-item
// scores to the store and returns the axis result. Kept items without a
// prediction (the budget ran out) are counted, never guessed.
//
// The axis streams through shard by shard: the axis plugin's Tally keeps only
// compact per-item numbers between shards, and the item scores are spooled to
// a file and stored from it, so the worker's memory does not grow with the
// items' prompts, answers or per-item details.
func (a *Activities) Score(ctx context.Context, in ScoreInput) (AxisOutcome, error) {
	defer beat(ctx, nil)()
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return AxisOutcome{}, err
	}
	ax, _ := scorers.AxisNamed(in.Axis)
	ac := m.Config.Axes[in.Axis]
	var extra scorers.Extra
	if runplan.Overlaid(m.Config, in.Axis) {
		extra = &judge.QualityTally{}
	}
	sc, err := scorers.NewScoring(ax, ac, runplan.ScoreOptions(m.Config, in.Axis), extra)
	if err != nil {
		return AxisOutcome{}, ConfigError("%v", err)
	}
	sp, err := runfiles.NewSpool()
	if err != nil {
		return AxisOutcome{}, err
	}
	defer sp.Discard()
	unscored, usage, err := a.scoreShards(ctx, st, in, m.Plan.Generation(in.Axis), sc, sp)
	if err != nil {
		return AxisOutcome{}, err
	}
	out := AxisOutcome{Weight: ac.WeightValue(), Tier: ac.Tier, Dropped: unscored}
	if out.Result, err = sc.Result(); err != nil {
		return AxisOutcome{}, dataError("%v", err)
	}
	if usage.Items > 0 {
		out.Usage = &usage
	}
	if unscored > 0 {
		out.Result.Notes = append(out.Result.Notes, fmt.Sprintf("%d kept items were not scored: the axis budget ran out before they were answered", unscored))
	}
	if err := sp.Commit(ctx, st, runfiles.ScoresKey(in.RunID, in.Axis)); err != nil {
		return AxisOutcome{}, err
	}
	if err := putJSON(ctx, st, runfiles.AxisResultKey(in.RunID, in.Axis), out); err != nil {
		return AxisOutcome{}, err
	}
	metrics.ItemsScored(in.Axis, sc.Given)
	metrics.ItemsUnscored(in.Axis, unscored+sc.Answered-sc.Given)
	return out, nil
}

// scoreShards scores the axis's answered items shard by shard into sp and
// sums what their answers cost; it returns how many kept items have no
// answer.
func (a *Activities) scoreShards(ctx context.Context, st store.Store, in ScoreInput, gen int, sc *scorers.Scoring, sp *runfiles.Spool) (int, runfiles.AxisUsage, error) {
	var usage runfiles.AxisUsage
	unscored, err := a.eachScorable(ctx, st, in.RunID, in.Axis, in.Shards, gen, func(items []scorers.Item, preds []scorers.Prediction) error {
		for i := range preds {
			usage.Add(preds[i].Usage)
		}
		scores, err := sc.Add(items, preds)
		if err != nil {
			return dataError("%v", err)
		}
		for i := range scores {
			if err := sp.Add(&scores[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return unscored, usage, err
}

// eachScorable calls fn with every shard's kept items that have a
// prediction (a judged axis's rated one when there is one), in shard and item
// order, with their predictions; only one shard is read at a time. It
// returns how many kept items have no prediction.
func (a *Activities) eachScorable(ctx context.Context, st store.Store, run, axis string, shards, gen int, fn func([]scorers.Item, []scorers.Prediction) error) (unscored int, err error) {
	for s := 0; s < shards; s++ {
		sh, err := a.readShard(ctx, st, run, axis, s, gen)
		if err != nil {
			return 0, err
		}
		for id, p := range sh.rated {
			sh.preds[id] = p
		}
		var items []scorers.Item
		var preds []scorers.Prediction
		for _, it := range sh.items {
			p, ok := sh.preds[it.ID]
			if !ok {
				unscored++
				continue
			}
			items = append(items, it)
			preds = append(preds, p)
		}
		if len(items) == 0 {
			continue
		}
		if err := fn(items, preds); err != nil {
			return 0, err
		}
	}
	return unscored, nil
}

// shard is a shard's kept items and what its checkpoints hold for them.
type shard struct {
	items        []scorers.Item
	preds, rated map[string]scorers.Prediction // by item id
	ratedParts   int                           // the next rated-<k> part
}

// readShard reads a shard's items and the predictions and ratings of the
// axis's checkpoint generation gen.
func (a *Activities) readShard(ctx context.Context, st store.Store, run, axis string, s, gen int) (shard, error) {
	var sh shard
	var err error
	if sh.items, err = a.shardItems(ctx, st, run, axis, s); err != nil {
		return shard{}, err
	}
	if sh.preds, _, err = shardPredictions(ctx, st, run, axis, s, gen); err != nil {
		return shard{}, err
	}
	if sh.rated, sh.ratedParts, err = readRated(ctx, st, run, axis, s, gen); err != nil {
		return shard{}, err
	}
	return sh, nil
}
