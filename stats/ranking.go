package stats

import (
	"maps"
	"slices"
)

// The ranking mean (spec §4): an axis whose chance-normalised score is at or
// below the near-chance epsilon is reported but excluded from cross-model
// ranking, because it carries noise, not signal. The ranking mean is the
// weighted mean of the public axes that discriminate; ms_public stays the
// mean of every public axis that produced a score.

// RankingAxis is one scored axis of a run as the ranking sees it.
type RankingAxis struct {
	Name          string
	Score         float64
	Weight        float64
	Public        bool // public tier: self-built axes never rank
	Discriminates bool // chance-normalised score above the near-chance epsilon
}

// RankingWeights returns axis → weight for the axes a run ranks on: public,
// discriminating and of positive weight. nearChance lists its public axes
// left out for being near chance, sorted.
func RankingWeights(axes []RankingAxis) (weights map[string]float64, nearChance []string) {
	weights = map[string]float64{}
	for _, a := range axes {
		switch {
		case !a.Public || !InMS(a.Weight):
		case !a.Discriminates:
			nearChance = append(nearChance, a.Name)
		default:
			weights[a.Name] = a.Weight
		}
	}
	slices.Sort(nearChance)
	return weights, nearChance
}

// RankingEntry is one run on a board: its per-axis headline scores and the
// weights of the axes it ranks on (RankingWeights).
type RankingEntry struct {
	Scores  map[string]float64
	Weights map[string]float64
}

// CommonRanking ranks runs together on the axes that rank for every one of
// them, so that no model is ranked on an axis that is noise for another.
// means[i] is entry i's weighted mean over axes (nil when no axis is common);
// leftOut lists the axes some but not every run ranks on. Both lists are
// sorted.
func CommonRanking(entries []RankingEntry) (means []*float64, axes, leftOut []string) {
	count := map[string]int{}
	for _, e := range entries {
		for a := range e.Weights {
			if _, ok := e.Scores[a]; ok {
				count[a]++
			}
		}
	}
	for _, a := range slices.Sorted(maps.Keys(count)) {
		if count[a] == len(entries) {
			axes = append(axes, a)
		} else {
			leftOut = append(leftOut, a)
		}
	}
	means = make([]*float64, len(entries))
	for i, e := range entries {
		var num, den float64
		for _, a := range axes {
			num += e.Weights[a] * e.Scores[a]
			den += e.Weights[a]
		}
		if den > 0 {
			m := num / den
			means[i] = &m
		}
	}
	return means, axes, leftOut
}
