package viewer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/internal/pagetest"

	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

// plantedOutput is model output that must be shown as text.
const plantedOutput = `<script>document.documentElement.setAttribute("data-pwned","yes")</script> planted answer`

// fakeStore writes the release tests' genuine fake run and, beside its
// axes, a generated axis "big" of n items, and returns the store folder.
func fakeStore(t testing.TB, n int) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := fakerun.WriteRun(dir, fakerun.Options{}); err != nil {
		t.Fatal(err)
	}
	writeBigAxis(t, filepath.Join(dir, "runs", "fake-run", "big"), n)
	return dir
}

// bigOutcome is item i's score and flag in the generated axis: a third
// each correct, wrong and partial; every seventh truncated.
func bigOutcome(i int) (float64, string) {
	score := []float64{1, 0, 0.5}[i%3]
	if i%7 == 0 {
		return score, "truncated"
	}
	return score, ""
}

func bigDataset(i int) string { return []string{"dsa", "dsb"}[i%2] }

func writeBigAxis(t testing.TB, dir string, n int) {
	t.Helper()
	const shard = 1000
	files := map[string]*bufio.Writer{}
	var closers []*os.File
	w := func(name string) *json.Encoder {
		bw, ok := files[name]
		if !ok {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			closers = append(closers, f)
			bw = bufio.NewWriter(f)
			files[name] = bw
		}
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		return enc
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s/%d", bigDataset(i), i)
		word := "plain"
		if i%1000 == 999 {
			word = "Needle"
		}
		it := scorers.Item{ID: id, Axis: "big", Dataset: bigDataset(i), Prompt: fmt.Sprintf("Soalan %d: %s text", i, word), Gold: -1, References: []string{"ref " + strconv.Itoa(i)}}
		text := fmt.Sprintf("answer %d.", i)
		if i == 0 {
			text = plantedOutput
		}
		score, flag := bigOutcome(i)
		p := scorers.Prediction{ItemID: id, Generations: []backends.Generation{{ID: id, Text: text, FinishReason: "stop"}}}
		sc := scorers.ItemScore{ItemID: id, Score: score, Rating: score, Label: score == 1, Flagged: flag}
		for _, x := range []struct {
			name string
			v    any
		}{{"items.jsonl", it}, {"scores.jsonl", sc}, {fmt.Sprintf("shards/%04d/items.jsonl", i/shard), it}, {fmt.Sprintf("shards/%04d/pred-00000.jsonl", i/shard), p}} {
			if err := w(x.name).Encode(x.v); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, bw := range files {
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range closers {
		f.Close()
	}
}

// ownScript is the viewer's own script tag, as served and as Chromium
// serialises it.
var ownScript = regexp.MustCompile(`<script src="/assets/view.js" defer(="")?></script>`)

// foreignMarkup is doc without the viewer's own script tag: a <script> left
// in it came from a run.
func foreignMarkup(doc string) string { return ownScript.ReplaceAllString(doc, "") }

func serve(t testing.TB, dir string) *httptest.Server {
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(st))
	t.Cleanup(srv.Close)
	return srv
}

func get(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b)
}

func resultJSON(t testing.TB, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "runs", "fake-run", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRunPagesShowResult: the runs page and a run's page show
// result.json's numbers, every axis with its score, interval and n.
func TestRunPagesShowResult(t *testing.T) {
	dir := fakeStore(t, 10)
	srv := serve(t, dir)
	res := resultJSON(t, dir)
	list := get(t, srv.URL+"/")
	if !strings.Contains(list, `data-run="fake-run"`) || !strings.Contains(list, "fake/model-7b") {
		t.Fatalf("runs page lacks the run:\n%s", list)
	}
	listed := pagetest.CheckNumbers(t, list, res)
	if !listed["summary.ms_public"] {
		t.Error("runs page has no ms_public")
	}
	// The ranking mean stands beside ms_public (checkNumbers compared its value).
	if v, _ := pagetest.Lookup(res, "summary.ms_ranking"); !listed["summary.ms_ranking"] || v == nil {
		t.Errorf("runs page shows no ms_ranking (result.json has %v)", v)
	}
	page := get(t, srv.URL+"/run/fake-run/")
	seen := pagetest.CheckNumbers(t, page, res)
	for _, f := range []string{"summary.ms_public", "summary.ms_ci95.0", "summary.ms_ci95.1", "summary.ms_pooled"} {
		if !seen[f] {
			t.Errorf("run page has no %s", f)
		}
	}
	axes := res["axes"].(map[string]any)
	for name := range axes {
		for _, f := range []string{"score", "ci95.0", "ci95.1", "n", "chance", "weight"} {
			if !seen["axes."+name+"."+f] {
				t.Errorf("run page has no axes.%s.%s", name, f)
			}
		}
		if !strings.Contains(page, `href="axis/`+name+`/"`) {
			t.Errorf("run page does not link axis %s", name)
		}
	}
	if strings.Contains(foreignMarkup(page), "<script") {
		t.Error("the planted note reached the run page as markup")
	}
	if !strings.Contains(page, html.EscapeString(fakerun.ScriptNote)) {
		t.Error("the planted note is not on the run page as text")
	}
	if r := get(t, srv.URL+"/run/fake-run/report"); !strings.Contains(r, "GlossoBench report") {
		t.Error("the report page is not the run's report")
	}
}

// readScores is the test's own reading of a scores.jsonl.
func readScores(t *testing.T, path string) []scorers.ItemScore {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []scorers.ItemScore
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s scorers.ItemScore
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

var articleRE = regexp.MustCompile(`<article class="item" data-id="([^"]+)" data-score="([^"]*)"[^>]*>`)

func pageIDs(doc string) []string {
	var ids []string
	for _, m := range articleRE.FindAllStringSubmatch(doc, -1) {
		ids = append(ids, html.UnescapeString(m[1]))
	}
	return ids
}

func matched(t *testing.T, doc string) int {
	t.Helper()
	m := regexp.MustCompile(`id="matched">(\d+)<`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("no match count on the page:\n%.3000s", doc)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestItemFilters: every filter keeps exactly the items of scores.jsonl it
// names, in file order, on the real fake run's knowledge axis.
func TestItemFilters(t *testing.T) {
	dir := fakeStore(t, 10)
	srv := serve(t, dir)
	scores := readScores(t, filepath.Join(dir, "runs", "fake-run", "knowledge", "scores.jsonl"))
	cases := []struct {
		query string
		keep  func(scorers.ItemScore) bool
	}{
		{"", func(scorers.ItemScore) bool { return true }},
		{"outcome=correct", func(s scorers.ItemScore) bool { return s.Score == 1 }},
		{"outcome=wrong", func(s scorers.ItemScore) bool { return s.Score == 0 }},
		{"dataset=kalahi", func(s scorers.ItemScore) bool { return strings.HasPrefix(s.ItemID, "kalahi/") }},
		{"source=" + scores[0].Source, func(s scorers.ItemScore) bool { return s.Source == scores[0].Source }},
		{"dataset=kalahi&outcome=wrong", func(s scorers.ItemScore) bool { return strings.HasPrefix(s.ItemID, "kalahi/") && s.Score == 0 }},
	}
	for _, c := range cases {
		doc := get(t, srv.URL+"/run/fake-run/axis/knowledge/?"+c.query)
		var want []string
		for _, s := range scores {
			if c.keep(s) {
				want = append(want, s.ItemID)
			}
		}
		if len(want) == 0 || len(want) == len(scores) && c.query != "" {
			t.Fatalf("%q: the fake run does not exercise this filter (%d of %d)", c.query, len(want), len(scores))
		}
		if got := pageIDs(doc); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: page shows %v, want %v", c.query, got, want)
		}
		if n := matched(t, doc); n != len(want) {
			t.Errorf("%q: count %d, want %d", c.query, n, len(want))
		}
	}
	doc := get(t, srv.URL+"/run/fake-run/axis/knowledge/")
	if !strings.Contains(doc, `<table class="choices">`) || !strings.Contains(doc, `class="gold"`) {
		t.Error("an MCQ item shows no choices with log-probabilities and gold")
	}
	resp, err := http.Get(srv.URL + "/run/fake-run/axis/knowledge/?outcome=maybe")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("outcome=maybe: %s, want 400", resp.Status)
	}
}

// TestLargeAxisPages: a 100,000-item axis pages through its items, and the
// filters and search count over all of them.
func TestLargeAxisPages(t *testing.T) {
	const n = 100_000
	dir := fakeStore(t, n)
	srv := serve(t, dir)
	base := srv.URL + "/run/fake-run/axis/big/"
	first := get(t, base)
	if got := pageIDs(first); len(got) != PageSize || got[0] != "dsa/0" || got[PageSize-1] != fmt.Sprintf("dsb/%d", PageSize-1) {
		t.Fatalf("first page: %v", got)
	}
	if matched(t, first) != n {
		t.Errorf("first page counts %d items, want %d", matched(t, first), n)
	}
	last := get(t, base+"?page=2000")
	if got := pageIDs(last); len(got) != PageSize || got[PageSize-1] != fmt.Sprintf("dsb/%d", n-1) {
		t.Fatalf("last page ends %v", got[len(got)-1:])
	}
	if strings.Contains(last, `id="next"`) || !strings.Contains(first, `id="next" href="?page=2"`) {
		t.Error("next links wrong on the first or last page")
	}
	// correct and truncated in dsb: i odd, i%3==0, i%7==0, i.e. i ≡ 21 (mod 42).
	var want []string
	for i := 0; i < n; i++ {
		if s, f := bigOutcome(i); bigDataset(i) == "dsb" && s == 1 && f == "truncated" {
			want = append(want, fmt.Sprintf("dsb/%d", i))
		}
	}
	doc := get(t, base+"?dataset=dsb&outcome=correct&flag=truncated&page=3")
	if matched(t, doc) != len(want) {
		t.Errorf("filtered count %d, want %d", matched(t, doc), len(want))
	}
	if got := pageIDs(doc); strings.Join(got, ",") != strings.Join(want[2*PageSize:3*PageSize], ",") {
		t.Errorf("filtered page 3: %v", got)
	}
	// "needle" is in the prompt of every item i%1000 == 999; "answer 4242." in one response.
	if doc := get(t, base+"?q=needle"); matched(t, doc) != n/1000 || pageIDs(doc)[0] != "dsb/999" {
		t.Errorf("search needle: %d matches, first %v", matched(t, doc), pageIDs(doc)[:1])
	}
	if doc := get(t, base+"?q=answer+4242."); strings.Join(pageIDs(doc), ",") != "dsa/4242" {
		t.Errorf("search in responses: %v", pageIDs(doc))
	}
	if strings.Contains(foreignMarkup(first), "<script") || !strings.Contains(first, html.EscapeString(plantedOutput)) {
		t.Error("the planted model output is not shown as text")
	}
}

// BenchmarkOpenLargeAxis times opening the first and a late page of a
// 100,000-item axis, and a late page sorted by score and by latency (the
// target is under a second each).
func BenchmarkOpenLargeAxis(b *testing.B) {
	dir := fakeStore(b, 100_000)
	st, err := store.NewLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	s := New(st)
	for _, f := range []Filter{{Page: 0}, {Page: 1999}, {Page: 1999, Sort: "-score"}, {Page: 1999, Sort: "-latency"}} {
		b.Run(fmt.Sprintf("page%d%s", f.Page+1, f.Sort), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Page(context.Background(), "fake-run", "big", f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestUnscoredItems: outcome=unscored pages the kept items that have no
// line in scores.jsonl (as the quick start's MT axis without a judge).
func TestUnscoredItems(t *testing.T) {
	dir := fakeStore(t, 10)
	path := filepath.Join(dir, "runs", "fake-run", "big", "scores.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:4], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, dir)
	base := srv.URL + "/run/fake-run/axis/big/"
	doc := get(t, base+"?outcome=unscored")
	if got := strings.Join(pageIDs(doc), ","); got != "dsa/4,dsb/5,dsa/6,dsb/7,dsa/8,dsb/9" {
		t.Errorf("unscored items %s", got)
	}
	if !strings.Contains(doc, "not scored") || !strings.Contains(doc, "answer 7.") {
		t.Error("an unscored item does not show as not scored with its response")
	}
	if got := strings.Join(pageIDs(get(t, base+"?outcome=unscored&dataset=dsb&q=answer+7.")), ","); got != "dsb/7" {
		t.Errorf("unscored with dataset and search: %s", got)
	}
	// Without an outcome filter: the scored items, then the unscored ones.
	if got := strings.Join(pageIDs(get(t, base)), ","); got != "dsa/0,dsb/1,dsa/2,dsb/3,dsa/4,dsb/5,dsa/6,dsb/7,dsa/8,dsb/9" {
		t.Errorf("all items: %s", got)
	}
}

// TestUnfinishedRun: a run with a manifest and checkpoints but no scores or
// result yet shows its plan, and its checkpointed items as not scored.
func TestUnfinishedRun(t *testing.T) {
	dir := fakeStore(t, 10)
	run := filepath.Join(dir, "runs", "fake-run")
	for _, f := range []string{"result.json", "big/scores.jsonl"} {
		if err := os.Remove(filepath.Join(run, f)); err != nil {
			t.Fatal(err)
		}
	}
	srv := serve(t, dir)
	if list := get(t, srv.URL+"/"); !strings.Contains(list, "not finished (no result.json)") || !strings.Contains(list, "fake/model-7b") {
		t.Errorf("runs page does not show the unfinished run:\n%.2000s", list)
	}
	if doc := get(t, srv.URL+"/run/fake-run/"); !strings.Contains(doc, `data-axis="knowledge"`) || !strings.Contains(doc, "not finished") {
		t.Errorf("unfinished run page lacks its plan:\n%.2000s", doc)
	}
	doc := get(t, srv.URL+"/run/fake-run/axis/big/?outcome=unscored")
	if n := len(pageIDs(doc)); n != 10 {
		t.Errorf("%d checkpointed items shown as not scored, want 10", n)
	}
}

// TestLeaderboardPage: the store's leaderboard, grouped by model class and
// ranked from 1 by the ranking mean within a class (not by ms_public).
func TestLeaderboardPage(t *testing.T) {
	dir := fakeStore(t, 10)
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := []leaderboard.Row{
		{ModelID: "m-low", ModelMeta: leaderboard.ModelMeta{ModelClass: "base"}, MS: 0.2, Scores: map[string]float64{"nlu": 0.3}, Pins: map[string]string{"bench_version": "v1"}},
		{ModelID: "m-high", ModelMeta: leaderboard.ModelMeta{ModelClass: "base"}, MS: 0.6, Scores: map[string]float64{"nlu": 0}, Pins: map[string]string{"bench_version": "v1"}},
		{ModelID: "m-inst", ModelMeta: leaderboard.ModelMeta{ModelClass: "instruct"}, MS: 0.4, Scores: map[string]float64{"nlu": 0.5}, Pins: map[string]string{"bench_version": "v1"}},
	}
	for _, r := range rows {
		if err := leaderboard.Append(context.Background(), st, "ms", 1, r); err != nil {
			t.Fatal(err)
		}
	}
	doc := get(t, serve(t, dir).URL+"/leaderboard")
	order := regexp.MustCompile(`data-class="([^"]+)">|data-model="([^"]+)" data-rank="(\d+)"`).FindAllStringSubmatch(doc, -1)
	var got []string
	for _, m := range order {
		got = append(got, m[1]+m[3]+m[2])
	}
	if want := "base,1m-low,2m-high,instruct,1m-inst"; strings.Join(got, ",") != want {
		t.Errorf("leaderboard shows %s, want %s", strings.Join(got, ","), want)
	}
	if !strings.Contains(doc, `<td class="num">0.0000</td>`) {
		t.Error("a score of 0 is not shown as 0")
	}
}
