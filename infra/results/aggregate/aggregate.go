// Package aggregate makes a run's result.json from what its stages learned
// about each axis: the mean-score tiers and their interval, the ranking
// mean, the near-chance axes, each axis's measurement profile and the notes
// that say what is in which mean and why. EvalRun's Aggregate stage writes
// what Result returns.
package aggregate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

// Input is what a run's result.json is made of.
type Input struct {
	RunID    string
	Manifest *runfiles.Manifest // the resolved config, its model meta and identity
	Plan     runfiles.Plan      // the plan the run went by
	Outcomes []runfiles.AxisOutcome
	Skipped  []runfiles.Skip
	Notes    []string
	Dedup    runfiles.DedupResult
	Store    string // the run's store as result.json describes it
	// Scores reads an axis's item scores into add, for ms_pooled.
	Scores func(axis string, add func(scorers.ItemScore) error) error
}

// Result is the run's result.json.
func Result(in Input) (runfiles.Result, error) {
	cfg, m := in.Manifest.Config, in.Manifest
	res := runfiles.Result{
		BenchVersion: in.Plan.BenchVersion, SchemaVersion: in.Plan.SchemaVersion, PluginVersions: map[string]string{},
		RunID: in.RunID, ModelID: in.Plan.ModelID, ConfigHash: in.Plan.ConfigHash, Seed: cfg.Run.Seed,
		Axes: map[string]runfiles.AxisReport{}, Store: in.Store, ExcludedJudges: in.Plan.ExcludedJudges,
	}
	if cfg.Run.Limit != nil {
		res.Limit = *cfg.Run.Limit
	}
	// model_meta as Prepare resolved it; the config's model.meta wins (also
	// in a manifest written without the resolved meta).
	meta := m.ModelMeta
	if cfg.Model.Meta != (config.ModelMeta{}) {
		meta = cfg.Model.Meta
	}
	if meta != (config.ModelMeta{}) {
		res.ModelMeta = &meta
	}
	if id := m.Plan.ModelIdentity; id != (runfiles.ModelIdentity{}) {
		res.ModelIdentity = &id
	}
	s := &res.Summary
	s.Dedup = in.Dedup
	s.NearChanceEps, s.Notes = cfg.Run.NearChanceEps, append([]string{}, in.Notes...)
	// A resume on another model (--allow-new-model) says which axes it
	// started over and which come from the earlier model.
	s.Notes = append(s.Notes, m.Plan.ModelChanges...)
	s.SkippedAxes = append([]runfiles.Skip{}, in.Skipped...)
	s.SkippedNoJudge = []string{}
	s.NearChanceAxes = []string{}
	for _, sk := range in.Skipped {
		if strings.HasPrefix(sk.Reason, "skipped_no_judge") {
			s.SkippedNoJudge = append(s.SkippedNoJudge, sk.Axis)
		}
	}
	s.Warnings = append([]string{}, m.Plan.ModelChanges...)
	var t tiering
	for _, o := range in.Outcomes {
		rep := report(in.RunID, o, in.Dedup, cfg.Run.NearChanceEps)
		res.PluginVersions[o.Result.Axis] = o.Result.Version
		res.Axes[o.Result.Axis] = rep
		if err := t.add(s, rep, in.Scores); err != nil {
			return runfiles.Result{}, err
		}
	}
	t.means(s, cfg)
	total := len(in.Plan.Axes) + len(in.Plan.Skipped)
	s.MSNote = fmt.Sprintf("ms_public is over %d of %d configured axes (%s)", len(s.MSAxes), total, strings.Join(s.MSAxes, ", "))
	if out := leftOut(cfg, slices.Concat(in.Plan.Skipped, s.SkippedAxes, t.zeroWeight), s.MSAxes); len(out) > 0 {
		s.MSNote += "; not in the denominator: " + strings.Join(out, ", ")
	}
	if len(s.NearChanceAxes) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("near-chance axes %v carry noise, not signal: ms_ranking, which every ranking view uses, leaves them out", s.NearChanceAxes))
	}
	if len(t.tiers) > 0 {
		var parts []string
		for _, axis := range slices.Sorted(maps.Keys(t.tiers)) {
			parts = append(parts, axis+": "+t.tiers[axis])
		}
		s.Notes = append(s.Notes, "tiers: "+strings.Join(parts, "; "))
	}
	return res, nil
}

// report is an axis's part of result.json: its result and measurement
// profile, and whether it discriminates (its chance-normalised score is
// above eps).
func report(run string, o runfiles.AxisOutcome, dedup runfiles.DedupResult, eps float64) runfiles.AxisReport {
	r := o.Result
	rep := runfiles.AxisReport{AxisResult: r, Weight: o.Weight, Tier: o.Tier, ScoresKey: runfiles.ScoresKey(run, r.Axis), Usage: o.Usage}
	rep.Profile = runfiles.MeasurementProfile{N: r.N, ScorerType: r.ScorerType, Leakage: o.Audit, StageNotes: o.StageNotes, ContaminationRate: "no corpus"}
	for _, ad := range dedup.Axes {
		if ad.Axis == r.Axis && ad.ContaminationRate != nil {
			rep.Profile.ContaminationRate = *ad.ContaminationRate
		}
	}
	rep.Profile.RegisterMix = r.Secondary["register_mix"]
	rep.Profile.Register = registersStated(rep.Profile.RegisterMix)
	if k, ok := r.Secondary["inter_judge_kappa"].(*float64); ok {
		rep.Profile.InterJudgeKappa = k
	} else if k, ok := r.Secondary["inter_judge_kappa"].(float64); ok {
		rep.Profile.InterJudgeKappa = &k
	}
	if r.Score != nil {
		norm := 1.0
		if r.Chance < 1 {
			norm = (*r.Score - r.Chance) / (1 - r.Chance)
		}
		rep.Discriminates = norm > eps
	}
	return rep
}
