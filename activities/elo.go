package activities

import (
	"context"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
)

// EloInput names the leaderboards whose Elo a refresh recomputes.
type EloInput struct {
	StoreURI string `json:"store_uri"`
	Lang     string `json:"lang"`
}

// EloSummary is what RecomputeElo wrote, per leaderboard version.
type EloSummary struct {
	Boards []EloBoard `json:"boards"`
}

// EloBoard is the Elo of one leaderboard version.
type EloBoard = leaderboard.EloBoard

// RecomputeElo ranks the latest row of every model on each version of the
// language's leaderboard by Bradley–Terry over item-level matches
// (leaderboard.RankElo) and writes each version's report beside its rows.
func (a *Activities) RecomputeElo(ctx context.Context, in EloInput) (EloSummary, error) {
	defer beat(ctx, nil)()
	st, err := a.store(ctx, in.StoreURI)
	if err != nil {
		return EloSummary{}, err
	}
	lang := leaderboard.Language(in.Lang)
	majors, err := leaderboard.Majors(ctx, st, lang)
	if err != nil {
		return EloSummary{}, err
	}
	var out EloSummary
	for _, major := range majors {
		b, err := leaderboard.RankElo(ctx, st, lang, major, a.store)
		if err != nil {
			return out, err
		}
		out.Boards = append(out.Boards, b)
	}
	return out, nil
}
