package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
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
	tally, err := ax.Tally(scorers.ScoreOptions{
		ScoringMode: ac.ScoringMode, Seed: m.Config.Run.Seed, BootstrapResamples: m.Config.Run.BootstrapResamples, Options: ac.Options,
		JudgeFloor: m.Config.Run.JudgeFloor, Scorer: ac.Scorer,
	})
	if err != nil {
		return AxisOutcome{}, configError("%v", err)
	}
	sp, err := runfiles.NewSpool()
	if err != nil {
		return AxisOutcome{}, err
	}
	defer sp.Discard()
	regs := registerTally{}
	deltas := newDeltaScores(ac)
	var quality *qualityTally
	if !runplan.JudgedBy(ax, ac) && runplan.OverlayOn(m.Config, in.Axis) && len(m.Config.Judges) > 0 {
		quality = &qualityTally{}
	}
	answered := 0 // items with a prediction, handed to the scorer
	given := 0    // of them, those it gave a score
	var usage runfiles.AxisUsage
	unscored, err := a.eachScorable(ctx, st, in.RunID, in.Axis, in.Shards, m.Plan.Generation(in.Axis), func(items []scorers.Item, preds []scorers.Prediction) error {
		scores, err := tally.Add(items, preds)
		if err != nil {
			return dataError("%v", err)
		}
		answered += len(items)
		given += len(scores)
		for i := range preds {
			usage.Add(preds[i].Usage)
		}
		at := make(map[string]int, len(items))
		for i, it := range items {
			at[it.ID] = i
		}
		for i := range scores {
			s := &scores[i]
			k := at[s.ItemID]
			regs.add(items[k].Register, s.Score)
			deltas.add(s)
			if quality != nil {
				quality.add(s, preds[k], items[k].Dataset)
			}
			if err := sp.Add(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return AxisOutcome{}, err
	}
	out := AxisOutcome{Weight: ac.WeightValue(), Tier: ac.Tier, Dropped: unscored}
	if usage.Items > 0 {
		out.Usage = &usage
	}
	if answered == 0 {
		out.Result = scorers.AxisResult{Axis: in.Axis, Version: ax.Version(), ScorerType: ax.ScorerType(), Metric: "none",
			Notes: []string{"no item was scored"}}
	} else {
		r, err := tally.Result()
		if err != nil {
			return AxisOutcome{}, dataError("%v", err)
		}
		regs.publish(&r)
		deltas.publish(&r, ac, m.Config.Run)
		if quality != nil {
			quality.publish(&r)
		}
		out.Result = r
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
	metrics.ItemsScored(in.Axis, given)
	metrics.ItemsUnscored(in.Axis, unscored+answered-given)
	return out, nil
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

// registerTally reports per-register scores and the register mix (spec §0,
// principle 4) when the data labels registers; otherwise it adds nothing.
type registerTally struct {
	sum      map[string]float64
	n        map[string]int
	labelled bool
	total    int
}

func (t *registerTally) add(register string, score float64) {
	if t.sum == nil {
		t.sum, t.n = map[string]float64{}, map[string]int{}
	}
	t.total++
	if register == "" {
		register = "unlabelled"
	} else {
		t.labelled = true
	}
	t.sum[register] += score
	t.n[register]++
}

func (t *registerTally) publish(r *scorers.AxisResult) {
	if !t.labelled {
		return
	}
	by, mix := map[string]float64{}, map[string]float64{}
	for g, k := range t.n {
		by[g] = t.sum[g] / float64(k)
		mix[g] = float64(k) / float64(t.total)
	}
	if r.Secondary == nil {
		r.Secondary = map[string]any{}
	}
	r.Secondary["by_register"], r.Secondary["register_mix"] = by, mix
}

// deltaScores keeps the item scores of the datasets that are translations
// of others, and of their originals, for translation_delta.
type deltaScores struct {
	datasets map[string]bool
	scores   map[string]float64
}

func newDeltaScores(ac scorers.AxisConfig) *deltaScores {
	d := &deltaScores{datasets: map[string]bool{}, scores: map[string]float64{}}
	for _, ds := range ac.Datasets {
		if ds.TranslationOf != "" {
			d.datasets[ds.Name], d.datasets[ds.TranslationOf] = true, true
		}
	}
	return d
}

func (d *deltaScores) add(s *scorers.ItemScore) {
	if ds, _, ok := strings.Cut(s.ItemID, "/"); ok && d.datasets[ds] {
		d.scores[s.ItemID] = s.Score
	}
}

// publish adds, for every dataset declared the translation of another, the
// translated-minus-original score on the rows both scored.
func (d *deltaScores) publish(r *scorers.AxisResult, ac scorers.AxisConfig, run config.Run) {
	for _, ds := range ac.Datasets {
		if ds.TranslationOf == "" {
			continue
		}
		delta, err := scorers.DeltaOf(d.scores, r.Axis, ds.TranslationOf, ds.Name, run.BootstrapResamples, uint64(run.Seed))
		if err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("translation_delta %s vs %s: %v", ds.Name, ds.TranslationOf, err))
			continue
		}
		r.TranslationDelta = append(r.TranslationDelta, delta)
	}
}

// qualityTally stores each item's judge-overlay rating as judge_quality (null
// for items without a generated response) and publishes the mean as a
// secondary field; the headline is left as the scorer made it.
type qualityTally struct {
	sum float64
	n   int
}

func (q *qualityTally) add(s *scorers.ItemScore, p scorers.Prediction, dataset string) {
	v := judge.OverlayQuality(p)
	if s.Fields == nil {
		s.Fields = map[string]any{}
	}
	s.Fields["judge_quality"] = v
	// The overlay's judges are audited against the axis's verifiable
	// outcome (s.Label: MCQ correct, IFEval strict pass).
	s.Audit = append(s.Audit, judge.OverlayRows(p, s.Label, dataset)...)
	if v != nil {
		q.sum += *v
		q.n++
	}
}

func (q *qualityTally) publish(r *scorers.AxisResult) {
	if r.Secondary == nil {
		r.Secondary = map[string]any{}
	}
	if q.n > 0 {
		r.Secondary["judge_quality_mean"] = q.sum / float64(q.n)
	} else {
		r.Secondary["judge_quality_mean"] = nil
	}
	r.Secondary["judge_quality_n"] = q.n
}
