package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"

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
			plan.Failed = append(plan.Failed, RefreshFailure{ModelID: cmp.Or(r.ModelID, r.ConfigPath), Reason: fmt.Sprintf("runs[%d]: %v", i, err)})
		}
		cfg, major, err := leaderboard.LoadRefreshRun(r)
		if err != nil {
			fail(err)
			continue
		}
		rows, err := leaderboard.Read(ctx, st, in.Language(), major)
		if errors.Is(err, leaderboard.ErrAltered) {
			return RefreshPlan{}, dataError("%v", err)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return RefreshPlan{}, err
		}
		pending, runID, err := leaderboard.Pending(cfg, rows)
		switch {
		case err != nil:
			fail(err)
		case !pending:
			plan.Current = append(plan.Current, cfg.Model.ID)
		default:
			item := r
			item.RunID = runID
			plan.Todo = append(plan.Todo, RefreshItem{Input: item, ModelID: cfg.Model.ID, Reason: "no leaderboard row with these pins"})
		}
	}
	return plan, nil
}

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
	row, major, err := leaderboard.RunRow(ctx, runs, in.RunID, cmp.Or(in.ResultKey, runfiles.ResultKey(in.RunID)))
	if re := (*leaderboard.ResultError)(nil); errors.As(err, &re) {
		return AppendResult{}, dataError("%v", err)
	}
	if err != nil {
		return AppendResult{}, err
	}
	board := runs
	if in.BoardStoreURI != "" {
		if board, err = a.store(ctx, in.BoardStoreURI); err != nil {
			return AppendResult{}, err
		}
	}
	lang := leaderboard.Language(in.Lang)
	anc, err := leaderboard.Add(ctx, board, lang, major, row)
	if errors.Is(err, leaderboard.ErrAltered) {
		return AppendResult{}, dataError("%v", err)
	}
	if err != nil {
		return AppendResult{}, err
	}
	// The row's hash goes to the run's folder, outside the leaderboard's
	// store: an edit that re-hashes the newest row and repoints its slot
	// is then seen by leaderboard.Verify. A duplicate from another run is
	// that run's to anchor.
	out := AppendResult{Path: leaderboard.JSONLPath(lang, major)}
	if anc.RunID == in.RunID {
		if err := leaderboard.WriteAnchor(ctx, runs, anc); err != nil {
			return AppendResult{}, err
		}
		out.Anchor = &anc
	}
	return out, nil
}
