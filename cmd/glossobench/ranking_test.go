package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/store"
)

// TestLeaderboardRanksByRankingMean: x has the lower ms_public but nlu is
// near chance for x, so the two rank on knowledge alone, where x leads.
func TestLeaderboardRanksByRankingMean(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := []leaderboard.Row{
		{ModelID: "x", MS: 0.6, Scores: map[string]float64{"knowledge": 0.9, "nlu": 0.3}, RankingWeights: map[string]float64{"knowledge": 1}},
		{ModelID: "y", MS: 0.7, Scores: map[string]float64{"knowledge": 0.5, "nlu": 0.9}, RankingWeights: map[string]float64{"knowledge": 1, "nlu": 1}},
	}
	for v := 1; v <= 2; v++ {
		for _, r := range rows {
			r.Pins = map[string]string{"v": string(rune('0' + v))}
			if err := leaderboard.Append(ctx, st, "ms", v, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out, errs := runCmd(leaderboardMain, "show", "--store", dir)
	if code != 0 || !regexp.MustCompile(`(?m)^1\s+x\s+0\.9000\s+0\.6000`).MatchString(out) ||
		!strings.Contains(out, "over the axes that discriminate for every row: knowledge") || !strings.Contains(out, "left out of the ranking (near chance, or not scored, for some row): nlu") {
		t.Errorf("show: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCmd(compareMain, "v1", "v2", "--store", dir)
	if code != 0 || !regexp.MustCompile(`x\s+MS_ranking \(knowledge\)\s+0\.9000\s+0\.9000`).MatchString(out) ||
		!regexp.MustCompile(`y\s+MS_ranking \(knowledge, nlu\)\s+0\.7000\s+0\.7000`).MatchString(out) {
		t.Errorf("compare: exit %d\n%s%s", code, out, errs)
	}
}

// TestRunFoldersRankByRankingMean: concord and correlate over run folders
// rank on the axes that discriminate for every run. By ms_public m2 leads;
// nlu is near chance for m1, so both rank on knowledge, where m1 leads.
func TestRunFoldersRankByRankingMean(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, "r1", "m1", 0.5, []string{"knowledge", "nlu"}, map[string][]float64{"knowledge": {1, 1, 1, 0}, "nlu": {0, 0, 0, 0}})
	writeRun(t, root, "r2", "m2", 0.7, []string{"knowledge", "nlu"}, map[string][]float64{"knowledge": {1, 1, 0, 0}, "nlu": {1, 1, 1, 1}})
	writeRun(t, root, "r3", "m3", 0.2, []string{"knowledge", "nlu"}, map[string][]float64{"knowledge": {1, 0, 0, 0}, "nlu": {0, 0, 1, 0}})
	res := filepath.Join(root, "runs", "r1", "result.json")
	data, _ := os.ReadFile(res)
	var doc map[string]any
	json.Unmarshal(data, &doc)
	doc["axes"].(map[string]any)["nlu"].(map[string]any)["discriminates"] = false
	data, _ = json.Marshal(doc)
	os.WriteFile(res, data, 0o644)
	ext := writeTemp(t, "ext.csv", "m1,3\nm2,2\nm3,1\n")
	code, stdout, stderr := runCmd(concordMain, "--scores", root, "--external", ext, "--name", "x")
	if code != 0 || !strings.Contains(stdout, "agreement: strong") || !strings.Contains(stdout, "discriminate for every run: knowledge; left out (near chance, or not scored, for some run): nlu") {
		t.Errorf("concord: exit %d\n%s%s", code, stdout, stderr)
	}
	ours := writeTemp(t, "ext.json", `{"m1": 3, "m2": 2, "m3": 1}`)
	code, stdout, stderr = runCmd(correlateMain, "--ours", root, "--external", ours)
	if code != 0 || !strings.Contains(stdout, "verdict: converged") {
		t.Errorf("correlate: exit %d\n%s%s", code, stdout, stderr)
	}
}
