package leaderboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/glossobench/glossobench/infra/store"
)

// Note is a finding about a row made after it was appended, such as a rerun
// with identical pins that did not reproduce it (spec §5: logged as
// non-determinism). Rows never change, so notes are objects of their own,
// leaderboard/<lang>/v<major>/notes/<sha256>.json, create-only.
type Note struct {
	Seq     int    `json:"seq"` // the row the note is about
	ModelID string `json:"model_id"`
	RunID   string `json:"run_id"` // the row's run
	Kind    string `json:"kind"`   // e.g. "non-determinism"
	Text    string `json:"text"`
}

func notesPrefix(lang string, major int) string { return Dir(lang, major) + "/notes/" }

// AddNote keeps n on the leaderboard; the same note twice is kept once.
func AddNote(ctx context.Context, st store.Store, lang string, major int, n Note) error {
	if err := checkBoard(lang, major); err != nil {
		return err
	}
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	key := notesPrefix(lang, major) + hex.EncodeToString(sum[:]) + ".json"
	if err := st.Put(ctx, key, append(data, '\n')); err != nil && !errors.Is(err, store.ErrExists) {
		return fmt.Errorf("leaderboard %s: note: %w", Dir(lang, major), err)
	}
	return nil
}

// Notes are the leaderboard's notes, by row then text.
func Notes(ctx context.Context, st store.Store, lang string, major int) ([]Note, error) {
	if err := checkBoard(lang, major); err != nil {
		return nil, err
	}
	keys, err := st.List(ctx, notesPrefix(lang, major))
	if err != nil {
		return nil, fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
	}
	var out []Note
	for _, k := range keys {
		data, err := st.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("leaderboard %s: %w", Dir(lang, major), err)
		}
		var n Note
		if err := json.Unmarshal(data, &n); err != nil {
			return nil, fmt.Errorf("leaderboard %s: note %s: %w", Dir(lang, major), k, err)
		}
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Note) int {
		if a.Seq != b.Seq {
			return a.Seq - b.Seq
		}
		if a.Text < b.Text {
			return -1
		}
		if a.Text > b.Text {
			return 1
		}
		return 0
	})
	return out, nil
}
