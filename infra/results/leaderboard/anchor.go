package leaderboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

// The chain protects every row but the newest: nothing on the leaderboard
// names the newest row's hash, so an edit that re-hashes it and repoints
// its slot reads as a valid leaderboard. Each row's hash is therefore also
// kept outside the leaderboard, in the folder of the run it was made from
// (runfiles.AnchorKey), and the refresh workflow's result lists the anchors
// of the rows it appended. Verify checks every row against its run's anchor.

// Anchor is a row's record outside the leaderboard.
type Anchor struct {
	Board      string `json:"board"` // leaderboard/<lang>/v<major>
	Lang       string `json:"lang"`
	Major      int    `json:"major"`
	BoardStore string `json:"board_store"` // the leaderboard's store
	Seq        int    `json:"seq"`
	ModelID    string `json:"model_id"`
	RunID      string `json:"run_id"`
	RowSHA256  string `json:"row_sha256"` // of the row object's bytes
}

// Locate is the anchor of the row with row's (model_id, pins) on the
// leaderboard: what Append wrote, or found already there.
func Locate(ctx context.Context, st store.Store, lang string, major int, row Row) (Anchor, error) {
	if err := checkBoard(lang, major); err != nil {
		return Anchor{}, err
	}
	b := newBoard(lang, major)
	if err := b.load(ctx, st, lang, major); err != nil {
		return Anchor{}, err
	}
	for i := range b.rows {
		if sameIdentity(&b.rows[i], &row) {
			r := b.rows[i]
			sum := sha256.Sum256(b.raw[i])
			return Anchor{Board: Dir(lang, major), Lang: lang, Major: major, BoardStore: st.Describe(), Seq: r.Seq, ModelID: r.ModelID, RunID: r.RunID, RowSHA256: hex.EncodeToString(sum[:])}, nil
		}
	}
	return Anchor{}, fmt.Errorf("leaderboard %s: no row of model %s with pins %v", Dir(lang, major), row.ModelID, row.Pins)
}

// WriteAnchor records a in the folder of its run in the run's store,
// create-only; a retry that finds the same anchor there is done.
func WriteAnchor(ctx context.Context, runs store.Store, a Anchor) error {
	if a.RunID == "" {
		return fmt.Errorf("leaderboard %s: row %d names no run to anchor it in", a.Board, a.Seq)
	}
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	key := runfiles.AnchorKey(a.RunID, a.RowSHA256)
	if err := runs.Put(ctx, key, append(data, '\n')); err != nil && !errors.Is(err, store.ErrExists) {
		return fmt.Errorf("leaderboard %s: anchor of row %d: %w", a.Board, a.Seq, err)
	}
	return nil
}

// Unanchored is a row Verify could not check against an anchor, and why.
type Unanchored struct {
	Seq     int
	ModelID string
	Reason  string
}

// Opener opens the store a row's run was written to (Row.RunStore).
type Opener func(ctx context.Context, uri string) (store.Store, error)

// Verify reads the leaderboard as Read does and checks each row against its
// run's anchors: a row whose run anchors another hash at the row's place
// (board and seq) was rewritten after it was appended, an error wrapping
// ErrAltered. A row with no anchor at all (appended before anchors, by hand,
// or its run's store out of reach) is returned in unanchored: only the
// chain vouches for it, and for the newest row nothing does.
func Verify(ctx context.Context, st store.Store, lang string, major int, open Opener) (rows []Row, unanchored []Unanchored, err error) {
	if err := checkBoard(lang, major); err != nil {
		return nil, nil, err
	}
	b := newBoard(lang, major)
	if err := b.load(ctx, st, lang, major); err != nil {
		return nil, nil, err
	}
	dir := Dir(lang, major)
	runStores := map[string]store.Store{"": st}
	for i, r := range b.rows {
		miss := func(why string) {
			unanchored = append(unanchored, Unanchored{Seq: r.Seq, ModelID: r.ModelID, Reason: why})
		}
		if r.RunID == "" || runfiles.CheckRunID(r.RunID) != nil {
			miss("the row names no run")
			continue
		}
		runs, ok := runStores[r.RunStore]
		if !ok {
			if runs, err = open(ctx, r.RunStore); err != nil {
				runs = nil
			}
			runStores[r.RunStore] = runs
		}
		if runs == nil {
			miss(fmt.Sprintf("run store %s cannot be opened", r.RunStore))
			continue
		}
		sum := sha256.Sum256(b.raw[i])
		have := hex.EncodeToString(sum[:])
		anchors, err := RunAnchors(ctx, runs, r.RunID)
		if errors.Is(err, ErrAltered) {
			return nil, nil, fmt.Errorf("leaderboard %s: row %d (%s): run %s in %s: %w", dir, r.Seq, r.ModelID, r.RunID, runs.Describe(), err)
		}
		if err != nil {
			miss(err.Error())
			continue
		}
		var other []Anchor
		found := false
		for _, a := range anchors {
			if a.Board != dir || a.Seq != r.Seq {
				continue
			}
			if a.RowSHA256 == have {
				found = true
				break
			}
			other = append(other, a)
		}
		switch {
		case found:
		case len(other) > 0:
			return nil, nil, fmt.Errorf("leaderboard %s: row %d (%s) hashes to %s, but its run %s in %s anchors %s there: the row was rewritten after it was appended: %w",
				dir, r.Seq, r.ModelID, have, r.RunID, runs.Describe(), other[0].RowSHA256, ErrAltered)
		default:
			miss(fmt.Sprintf("run %s in %s has no anchor for it", r.RunID, runs.Describe()))
		}
	}
	return b.rows, unanchored, nil
}

// RunAnchors are the anchors a run keeps of its rows: which leaderboards
// the run is on, where, and at which row; each is checked against the hash
// its object is named after.
func RunAnchors(ctx context.Context, runs store.Store, run string) ([]Anchor, error) {
	keys, err := runs.List(ctx, runfiles.AnchorsPrefix(run))
	if err != nil {
		return nil, err
	}
	var out []Anchor
	for _, k := range keys {
		data, err := runs.Get(ctx, k)
		if err != nil {
			return nil, err
		}
		var a Anchor
		if err := json.Unmarshal(data, &a); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if k != runfiles.AnchorKey(run, a.RowSHA256) {
			return nil, fmt.Errorf("anchor %s records row_sha256 %s, not its name: %w", k, a.RowSHA256, ErrAltered)
		}
		out = append(out, a)
	}
	return out, nil
}

// DescribeUnanchored is one line naming the rows Verify could not anchor.
func DescribeUnanchored(u []Unanchored) string {
	var parts []string
	for _, x := range u {
		parts = append(parts, fmt.Sprintf("row %d (%s): %s", x.Seq, x.ModelID, x.Reason))
	}
	return strings.Join(parts, "; ")
}
