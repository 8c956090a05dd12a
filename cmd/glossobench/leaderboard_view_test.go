package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/results/viewer"
	"github.com/glossobench/glossobench/infra/store"
)

// TestViewerLeaderboardIsLeaderboardShow: the viewer's /leaderboard ranks
// the same rows in the same order, from 1, with the same ranking means, as
// `leaderboard show`, on a board where ms_public and the ranking mean
// disagree and a row's ranking weights leave an axis out.
func TestViewerLeaderboardIsLeaderboardShow(t *testing.T) {
	dir := t.TempDir()
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := []leaderboard.Row{
		{ModelID: "m-public-high", ModelMeta: leaderboard.ModelMeta{ModelClass: "base"}, MS: 0.6, Scores: map[string]float64{"nlu": 0.2, "knowledge": 0.3}},
		{ModelID: "m-public-low", ModelMeta: leaderboard.ModelMeta{ModelClass: "base"}, MS: 0.3, Scores: map[string]float64{"nlu": 0.8, "knowledge": 0.7}},
		{ModelID: "m-mid", ModelMeta: leaderboard.ModelMeta{ModelClass: "base"}, MS: 0.5, Scores: map[string]float64{"nlu": 0.5, "knowledge": 0.1},
			RankingWeights: map[string]float64{"nlu": 2, "knowledge": 1}},
		{ModelID: "i-b", ModelMeta: leaderboard.ModelMeta{ModelClass: "instruct"}, MS: 0.9, Scores: map[string]float64{"nlu": 0.1}},
		{ModelID: "i-a", ModelMeta: leaderboard.ModelMeta{ModelClass: "instruct"}, MS: 0.1, Scores: map[string]float64{"nlu": 0.4}},
	}
	for _, r := range rows {
		if err := leaderboard.Append(context.Background(), st, "ms", 1, r); err != nil {
			t.Fatal(err)
		}
	}

	var out, errb strings.Builder
	if code := leaderboardMain([]string{"show", "--store", dir}, &out, &errb); code != 0 {
		t.Fatalf("leaderboard show: exit %d: %s", code, errb.String())
	}
	var cli []string
	class := ""
	for line := range strings.Lines(out.String()) {
		if m := regexp.MustCompile(`, class (\S+) \(`).FindStringSubmatch(line); m != nil {
			class = m[1]
			continue
		}
		if f := strings.Fields(line); len(f) > 3 && regexp.MustCompile(`^\d+$`).MatchString(f[0]) {
			cli = append(cli, class+" "+f[0]+" "+f[1]+" "+f[2])
		}
	}

	srv := httptest.NewServer(viewer.New(st))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/leaderboard")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var web []string
	for _, m := range regexp.MustCompile(`data-class="([^"]+)"|data-model="([^"]+)" data-rank="(\d+)"><td class="num rank">\d+</td><td>[^<]*</td><td class="num mean" data-value="[^"]*">([^<]*)<`).FindAllStringSubmatch(string(body), -1) {
		if m[1] != "" {
			class = m[1]
			continue
		}
		web = append(web, class+" "+m[3]+" "+m[2]+" "+m[4])
	}
	if len(cli) != len(rows) || strings.Join(web, "\n") != strings.Join(cli, "\n") {
		t.Errorf("viewer leaderboard:\n%s\nleaderboard show:\n%s\n(show printed:\n%s)", strings.Join(web, "\n"), strings.Join(cli, "\n"), out.String())
	}
	// The order is the ranking mean's, not ms_public's.
	if len(cli) > 0 && !strings.Contains(cli[0], "base 1 m-public-low") {
		t.Errorf("first base row %q, want m-public-low (highest ranking mean)", cli[0])
	}
}
