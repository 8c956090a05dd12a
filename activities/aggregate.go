package activities

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
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
	cfg := m.Config
	res := Result{
		BenchVersion: in.Plan.BenchVersion, SchemaVersion: in.Plan.SchemaVersion, PluginVersions: map[string]string{},
		RunID: in.RunID, ModelID: in.Plan.ModelID, ConfigHash: in.Plan.ConfigHash, Seed: cfg.Run.Seed,
		Axes: map[string]AxisReport{}, Store: st.Describe(), ExcludedJudges: in.Plan.ExcludedJudges,
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
	if id := m.Plan.ModelIdentity; id != (ModelIdentity{}) {
		res.ModelIdentity = &id
	}
	s := &res.Summary
	if err := getJSON(ctx, st, runfiles.DedupKey(in.RunID), &s.Dedup); err != nil {
		return Summary{}, err
	}
	s.NearChanceEps, s.Notes = cfg.Run.NearChanceEps, append([]string{}, in.Notes...)
	// A resume on another model (--allow-new-model) says which axes it
	// started over and which come from the earlier model.
	s.Notes = append(s.Notes, m.Plan.ModelChanges...)
	s.SkippedAxes = append([]Skip{}, in.Skipped...)
	s.SkippedNoJudge = []string{}
	s.NearChanceAxes = []string{}
	for _, sk := range in.Skipped {
		if strings.HasPrefix(sk.Reason, "skipped_no_judge") {
			s.SkippedNoJudge = append(s.SkippedNoJudge, sk.Axis)
		}
	}
	contamination := map[string]*float64{}
	for _, ad := range s.Dedup.Axes {
		contamination[ad.Axis] = ad.ContaminationRate
	}

	var exp []stats.AxisSample
	var pubScores, pubWeights []float64
	var pubCIs []*[2]float64
	var pooled scorers.Pooled
	var ranking []stats.RankingAxis
	var zeroWeight []Skip
	tiers := map[string]string{} // axis → which tier and means it is in
	s.Warnings = append([]string{}, m.Plan.ModelChanges...)
	for _, o := range in.Outcomes {
		r := o.Result
		res.PluginVersions[r.Axis] = r.Version
		rep := AxisReport{AxisResult: r, Weight: o.Weight, Tier: o.Tier, ScoresKey: runfiles.ScoresKey(in.RunID, r.Axis), Usage: o.Usage}
		rep.Profile = MeasurementProfile{N: r.N, ScorerType: r.ScorerType, Leakage: o.Audit, StageNotes: o.StageNotes, ContaminationRate: "no corpus"}
		if c := contamination[r.Axis]; c != nil {
			rep.Profile.ContaminationRate = *c
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
			rep.Discriminates = norm > cfg.Run.NearChanceEps
			if !rep.Discriminates {
				s.NearChanceAxes = append(s.NearChanceAxes, r.Axis)
			}
			ra := stats.RankingAxis{Name: r.Axis, Score: *r.Score, Weight: o.Weight, Public: o.Tier != "selfbuilt", Discriminates: rep.Discriminates}
			ranking = append(ranking, ra)
			switch {
			case !stats.InMS(o.Weight):
				// Weight 0 reports the axis outside every mean (spec §2).
				zeroWeight = append(zeroWeight, Skip{Axis: r.Axis, Reason: "weight 0"})
				tiers[r.Axis] = tierName(o.Tier) + " tier, weight 0: in no mean score"
			case !ra.Public:
				exp = append(exp, stats.AxisSample{Name: r.Axis, Weight: o.Weight, Values: []float64{*r.Score}})
				tiers[r.Axis] = "selfbuilt (experimental) tier: in ms_experimental only"
			default:
				pubScores = append(pubScores, *r.Score)
				pubWeights = append(pubWeights, o.Weight)
				pubCIs = append(pubCIs, r.CI95)
				s.MSAxes = append(s.MSAxes, r.Axis)
				tiers[r.Axis] = "public tier: in ms_public, ms_pooled"
				err := runfiles.EachJSONL(ctx, st, runfiles.ScoresKey(in.RunID, r.Axis), pooled.Axis(r.Metric))
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return Summary{}, err
				}
			}
		} else {
			s.SkippedAxes = append(s.SkippedAxes, Skip{Axis: r.Axis, Reason: "no score: " + strings.Join(r.Notes, "; ")})
		}
		for _, n := range r.Notes {
			if strings.HasPrefix(n, "WARNING") {
				s.Warnings = append(s.Warnings, r.Axis+": "+n)
			}
		}
		res.Axes[r.Axis] = rep
	}
	rankWeights, nearChance := stats.RankingWeights(ranking)
	s.MSRankingAxes, s.MSRankingLeftOut = []string{}, nonNilStrings(nearChance)
	var rv, rw []float64
	for _, ra := range ranking {
		if w, ok := rankWeights[ra.Name]; ok {
			s.MSRankingAxes = append(s.MSRankingAxes, ra.Name)
			rv, rw = append(rv, ra.Score), append(rw, w)
			tiers[ra.Name] += ", ms_ranking"
		} else if slices.Contains(nearChance, ra.Name) {
			tiers[ra.Name] += "; near chance, so not in ms_ranking"
		}
	}
	s.MSRanking = stats.WeightedMean(rv, rw)
	s.MSRankingNote = fmt.Sprintf("ms_ranking (what rankings use) is over the public axes that discriminate: %s", orNone(s.MSRankingAxes))
	if len(nearChance) > 0 {
		s.MSRankingNote += fmt.Sprintf("; leaves out near-chance axes (chance-normalised score <= %g): %s", cfg.Run.NearChanceEps, strings.Join(nearChance, ", "))
	}
	s.MSPublic = stats.WeightedMean(pubScores, pubWeights)
	if len(exp) > 0 {
		var v, w []float64
		for _, e := range exp {
			v, w = append(v, e.Values[0]), append(w, e.Weight)
		}
		s.MSExperimental = stats.WeightedMean(v, w)
	}
	s.MSPooled = pooled.Value()
	s.MSCI95 = stats.MSInterval(pubScores, pubWeights, pubCIs, cfg.Run.BootstrapResamples, uint64(cfg.Run.Seed))
	total := len(in.Plan.Axes) + len(in.Plan.Skipped)
	s.MSNote = fmt.Sprintf("ms_public is over %d of %d configured axes (%s)", len(s.MSAxes), total, strings.Join(s.MSAxes, ", "))
	if out := leftOut(cfg, slices.Concat(in.Plan.Skipped, s.SkippedAxes, zeroWeight), s.MSAxes); len(out) > 0 {
		s.MSNote += "; not in the denominator: " + strings.Join(out, ", ")
	}
	if len(s.NearChanceAxes) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("near-chance axes %v carry noise, not signal: ms_ranking, which every ranking view uses, leaves them out", s.NearChanceAxes))
	}
	if len(tiers) > 0 {
		var parts []string
		for _, axis := range slices.Sorted(maps.Keys(tiers)) {
			parts = append(parts, axis+": "+tiers[axis])
		}
		s.Notes = append(s.Notes, "tiers: "+strings.Join(parts, "; "))
	}

	if err := putJSON(ctx, st, runfiles.ResultKey(in.RunID), res); err != nil {
		return Summary{}, err
	}
	out := Summary{
		StoreURI: in.StoreURI, ResultKey: runfiles.ResultKey(in.RunID), MSPublic: s.MSPublic, MSPooled: s.MSPooled, MSExperimental: s.MSExperimental,
		MSCI95: s.MSCI95, Axes: map[string]*float64{}, NearChanceAxes: s.NearChanceAxes, Skipped: s.SkippedAxes,
		MSRanking: s.MSRanking, MSRankingAxes: s.MSRankingAxes, Warnings: s.Warnings,
	}
	for name, r := range res.Axes {
		out.Axes[name] = r.Score
	}
	if l, ok := st.(*store.Local); ok {
		out.ResultPath = filepath.Join(l.Dir(), filepath.FromSlash(runfiles.ResultKey(in.RunID)))
	}
	return out, nil
}

// leftOut names each configured axis that is not in the mean score, with why.
func leftOut(cfg *config.Config, skipped []Skip, in []string) []string {
	why := map[string]string{}
	for _, sk := range skipped {
		why[sk.Axis] = sk.Reason
	}
	var out []string
	for _, axis := range slices.Sorted(maps.Keys(cfg.Axes)) {
		if slices.Contains(in, axis) {
			continue
		}
		reason := why[axis]
		if reason == "" {
			reason = "no public-tier score"
		}
		out = append(out, axis+" ("+reason+")")
	}
	return out
}

// tierName is an axis's tier as configured, "" being public.
func tierName(tier string) string {
	if tier == "selfbuilt" {
		return "selfbuilt (experimental)"
	}
	return "public"
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// registersStated names the registers in a register mix, sorted, or
// "unstated" when the data labels none.
func registersStated(mix any) string {
	var names []string
	switch m := mix.(type) {
	case map[string]float64:
		names = slices.Sorted(maps.Keys(m))
	case map[string]any:
		names = slices.Sorted(maps.Keys(m))
	}
	if len(names) == 0 {
		return "unstated"
	}
	return strings.Join(names, ", ")
}
