package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/elo"
	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

// LoadEloRun reads a run's result.json and per-item scores from the store.
func LoadEloRun(ctx context.Context, st store.Store, run string) (*elo.Run, error) {
	return elo.Load(runfiles.InStore(ctx, st, run))
}

// EloInput names the leaderboards whose Elo a refresh recomputes.
type EloInput struct {
	StoreURI string `json:"store_uri"`
	Lang     string `json:"lang"`
}

// EloSummary is what RecomputeElo wrote, per leaderboard version.
type EloSummary struct {
	Boards []EloBoard `json:"boards"`
}

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

// RecomputeElo ranks the latest row of every model on each version of the
// language's leaderboard by Bradley–Terry over item-level matches and writes
// the report beside the rows as leaderboard/<lang>/v<N>/elo/<id>.json, where
// id hashes the runs ranked: the store is create-only, so each set of rows
// gets its own report and a retried activity finds its report already there.
func (a *Activities) RecomputeElo(ctx context.Context, in EloInput) (EloSummary, error) {
	defer beat(ctx, nil)()
	st, err := a.store(ctx, in.StoreURI)
	if err != nil {
		return EloSummary{}, err
	}
	lang := in.Lang
	if lang == "" {
		lang = "ms"
	}
	keys, err := st.List(ctx, "leaderboard/"+lang+"/v")
	if err != nil {
		return EloSummary{}, err
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
	var out EloSummary
	for _, major := range majors {
		b, err := recomputeBoard(ctx, st, lang, major, a.store)
		if err != nil {
			return out, err
		}
		out.Boards = append(out.Boards, b)
	}
	return out, nil
}

// recomputeBoard ranks one leaderboard version. Each row's run is read from
// the store the row names (open opens it); a row from before rows named their
// store is looked for in the leaderboard's own store.
func recomputeBoard(ctx context.Context, st store.Store, lang string, major int, open func(context.Context, string) (store.Store, error)) (EloBoard, error) {
	board := EloBoard{Dir: leaderboard.Dir(lang, major)}
	rows, err := leaderboard.Read(ctx, st, lang, major)
	if err != nil {
		return board, err
	}
	latest := map[string]leaderboard.Row{}
	for _, r := range rows {
		if prev, ok := latest[r.ModelID]; !ok || r.Seq > prev.Seq {
			latest[r.ModelID] = r
		}
	}
	var runs []*elo.Run
	var ids []string
	for _, model := range sortedModelIDs(latest) {
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
		r, err := LoadEloRun(ctx, from, run)
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
	if err := putJSON(ctx, st, board.Key, rep); err != nil && !errors.Is(err, store.ErrExists) {
		return board, err
	}
	board.Ratings = map[string]float64{}
	for _, p := range rep.Players {
		board.Ratings[p.Player] = p.Rating
	}
	return board, nil
}

func sortedModelIDs(m map[string]leaderboard.Row) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
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
