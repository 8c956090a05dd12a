package aggregate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

// tiering sorts the scored axes into the mean scores they count in
// (scorers.MeanOf) and says so per axis.
type tiering struct {
	exp        []stats.AxisSample
	pubScores  []float64
	pubWeights []float64
	pubCIs     []*[2]float64
	pooled     scorers.Pooled
	ranking    []stats.RankingAxis
	zeroWeight []runfiles.Skip
	tiers      map[string]string // axis → which tier and means it is in
}

// add takes one axis's report into s and the means; scores reads the item
// scores of a public axis for ms_pooled.
func (t *tiering) add(s *runfiles.ResultSummary, rep runfiles.AxisReport, scores func(string, func(scorers.ItemScore) error) error) error {
	if t.tiers == nil {
		t.tiers = map[string]string{}
	}
	r := rep.AxisResult
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "WARNING") {
			s.Warnings = append(s.Warnings, r.Axis+": "+n)
		}
	}
	if r.Score == nil {
		s.SkippedAxes = append(s.SkippedAxes, runfiles.Skip{Axis: r.Axis, Reason: "no score: " + strings.Join(r.Notes, "; ")})
		return nil
	}
	if !rep.Discriminates {
		s.NearChanceAxes = append(s.NearChanceAxes, r.Axis)
	}
	t.ranking = append(t.ranking, stats.RankingAxis{Name: r.Axis, Score: *r.Score, Weight: rep.Weight, Public: rep.Tier != scorers.TierSelfbuilt, Discriminates: rep.Discriminates})
	switch scorers.MeanOf(rep.Weight, rep.Tier) {
	case scorers.InNoMean:
		// Weight 0 reports the axis outside every mean (spec §2).
		t.zeroWeight = append(t.zeroWeight, runfiles.Skip{Axis: r.Axis, Reason: "weight 0"})
		t.tiers[r.Axis] = tierName(rep.Tier) + " tier, weight 0: in no mean score"
	case scorers.InMSExperimental:
		t.exp = append(t.exp, stats.AxisSample{Name: r.Axis, Weight: rep.Weight, Values: []float64{*r.Score}})
		t.tiers[r.Axis] = tierName(rep.Tier) + " tier: in ms_experimental only"
	default:
		t.pubScores = append(t.pubScores, *r.Score)
		t.pubWeights = append(t.pubWeights, rep.Weight)
		t.pubCIs = append(t.pubCIs, r.CI95)
		s.MSAxes = append(s.MSAxes, r.Axis)
		t.tiers[r.Axis] = tierName(rep.Tier) + " tier: in ms_public, ms_pooled"
		return scores(r.Axis, t.pooled.Axis(r.Metric))
	}
	return nil
}

// means sets the mean scores, their interval and the ranking mean in s.
func (t *tiering) means(s *runfiles.ResultSummary, cfg *config.Config) {
	rankWeights, nearChance := stats.RankingWeights(t.ranking)
	s.MSRankingAxes, s.MSRankingLeftOut = []string{}, nonNilStrings(nearChance)
	var rv, rw []float64
	for _, ra := range t.ranking {
		if w, ok := rankWeights[ra.Name]; ok {
			s.MSRankingAxes = append(s.MSRankingAxes, ra.Name)
			rv, rw = append(rv, ra.Score), append(rw, w)
			t.tiers[ra.Name] += ", ms_ranking"
		} else if slices.Contains(nearChance, ra.Name) {
			t.tiers[ra.Name] += "; near chance, so not in ms_ranking"
		}
	}
	s.MSRanking = stats.WeightedMean(rv, rw)
	s.MSRankingNote = fmt.Sprintf("ms_ranking (what rankings use) is over the public axes that discriminate: %s", cmp.Or(strings.Join(s.MSRankingAxes, ", "), "none"))
	if len(nearChance) > 0 {
		s.MSRankingNote += fmt.Sprintf("; leaves out near-chance axes (chance-normalised score <= %g): %s", cfg.Run.NearChanceEps, strings.Join(nearChance, ", "))
	}
	s.MSPublic = stats.WeightedMean(t.pubScores, t.pubWeights)
	if len(t.exp) > 0 {
		var v, w []float64
		for _, e := range t.exp {
			v, w = append(v, e.Values[0]), append(w, e.Weight)
		}
		s.MSExperimental = stats.WeightedMean(v, w)
	}
	s.MSPooled = t.pooled.Value()
	s.MSCI95 = stats.MSInterval(t.pubScores, t.pubWeights, t.pubCIs, cfg.Run.BootstrapResamples, uint64(cfg.Run.Seed))
}

// leftOut names each configured axis that is not in the mean score, with why.
func leftOut(cfg *config.Config, skipped []runfiles.Skip, in []string) []string {
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
	if tier == scorers.TierSelfbuilt {
		return scorers.TierSelfbuilt + " (experimental)"
	}
	return scorers.TierPublic
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
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
