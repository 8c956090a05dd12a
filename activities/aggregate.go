package activities

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/glossobench/glossobench/infra/results/aggregate"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

// Aggregate computes the mean-score tiers and their CI, flags near-chance
// axes, writes result.json and returns the summary.
func (a *Activities) Aggregate(ctx context.Context, in AggregateInput) (Summary, error) {
	defer beat(ctx, nil)()
	defer a.forgetRun(in.RunID) // the run's last stage: this worker needs nothing of it after
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return Summary{}, err
	}
	var dedup DedupResult
	if err := getJSON(ctx, st, runfiles.DedupKey(in.RunID), &dedup); err != nil {
		return Summary{}, err
	}
	res, err := aggregate.Result(aggregate.Input{
		RunID: in.RunID, Manifest: m, Plan: in.Plan, Outcomes: in.Outcomes, Skipped: in.Skipped, Notes: in.Notes,
		Dedup: dedup, Store: st.Describe(),
		Scores: func(axis string, add func(scorers.ItemScore) error) error {
			err := runfiles.EachJSONL(ctx, st, runfiles.ScoresKey(in.RunID, axis), add)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return err
		},
	})
	if err != nil {
		return Summary{}, err
	}
	if err := putJSON(ctx, st, runfiles.ResultKey(in.RunID), res); err != nil {
		return Summary{}, err
	}
	return summaryOf(in.StoreURI, st, res), nil
}

// summaryOf is the headline of res, and where it is, for the workflow.
func summaryOf(uri string, st store.Store, res Result) Summary {
	s := res.Summary
	out := Summary{
		StoreURI: uri, ResultKey: runfiles.ResultKey(res.RunID), MSPublic: s.MSPublic, MSPooled: s.MSPooled, MSExperimental: s.MSExperimental,
		MSCI95: s.MSCI95, Axes: map[string]*float64{}, NearChanceAxes: s.NearChanceAxes, Skipped: s.SkippedAxes,
		MSRanking: s.MSRanking, MSRankingAxes: s.MSRankingAxes, Warnings: s.Warnings,
	}
	for name, r := range res.Axes {
		out.Axes[name] = r.Score
	}
	if l, ok := st.(*store.Local); ok {
		out.ResultPath = filepath.Join(l.Dir(), filepath.FromSlash(runfiles.ResultKey(res.RunID)))
	}
	return out
}
