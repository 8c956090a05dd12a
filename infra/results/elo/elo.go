// Package elo ranks models from their runs' item-level results: every item
// two runs both scored is a pairwise match (spec §4). Exact-match axes work
// with zero judges; MT matches come from the judges, pairwise when they are
// asked (PairMatches), else from each run's own judge score.
package elo

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

// PairAxis names the matches judges decided by comparing two answers.
const PairAxis = "mt-pairwise"

// Run is one model's run as Elo sees it.
type Run struct {
	RunID   string
	ModelID string
	Family  string // model_meta.family, for self-judge exclusion
	Player  string // ModelID, else RunID, else where
	Where   string // the run folder, for messages
	// Scores holds axis → item id → score for the axes Elo can use.
	Scores map[string]map[string]float64
	// NearChance are the run's axes whose score is near chance (result.json
	// discriminates: false); no run plays a match on them (spec §4).
	NearChance []string
	// Unranked are the run's other scored axes its ranking mean leaves out,
	// axis → why (self-built tier, weight 0): Elo plays only the axes the
	// ranking mean uses (stats.RankingWeights).
	Unranked map[string]string
}

// Load reads a run folder: result.json and the per-item scores of every
// exact-match axis and of a judged MT axis that its ranking mean uses.
func Load(f *runfiles.Folder) (*Run, error) {
	res, err := f.Result()
	if err != nil {
		return nil, err
	}
	if res.Axes == nil {
		return nil, fmt.Errorf("%s: field axes: missing", f.Path(runfiles.ResultName))
	}
	r := &Run{RunID: res.RunID, ModelID: res.ModelID, Where: f.Where(), Scores: map[string]map[string]float64{}, Unranked: map[string]string{}}
	if res.ModelMeta != nil {
		r.Family = res.ModelMeta.Family
	}
	r.Player = cmp.Or(r.ModelID, r.RunID, r.Where)
	var ranking []stats.RankingAxis
	for axis, a := range res.Axes {
		ranking = append(ranking, stats.RankingAxis{Name: axis, Weight: a.Weight, Public: a.Tier != scorers.TierSelfbuilt, Discriminates: a.Discriminates})
	}
	ranked, near := stats.RankingWeights(ranking)
	r.NearChance = near
	for axis, a := range res.Axes {
		if _, ok := ranked[axis]; !ok {
			switch {
			case slices.Contains(near, axis):
			case a.Tier == scorers.TierSelfbuilt:
				r.Unranked[axis] = "self-built (experimental) tier"
			default:
				r.Unranked[axis] = "weight 0"
			}
			continue
		}
		if a.ScorerType != scorers.ScorerRule && !(axis == "mt" && a.ScorerType == scorers.ScorerJudge) {
			continue
		}
		items := map[string]float64{}
		err := f.EachScore(axis, func(s scorers.ItemScore) error {
			items[s.ItemID] = s.Score
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue // the axis produced no per-item scores
		}
		if err != nil {
			return nil, err
		}
		r.Scores[axis] = items
	}
	return r, nil
}

// Settings choose the rating method and the matches.
type Settings struct {
	BT        bool    // Bradley–Terry maximum likelihood instead of sequential Elo
	Seed      uint64  // match order of Elo and the bootstrap
	Resamples int     // bootstrap resamples for the 95% CIs
	K         float64 // Elo update step
	Prior     float64 // Bradley–Terry virtual ties between every pair that met
	Ties      bool    // count equal results as ties instead of dropping them
	Axes      []string
}

// Player is one model in the ranking.
type Player struct {
	stats.RatingCI
	Wins   int      `json:"wins"`
	Losses int      `json:"losses"`
	Ties   int      `json:"ties"`
	Runs   []string `json:"runs"`
}

// Report is a ranking with how it was made.
type Report struct {
	Method    string         `json:"method"` // elo | bradley-terry
	Seed      uint64         `json:"seed"`
	Resamples int            `json:"resamples"`
	Matches   int            `json:"matches"`
	ByAxis    map[string]int `json:"matches_by_axis"`
	Skipped   int            `json:"skipped_resamples"`
	Players   []Player       `json:"players"`
	Notes     []string       `json:"notes"`
}

// Matches builds the pairwise matches: on every axis both runs scored, every
// shared item is a match. Exact-match axes need 0/1 scores (an axis with any
// other score is skipped with a note); on MT the higher judge score wins.
// Equal results are ties, kept only with Ties.
func Matches(runs []*Run, set Settings) (matches []stats.Match, byAxis map[string]int, notes []string) {
	byAxis = map[string]int{}
	binary := map[string]bool{}
	for _, r := range runs {
		for axis, items := range r.Scores {
			if _, seen := binary[axis]; !seen {
				binary[axis] = true
			}
			for _, s := range items {
				if s != 0 && s != 1 {
					binary[axis] = false
				}
			}
		}
	}
	nearChance := map[string][]string{} // axis → the players it is near chance for
	for _, r := range runs {
		for _, a := range r.NearChance {
			nearChance[a] = append(nearChance[a], r.Player)
		}
	}
	unranked := map[string][]string{} // axis → "player (why)" for runs whose ranking mean leaves it out
	for _, r := range runs {
		for a, why := range r.Unranked {
			unranked[a] = append(unranked[a], r.Player+" ("+why+")")
		}
	}
	for a, who := range unranked {
		if len(set.Axes) == 0 || slices.Contains(set.Axes, a) {
			slices.Sort(who)
			notes = append(notes, fmt.Sprintf("axis %s: not in the ranking mean of %s; not used", a, strings.Join(who, ", ")))
		}
	}
	var axes []string
	for a, ok := range binary {
		if len(set.Axes) > 0 && !slices.Contains(set.Axes, a) {
			continue
		}
		if who := nearChance[a]; len(who) > 0 {
			slices.Sort(who)
			notes = append(notes, fmt.Sprintf("axis %s: near chance for %s; not used (spec §4: near-chance axes do not rank)", a, strings.Join(who, ", ")))
			continue
		}
		if len(unranked[a]) > 0 {
			continue // noted above
		}
		if !ok && a != "mt" {
			notes = append(notes, fmt.Sprintf("axis %s: scores are not 0/1 exact match; not used", a))
			continue
		}
		axes = append(axes, a)
	}
	slices.Sort(axes)
	slices.Sort(notes)
	for i := 0; i < len(runs); i++ {
		for j := i + 1; j < len(runs); j++ {
			a, b := runs[i], runs[j]
			for _, axis := range axes {
				sa, sb := a.Scores[axis], b.Scores[axis]
				if sa == nil || sb == nil {
					continue
				}
				for _, id := range sharedIDs(sa, sb) {
					x, y := sa[id], sb[id]
					var score float64
					switch {
					case x > y:
						score = 1
					case x < y:
						score = 0
					default:
						if !set.Ties {
							continue
						}
						score = 0.5
					}
					matches = append(matches, stats.Match{A: a.Player, B: b.Player, Score: score})
					byAxis[axis]++
				}
			}
		}
	}
	return matches, byAxis, notes
}

// sharedIDs returns the item ids both maps hold, sorted so the match order
// before the seeded shuffle is deterministic.
func sharedIDs[V any](a, b map[string]V) []string {
	ids := make([]string, 0, len(a))
	for id := range a {
		if _, ok := b[id]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Rank rates the runs. judged are matches the judges decided pairwise
// (PairMatches); when there are any, they replace the MT matches read off
// each run's own judge score.
func Rank(runs []*Run, judged []stats.Match, set Settings) (Report, error) {
	rep := Report{Method: "elo", Seed: set.Seed, Resamples: set.Resamples, Notes: []string{}}
	if set.BT {
		rep.Method = "bradley-terry"
	}
	if len(runs) < 2 {
		return rep, fmt.Errorf("need at least two runs, got %d", len(runs))
	}
	if set.Resamples < 1 {
		return rep, errors.New("resamples must be at least 1")
	}
	seen := map[string]string{}
	for _, r := range runs {
		if prev, dup := seen[r.Player]; dup {
			return rep, fmt.Errorf("model %q appears in two runs (%s and %s): rank one run per model", r.Player, prev, r.Where)
		}
		seen[r.Player] = r.Where
	}
	if len(judged) > 0 {
		set.Axes = slices.DeleteFunc(slices.Clone(axesOrAll(runs, set.Axes)), func(a string) bool { return a == "mt" })
	}
	var matches []stats.Match
	byAxis, notes := map[string]int{}, []string(nil)
	if len(judged) == 0 || len(set.Axes) > 0 {
		matches, byAxis, notes = Matches(runs, set)
	}
	if len(judged) > 0 {
		matches = append(matches, judged...)
		byAxis[PairAxis] = len(judged)
		notes = append(notes, "mt: matches decided by pairwise judges (both presentation orders), not by single-answer scores")
	}
	rep.ByAxis, rep.Matches = byAxis, len(matches)
	rep.Notes = append(rep.Notes, notes...)
	if len(matches) == 0 {
		return rep, errors.New("no pairwise matches: the runs share no item on an exact-match axis (or every shared item is a tie; set ties (--ties) to count them)")
	}
	rate := func(m []stats.Match) (map[string]float64, error) {
		return stats.Elo(m, stats.EloOptions{K: set.K, Seed: set.Seed})
	}
	if set.BT {
		rate = func(m []stats.Match) (map[string]float64, error) {
			return stats.BradleyTerry(m, stats.BTOptions{Prior: set.Prior})
		}
	}
	cis, skipped, err := stats.RatingsBootstrap(matches, rate, set.Resamples, set.Seed, 0.95)
	if err != nil {
		return rep, err
	}
	rep.Skipped = skipped
	if skipped > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d resamples could not be rated and were skipped", skipped, set.Resamples))
	}
	tally := map[string]*Player{}
	for _, c := range cis {
		tally[c.Player] = &Player{RatingCI: c, Runs: []string{}}
	}
	for _, m := range matches {
		a, b := tally[m.A], tally[m.B]
		switch m.Score {
		case 1:
			a.Wins++
			b.Losses++
		case 0:
			a.Losses++
			b.Wins++
		default:
			a.Ties++
			b.Ties++
		}
	}
	for _, r := range runs {
		if p, ok := tally[r.Player]; ok {
			p.Runs = append(p.Runs, r.RunID)
		} else {
			rep.Notes = append(rep.Notes, fmt.Sprintf("model %s (run %s) played no match and is not ranked", r.Player, r.RunID))
		}
	}
	for _, c := range cis {
		rep.Players = append(rep.Players, *tally[c.Player])
	}
	return rep, nil
}

// axesOrAll returns the chosen axes, or every axis some run scored.
func axesOrAll(runs []*Run, chosen []string) []string {
	if len(chosen) > 0 {
		return chosen
	}
	scored := map[string]bool{}
	for _, r := range runs {
		for a := range r.Scores {
			scored[a] = true
		}
	}
	return slices.Sorted(maps.Keys(scored))
}
