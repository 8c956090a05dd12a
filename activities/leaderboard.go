package activities

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/leaderboard"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"go.temporal.io/sdk/temporal"
)

// RefreshInput lists the runs a leaderboard refresh keeps current.
type RefreshInput struct {
	Lang     string         `json:"lang"`      // default "ms"
	StoreURI string         `json:"store_uri"` // where the leaderboard lives
	Runs     []PrepareInput `json:"runs"`      // config and model of each leaderboard entry
}

// RefreshItem is a run whose pins changed since its last leaderboard row.
type RefreshItem struct {
	Input  PrepareInput `json:"input"`
	Reason string       `json:"reason"`
}

// RefreshPlan says which runs to redo and which are current.
type RefreshPlan struct {
	Todo    []RefreshItem `json:"todo"`
	Current []string      `json:"current"` // model ids whose latest row has the same pins
}

// PlanRefresh compares each run's pins (bench version and config hash) with
// the leaderboard and returns the runs that need a new row.
func (a *Activities) PlanRefresh(ctx context.Context, in RefreshInput) (RefreshPlan, error) {
	st, err := a.store(ctx, in.StoreURI)
	if err != nil {
		return RefreshPlan{}, err
	}
	var plan RefreshPlan
	for i, r := range in.Runs {
		cfg, err := config.Load(r.ConfigPath, config.Overrides{Model: r.Model, ModelID: r.ModelID})
		if err != nil {
			return RefreshPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("runs[%d]: %v", i, err), ErrConfig, nil)
		}
		major, err := leaderboard.BenchMajor(cfg.BenchVersion)
		if err != nil {
			return RefreshPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("runs[%d].bench_version: %v", i, err), ErrConfig, nil)
		}
		rows, err := leaderboard.Read(ctx, st, refreshLang(in), major)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return RefreshPlan{}, err
		}
		current := false
		for _, row := range rows {
			current = current || (row.ModelID == cfg.Model.ID && row.Pins["config_hash"] == cfg.Hash() && row.Pins["bench_version"] == cfg.BenchVersion)
		}
		if current {
			plan.Current = append(plan.Current, cfg.Model.ID)
			continue
		}
		item := r
		item.RunID = fmt.Sprintf("%s-%s", unsafeRunChars.ReplaceAllString(cfg.Model.ID, "_"), cfg.Hash()[:12])
		plan.Todo = append(plan.Todo, RefreshItem{Input: item, Reason: "no leaderboard row with these pins"})
	}
	return plan, nil
}

var unsafeRunChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func refreshLang(in RefreshInput) string {
	if in.Lang == "" {
		return "ms"
	}
	return in.Lang
}

// AppendInput names a finished run and the leaderboard language.
type AppendInput struct {
	RunRef
	Lang string `json:"lang"`
}

// AppendLeaderboard appends a finished run's row to the append-only
// leaderboard; a row already there (a retried append) counts as done.
func (a *Activities) AppendLeaderboard(ctx context.Context, in AppendInput) (string, error) {
	st, err := a.store(ctx, in.StoreURI)
	if err != nil {
		return "", err
	}
	var res runfiles.Result
	if err := getJSON(ctx, st, runfiles.ResultKey(in.RunID), &res); err != nil {
		return "", err
	}
	row, err := leaderboard.RowOf(&res, st.Describe()+"/"+runfiles.ResultKey(in.RunID))
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError(err.Error(), ErrData, nil)
	}
	major, err := leaderboard.BenchMajor(res.BenchVersion)
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError(err.Error(), ErrData, nil)
	}
	lang := in.Lang
	if lang == "" {
		lang = "ms"
	}
	if err := leaderboard.Append(ctx, st, lang, major, row); err != nil && !errors.Is(err, leaderboard.ErrDuplicate) {
		return "", err
	}
	return leaderboard.JSONLPath(lang, major), nil
}
