package leaderboard

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/runfiles"
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
