package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/leaderboard"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/stats"
	"go.temporal.io/sdk/temporal"
)

// LeaderboardRow is the leaderboard row of a run; path names result.json in
// errors and becomes the row's result_ref.
func LeaderboardRow(res *Result, path string) (leaderboard.Row, error) {
	row := leaderboard.Row{ModelID: res.ModelID, BenchVersion: res.BenchVersion, ResultRef: path,
		Pins: map[string]string{"bench_version": res.BenchVersion, "config_hash": res.ConfigHash}, Scores: map[string]float64{}}
	for axis, v := range res.PluginVersions {
		row.Pins["plugin/"+axis] = v
	}
	if id := res.ModelIdentity; id != nil {
		for k, v := range map[string]string{"model_sha256": id.SHA256, "server_model": id.ServerModel, "model_revision": id.Revision} {
			if v != "" {
				row.Pins[k] = v
			}
		}
	}
	if res.Summary.MSPublic == nil {
		return row, fmt.Errorf("%s: field summary.ms_public is null: a run without a public mean score has no leaderboard row", path)
	}
	row.MS = *res.Summary.MSPublic
	if ci := res.Summary.MSCI95; ci != nil {
		row.MSCI95 = []float64{ci[0], ci[1]}
	}
	var ranking []stats.RankingAxis
	for axis, a := range res.Axes {
		if a.Score != nil {
			row.Scores[axis] = *a.Score
			ranking = append(ranking, stats.RankingAxis{Name: axis, Score: *a.Score, Weight: a.Weight, Public: a.Tier != "selfbuilt", Discriminates: a.Discriminates})
		}
	}
	row.RankingWeights, _ = stats.RankingWeights(ranking)
	if res.ModelMeta != nil {
		b, err := json.Marshal(res.ModelMeta)
		if err != nil {
			return row, fmt.Errorf("%s: field model_meta: %w", path, err)
		}
		var m config.ModelMeta
		if err := json.Unmarshal(b, &m); err != nil {
			return row, fmt.Errorf("%s: field model_meta: %w", path, err)
		}
		row.ModelMeta = leaderboard.ModelMeta{Family: m.Family, ModelClass: m.ModelClass, Params: m.Params}
		row.ReasoningMode = m.ReasoningMode
	}
	if n := res.Summary.NearChanceAxes; len(n) > 0 {
		row.Notes = append(row.Notes, "near-chance axes: "+strings.Join(n, ", "))
	}
	return row, row.Validate()
}

var majorRE = regexp.MustCompile(`(?:^|[^0-9A-Za-z])v?([0-9]+)(?:\.[0-9]+)*$`)

// BenchMajor reads the major version from a bench_version such as
// "glossobench-v1" or "glossobench-v2.3".
func BenchMajor(v string) (int, error) {
	m := majorRE.FindStringSubmatch(v)
	if m == nil {
		return 0, fmt.Errorf("%q has no major version (want e.g. glossobench-v1)", v)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q: major version must be at least 1", v)
	}
	return n, nil
}

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
		major, err := BenchMajor(cfg.BenchVersion)
		if err != nil {
			return RefreshPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("runs[%d].bench_version: %v", i, err), ErrConfig, nil)
		}
		rows, err := leaderboard.Read(ctx, st, refreshLang(in), major)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return RefreshPlan{}, err
		}
		hash, err := cfg.ContentHash()
		if err != nil {
			return RefreshPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("runs[%d]: %v", i, err), ErrConfig, nil)
		}
		// Only a GGUF file's SHA-256 is known without running: swapped
		// weights behind the same path are a new row.
		var sum string
		if p, ok := strings.CutPrefix(cfg.Model.Spec, "gguf:"); ok {
			if sum, err = config.FileSHA256(p); err != nil {
				return RefreshPlan{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("runs[%d].model: %v", i, err), ErrConfig, nil)
			}
		}
		current := false
		for _, row := range rows {
			current = current || (row.ModelID == cfg.Model.ID && row.Pins["config_hash"] == hash && row.Pins["bench_version"] == cfg.BenchVersion &&
				row.Pins["model_sha256"] == sum && row.Pins["model_revision"] == cfg.Model.Revision)
		}
		if current {
			plan.Current = append(plan.Current, cfg.Model.ID)
			continue
		}
		item := r
		item.RunID = fmt.Sprintf("%s-%s", unsafeRunChars.ReplaceAllString(cfg.Model.ID, "_"), hash[:12])
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
	var res Result
	if err := getJSON(ctx, st, ResultKey(in.RunID), &res); err != nil {
		return "", err
	}
	row, err := LeaderboardRow(&res, st.Describe()+"/"+ResultKey(in.RunID))
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError(err.Error(), ErrData, nil)
	}
	major, err := BenchMajor(res.BenchVersion)
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
