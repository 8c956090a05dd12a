package activities

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/store"
)

// putResult writes a minimal finished run's result.json into st.
func putResult(t *testing.T, st store.Store, run, model string, ms float64) {
	t.Helper()
	res := Result{BenchVersion: "glossobench-v1", RunID: run, ModelID: model, ConfigHash: "c0ffee" + model,
		Axes: map[string]AxisReport{}, Store: st.Describe()}
	res.Summary.MSPublic = &ms
	if err := putJSON(context.Background(), st, runfiles.ResultKey(run), res); err != nil {
		t.Fatal(err)
	}
}

func localStore(t *testing.T) *store.Local {
	t.Helper()
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The run's result.json is read from the store the run wrote it to and the
// row lands on the leaderboard's store, naming the run's store.
func TestAppendLeaderboardReadsTheRunStore(t *testing.T) {
	ctx := context.Background()
	runs, board := localStore(t), localStore(t)
	putResult(t, runs, "m-1", "m", 0.5)
	a := New(zerolog.Nop())
	path, err := a.AppendLeaderboard(ctx, AppendInput{RunRef: RunRef{RunID: "m-1", StoreURI: runs.Dir()}, Lang: "ms", BoardStoreURI: board.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	if path != "leaderboard/ms/v1/leaderboard.jsonl" {
		t.Errorf("path %q", path)
	}
	rows, err := leaderboard.Read(ctx, board, "ms", 1)
	if err != nil || len(rows) != 1 {
		t.Fatalf("board rows %v, %v", rows, err)
	}
	if r := rows[0]; r.ModelID != "m" || r.RunID != "m-1" || r.RunStore != runs.Describe() || r.ResultRef != runs.Describe()+"/runs/m-1/result.json" {
		t.Errorf("row %+v", r)
	}
	if got, _ := leaderboard.Read(ctx, runs, "ms", 1); len(got) != 0 {
		t.Errorf("the run store got a leaderboard row too: %+v", got)
	}
}

// A result that is not where the run says is a non-retryable failure naming
// the run and the store: retrying cannot make it appear.
func TestAppendLeaderboardMissingResultIsNotRetried(t *testing.T) {
	runs, board := localStore(t), localStore(t)
	a := New(zerolog.Nop())
	for _, in := range []AppendInput{
		{RunRef: RunRef{RunID: "gone-1", StoreURI: runs.Dir()}, BoardStoreURI: board.Dir()},
		{RunRef: RunRef{RunID: "gone-1"}, BoardStoreURI: board.Dir()},
	} {
		_, err := a.AppendLeaderboard(context.Background(), in)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || !app.NonRetryable() || app.Type() != ErrData {
			t.Fatalf("input %+v: error %v is not a non-retryable %s", in, err, ErrData)
		}
		if !strings.Contains(err.Error(), "gone-1") || (in.StoreURI != "" && !strings.Contains(err.Error(), runs.Describe())) {
			t.Errorf("error %q does not name the run and its store", err)
		}
	}
}

// Elo reads each row's run from the store the row names, not the board's.
func TestRecomputeEloReadsRunStores(t *testing.T) {
	ctx := context.Background()
	runs, board := localStore(t), localStore(t)
	putResult(t, runs, "x-1", "x", 0.5)
	a := New(zerolog.Nop())
	if _, err := a.AppendLeaderboard(ctx, AppendInput{RunRef: RunRef{RunID: "x-1", StoreURI: runs.Dir()}, BoardStoreURI: board.Dir()}); err != nil {
		t.Fatal(err)
	}
	sum, err := a.RecomputeElo(ctx, EloInput{StoreURI: board.Dir()})
	if err != nil || len(sum.Boards) != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	// One model only, so no ranking; but the run must have been found.
	for _, n := range sum.Boards[0].Notes {
		if strings.Contains(n, "not ranked") {
			t.Errorf("note %q: the run was looked for in the wrong store", n)
		}
	}
}

// A leaderboard whose rows were altered by hand is a non-retryable failure:
// no retry mends it, and nothing is appended onto it.
func TestAppendLeaderboardOntoAlteredBoard(t *testing.T) {
	ctx := context.Background()
	runs, board := localStore(t), localStore(t)
	putResult(t, runs, "p-1", "p", 0.5)
	putResult(t, runs, "q-1", "q", 0.25)
	a := New(zerolog.Nop())
	if _, err := a.AppendLeaderboard(ctx, AppendInput{RunRef: RunRef{RunID: "p-1", StoreURI: runs.Dir()}, BoardStoreURI: board.Dir()}); err != nil {
		t.Fatal(err)
	}
	objs, _ := filepath.Glob(filepath.Join(board.Dir(), "leaderboard/ms/v1/by-hash/*.json"))
	if len(objs) != 1 {
		t.Fatalf("row objects %q", objs)
	}
	data, _ := os.ReadFile(objs[0])
	os.WriteFile(objs[0], bytes.Replace(data, []byte(`"ms":0.5`), []byte(`"ms":0.99`), 1), 0o644)
	_, err := a.AppendLeaderboard(ctx, AppendInput{RunRef: RunRef{RunID: "q-1", StoreURI: runs.Dir()}, BoardStoreURI: board.Dir()})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.NonRetryable() || !strings.Contains(err.Error(), "edited") {
		t.Fatalf("append onto an edited board: %v", err)
	}
}

// The row's hash is anchored in the run's folder, outside the board's
// store, and a retried append finds the same anchor: leaderboard.Verify
// then checks the row against it.
func TestAppendLeaderboardRowAnchorsTheRow(t *testing.T) {
	ctx := context.Background()
	runs, board := localStore(t), localStore(t)
	putResult(t, runs, "m-1", "m", 0.5)
	a := New(zerolog.Nop())
	in := AppendInput{RunRef: RunRef{RunID: "m-1", StoreURI: runs.Dir()}, BoardStoreURI: board.Dir()}
	res, err := a.AppendLeaderboardRow(ctx, in)
	if err != nil || res.Anchor == nil || res.Path != "leaderboard/ms/v1/leaderboard.jsonl" {
		t.Fatalf("AppendLeaderboardRow = %+v, %v", res, err)
	}
	objs, _ := filepath.Glob(filepath.Join(board.Dir(), "leaderboard/ms/v1/by-hash/*.json"))
	if len(objs) != 1 || filepath.Base(objs[0]) != res.Anchor.RowSHA256+".json" || res.Anchor.Seq != 0 || res.Anchor.RunID != "m-1" {
		t.Fatalf("anchor %+v, row objects %q", res.Anchor, objs)
	}
	if ok, _ := runs.Exists(ctx, runfiles.AnchorKey("m-1", res.Anchor.RowSHA256)); !ok {
		t.Fatalf("no anchor in the run's folder")
	}
	again, err := a.AppendLeaderboardRow(ctx, in)
	if err != nil || again.Anchor == nil || *again.Anchor != *res.Anchor {
		t.Fatalf("retried append = %+v, %v; want the same anchor", again, err)
	}
	open := func(ctx context.Context, uri string) (store.Store, error) { return store.Open(ctx, uri) }
	rows, unanchored, err := leaderboard.Verify(ctx, board, "ms", 1, open)
	if err != nil || len(rows) != 1 || len(unanchored) != 0 {
		t.Fatalf("Verify = %d rows, unanchored %+v, %v", len(rows), unanchored, err)
	}
}
