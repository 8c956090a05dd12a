package activities

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

// RefreshInput is a leaderboard refresh (REFRESH.json).
type RefreshInput = leaderboard.Refresh

// RefreshItem is a run whose pins changed since its last leaderboard row.
type RefreshItem struct {
	Input   PrepareInput `json:"input"`
	ModelID string       `json:"model_id"`
	Reason  string       `json:"reason"`
}

// RefreshFailure is a model that got no row this refresh, and why.
type RefreshFailure struct {
	ModelID string `json:"model_id"`
	RunID   string `json:"run_id,omitempty"`
	Reason  string `json:"reason"`
}

// RefreshPlan says which runs to redo and which are current.
type RefreshPlan struct {
	Todo    []RefreshItem    `json:"todo"`
	Current []string         `json:"current"`          // model ids whose latest row has the same pins
	Failed  []RefreshFailure `json:"failed,omitempty"` // runs whose config could not be read
}

// PlanRefresh compares each run's pins (bench version and config hash) with
// the leaderboard and returns the runs that need a new row.
func (a *Activities) PlanRefresh(ctx context.Context, in RefreshInput) (RefreshPlan, error) {
	defer beat(ctx, nil)()
	st, err := a.store(ctx, in.StoreURI)
	if err != nil {
		return RefreshPlan{}, err
	}
	if in.MaxParallel < 0 {
		return RefreshPlan{}, ConfigError("max_parallel %d: want 1 or more (0 or absent means 1)", in.MaxParallel)
	}
	var plan RefreshPlan
	for i, r := range in.Runs {
		// A model whose config does not load fails alone; the others go on.
		fail := func(err error) {
			id := r.ModelID
			if id == "" {
				id = r.ConfigPath
			}
			plan.Failed = append(plan.Failed, RefreshFailure{ModelID: id, Reason: fmt.Sprintf("runs[%d]: %v", i, err)})
		}
		if err := leaderboard.CheckRefreshRun(r); err != nil {
			fail(err)
			continue
		}
		cfg, err := config.Load(r.ConfigPath, config.Overrides{Model: r.Model, ModelID: r.ModelID})
		if err != nil {
			fail(err)
			continue
		}
		major, err := leaderboard.BenchMajor(cfg.BenchVersion)
		if err != nil {
			fail(fmt.Errorf("bench_version: %w", err))
			continue
		}
		rows, err := leaderboard.Read(ctx, st, in.Language(), major)
		if errors.Is(err, leaderboard.ErrAltered) {
			return RefreshPlan{}, dataError("%v", err)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return RefreshPlan{}, err
		}
		hash, err := cfg.ContentHash()
		if err != nil {
			fail(err)
			continue
		}
		// Only a GGUF file's SHA-256 is known without running: swapped
		// weights behind the same path are a new row.
		var sum string
		if p, ok := registry.GGUFPath(cfg.Model.Spec); ok {
			if sum, err = config.FileSHA256(p); err != nil {
				fail(fmt.Errorf("model: %w", err))
				continue
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
		plan.Todo = append(plan.Todo, RefreshItem{Input: item, ModelID: cfg.Model.ID, Reason: "no leaderboard row with these pins"})
	}
	return plan, nil
}

var unsafeRunChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// AppendInput names a finished run, where it was written, and the
// leaderboard it joins.
type AppendInput struct {
	RunRef           // the run and the store it wrote to (its config's store)
	ResultKey string `json:"result_key,omitempty"` // default runs/<run_id>/result.json
	Lang      string `json:"lang"`
	// BoardStoreURI is the leaderboard's store; empty means the run's own.
	BoardStoreURI string `json:"board_store_uri,omitempty"`
}

// RowAnchor is a leaderboard row's hash as the run's folder records it.
type RowAnchor = leaderboard.Anchor

// AppendResult is where a run's row went: the leaderboard file and the
// row's anchor, its hash as the run's folder records it.
type AppendResult struct {
	Path   string     `json:"path"`
	Anchor *RowAnchor `json:"anchor,omitempty"`
}

// AppendLeaderboard is AppendLeaderboardRow returning only the path, as
// refresh workflows recorded before the anchor version expect.
func (a *Activities) AppendLeaderboard(ctx context.Context, in AppendInput) (string, error) {
	res, err := a.AppendLeaderboardRow(ctx, in)
	return res.Path, err
}

// AppendLeaderboardRow reads a finished run's result.json from the store the
// run wrote it to, appends the run's row to the append-only leaderboard in
// the board's store and anchors the row's hash in the run's folder; a row
// already there (a retried append) counts as done. A result that is
// missing or unreadable is not retried: waiting does not make it appear.
func (a *Activities) AppendLeaderboardRow(ctx context.Context, in AppendInput) (AppendResult, error) {
	defer beat(ctx, nil)()
	if in.StoreURI == "" {
		return AppendResult{}, dataError("run %s: no store named for its result.json (the run did not report where it wrote it)", in.RunID)
	}
	runs, err := a.store(ctx, in.StoreURI)
	if err != nil {
		return AppendResult{}, err
	}
	key := in.ResultKey
	if key == "" {
		key = runfiles.ResultKey(in.RunID)
	}
	data, err := runs.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return AppendResult{}, dataError("run %s: no result.json at %s in store %s", in.RunID, key, runs.Describe())
	}
	if err != nil {
		return AppendResult{}, err
	}
	ref := runs.Describe() + "/" + key
	var res runfiles.Result
	if err := runfiles.DecodeJSON(ref, data, &res); err != nil {
		return AppendResult{}, dataError("run %s: %s: %v", in.RunID, ref, err)
	}
	row, err := leaderboard.RowOf(&res, ref)
	if err != nil {
		return AppendResult{}, dataError("%v", err)
	}
	row.RunStore = runs.Describe()
	major, err := leaderboard.BenchMajor(res.BenchVersion)
	if err != nil {
		return AppendResult{}, dataError("%s: field bench_version: %v", ref, err)
	}
	board := runs
	if in.BoardStoreURI != "" {
		if board, err = a.store(ctx, in.BoardStoreURI); err != nil {
			return AppendResult{}, err
		}
	}
	lang := in.Lang
	if lang == "" {
		lang = "ms"
	}
	err = leaderboard.Append(ctx, board, lang, major, row)
	if errors.Is(err, leaderboard.ErrAltered) {
		return AppendResult{}, dataError("%v", err)
	}
	if err != nil && !errors.Is(err, leaderboard.ErrDuplicate) {
		return AppendResult{}, err
	}
	// The derived leaderboard.jsonl a reader of §5 expects, rebuilt from
	// the rows (a retry rebuilds it again).
	if err := leaderboard.Publish(ctx, board, lang, major); err != nil {
		return AppendResult{}, err
	}
	// The row's hash goes to the run's folder, outside the leaderboard's
	// store: an edit that re-hashes the newest row and repoints its slot
	// is then seen by leaderboard.Verify. A duplicate from another run is
	// that run's to anchor.
	out := AppendResult{Path: leaderboard.JSONLPath(lang, major)}
	anc, err := leaderboard.Locate(ctx, board, lang, major, row)
	if err != nil {
		return AppendResult{}, err
	}
	if anc.RunID == in.RunID {
		if err := leaderboard.WriteAnchor(ctx, runs, anc); err != nil {
			return AppendResult{}, err
		}
		out.Anchor = &anc
	}
	return out, nil
}
