package leaderboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/elo"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

// EloBoard is the Elo of one leaderboard version; the full report (CIs,
// tallies, notes) is the object at Key.
type EloBoard struct {
	Dir     string             `json:"dir"`
	Key     string             `json:"key"`
	Ratings map[string]float64 `json:"ratings"`
	Notes   []string           `json:"notes,omitempty"`
}

// eloSettings are the refresh's Elo settings: Bradley–Terry (SEA-HELM's
// convention) with one virtual tie per pair so an unbeaten model stays
// finite, seeded.
var eloSettings = elo.Settings{BT: true, Prior: 1, Seed: 1, Resamples: 1000, K: 32}

var boardDir = regexp.MustCompile(`^leaderboard/[^/]+/v([0-9]+)/`)

// Majors lists the versions of the language's leaderboard in st, in order.
func Majors(ctx context.Context, st store.Store, lang string) ([]int, error) {
	keys, err := st.List(ctx, "leaderboard/"+lang+"/v")
	if err != nil {
		return nil, err
	}
	var majors []int
	for _, k := range keys {
		if m := boardDir.FindStringSubmatch(k); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && !slices.Contains(majors, n) {
				majors = append(majors, n)
			}
		}
	}
	slices.Sort(majors)
	return majors, nil
}

// RankElo ranks the latest row of every model on one leaderboard version
// by Bradley–Terry over item-level matches and writes the report beside
// the rows as leaderboard/<lang>/v<N>/elo/<id>.json, where id hashes the
// runs ranked: the store is create-only, so each set of rows gets its own
// report and a retry finds its report already there. Each row's run is
// read from the store the row names (open opens it); a row from before
// rows named their store is looked for in the leaderboard's own store.
func RankElo(ctx context.Context, st store.Store, lang string, major int, open func(context.Context, string) (store.Store, error)) (EloBoard, error) {
	board := EloBoard{Dir: Dir(lang, major)}
	rows, err := Read(ctx, st, lang, major)
	if err != nil {
		return board, err
	}
	latest := LatestByModel(rows)
	var runs []*elo.Run
	var ids []string
	for _, model := range slices.Sorted(maps.Keys(latest)) {
		row := latest[model]
		from, run := st, row.RunID
		if row.RunStore != "" && run != "" {
			var err error
			if from, err = open(ctx, row.RunStore); err != nil {
				board.Notes = append(board.Notes, fmt.Sprintf("model %s: run store %s: %v; not ranked", model, row.RunStore, err))
				continue
			}
		} else {
			var ok bool
			if run, ok = runFromResultRef(row.ResultRef); !ok {
				board.Notes = append(board.Notes, fmt.Sprintf("model %s: result_ref %q names no run of this store; not ranked", model, row.ResultRef))
				continue
			}
		}
		r, err := elo.Load(runfiles.InStore(ctx, from, run))
		if err != nil {
			board.Notes = append(board.Notes, fmt.Sprintf("model %s: %v; not ranked", model, err))
			continue
		}
		runs = append(runs, r)
		ids = append(ids, run)
	}
	if len(runs) < 2 {
		board.Notes = append(board.Notes, fmt.Sprintf("%d ranked model(s): Elo needs two", len(runs)))
		return board, nil
	}
	rep, err := elo.Rank(runs, nil, eloSettings)
	if err != nil {
		board.Notes = append(board.Notes, "no Elo: "+err.Error())
		return board, nil
	}
	rep.Notes = append(rep.Notes, board.Notes...)
	h := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	board.Key = board.Dir + "/elo/" + hex.EncodeToString(h[:8]) + ".json"
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return board, err
	}
	if err := st.Put(ctx, board.Key, append(data, '\n')); err != nil && !errors.Is(err, store.ErrExists) {
		return board, err
	}
	board.Ratings = map[string]float64{}
	for _, p := range rep.Players {
		board.Ratings[p.Player] = p.Rating
	}
	return board, nil
}

var resultRefRun = regexp.MustCompile(`(?:^|/)runs/([^/]+)/result\.json$`)

// runFromResultRef reads the run id out of a row's result_ref
// (<store>/runs/<run>/result.json).
func runFromResultRef(ref string) (string, bool) {
	m := resultRefRun.FindStringSubmatch(ref)
	if m == nil {
		return "", false
	}
	return m[1], true
}
