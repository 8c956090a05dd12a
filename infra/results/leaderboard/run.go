package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

// RowOf is the leaderboard row of a run; path names result.json in
// errors and becomes the row's result_ref.
func RowOf(res *runfiles.Result, path string) (Row, error) {
	row := Row{ModelID: res.ModelID, RunID: res.RunID, BenchVersion: res.BenchVersion, ResultRef: path,
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
			ranking = append(ranking, stats.RankingAxis{Name: axis, Score: *a.Score, Weight: a.Weight, Public: a.Tier != scorers.TierSelfbuilt, Discriminates: a.Discriminates})
		}
	}
	row.RankingWeights, _ = stats.RankingWeights(ranking)
	if m := res.ModelMeta; m != nil {
		row.ModelMeta = ModelMeta{Family: m.Family, ModelClass: m.ModelClass, Params: m.Params}
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

// A ResultError is a run's result.json that gives no row: missing,
// unreadable, without a public mean score or a bench version's major.
// Waiting does not mend it.
type ResultError struct{ msg string }

func (e *ResultError) Error() string { return e.msg }

func resultError(format string, a ...any) error {
	return &ResultError{fmt.Sprintf(format, a...)}
}

// RunRow is the row of the run whose result.json is at key in runs, the
// run's store, and the major of its bench version: the leaderboard it
// joins. What the result gives no row is a *ResultError.
func RunRow(ctx context.Context, runs store.Store, run, key string) (Row, int, error) {
	data, err := runs.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return Row{}, 0, resultError("run %s: no result.json at %s in store %s", run, key, runs.Describe())
	}
	if err != nil {
		return Row{}, 0, err
	}
	ref := runs.Describe() + "/" + key
	var res runfiles.Result
	if err := runfiles.DecodeJSON(ref, data, &res); err != nil {
		return Row{}, 0, resultError("run %s: %s: %v", run, ref, err)
	}
	row, err := RowOf(&res, ref)
	if err != nil {
		return Row{}, 0, resultError("%v", err)
	}
	row.RunStore = runs.Describe()
	major, err := BenchMajor(res.BenchVersion)
	if err != nil {
		return Row{}, 0, resultError("%s: field bench_version: %v", ref, err)
	}
	return row, major, nil
}

// Add appends row to the leaderboard (a row already there, from a retried
// append, counts as done), rebuilds the derived leaderboard.jsonl a reader
// of spec §5 expects, and returns where the row sits: its anchor.
func Add(ctx context.Context, board store.Store, lang string, major int, row Row) (Anchor, error) {
	if err := Append(ctx, board, lang, major, row); err != nil && !errors.Is(err, ErrDuplicate) {
		return Anchor{}, err
	}
	if err := Publish(ctx, board, lang, major); err != nil {
		return Anchor{}, err
	}
	return Locate(ctx, board, lang, major, row)
}
