package viewer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/results/internal/pagetest"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/judge"
)

// writeMTAxis writes, beside the fake run's axes, a judged two-turn axis
// "mt" as a run leaves it: mt/0 rated by two judges and scored, mt/1 rated
// but every reply a parse_fail (not scored), mt/2 never answered.
func writeMTAxis(t *testing.T, dir string) {
	t.Helper()
	axis := filepath.Join(dir, "runs", "fake-run", "mt")
	var items, preds, rated, scores []any
	for i := range 3 {
		id := fmt.Sprintf("mt_bench/%d", i)
		it := scorers.Item{ID: id, Axis: "mt", Dataset: "mt_bench", Lang: "en", Gold: -1,
			Turns:      []string{fmt.Sprintf("Question one of %d?", i), fmt.Sprintf("Follow-up of %d?", i)},
			References: []string{fmt.Sprintf("Reference one of %d.", i), fmt.Sprintf("Reference two of %d.", i)}}
		items = append(items, it)
		if i == 2 {
			continue
		}
		p := scorers.Prediction{ItemID: id, Generations: []backends.Generation{
			{ID: id + "#t1", Text: fmt.Sprintf("Answer one of %d.", i), FinishReason: "stop", Tokens: 4},
			{ID: id + "#t2", Text: fmt.Sprintf("Answer two of %d.", i), FinishReason: "stop", Tokens: 4}},
			Usage: &backends.Usage{PromptTokens: 30, CompletionTokens: 8, Requests: 2, LatencyMS: 1234}}
		preds = append(preds, p)
		var rs []judge.Rating
		for turn := 1; turn <= 2; turn++ {
			for j, name := range []string{"judge-a", "judge-b"} {
				r := judge.Rating{Judge: name, ItemID: id, Turn: turn, Kind: judge.KindRating, Raw: fmt.Sprintf("reply of %s on turn %d", name, turn)}
				if i == 0 {
					v := float64(6 + 2*j + turn) // turn 1: 7 and 9; turn 2: 8 and 10
					r.Value = &v
				} else {
					r.ParseFail = true
				}
				rs = append(rs, r)
			}
		}
		raw, _ := json.Marshal(rs)
		p.Variants = map[string]json.RawMessage{judge.VariantKey: raw}
		rated = append(rated, p)
		if i == 0 {
			scores = append(scores, scorers.ItemScore{ItemID: id, Score: 0.85, Rating: 0.85, Label: true,
				Fields: map[string]any{"turn1": 0.8, "turn2": 0.9, "agreement": judge.Agreement([]float64{7, 9})}})
		}
	}
	for name, recs := range map[string][]any{"items.jsonl": items, "shards/0000/items.jsonl": items, "shards/0000/pred-00000.jsonl": preds,
		"shards/0000/rated-00000.jsonl": rated, "scores.jsonl": scores} {
		var b strings.Builder
		for _, r := range recs {
			line, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		path := filepath.Join(axis, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestJudgedAxisShowsEveryItem: a judged axis's page lists its items by
// default, the scored ones and then those without a score, each with its
// reason, the counts in the header; an MT item shows its conversation turn
// by turn with the reference answers and each judge's rating, reply,
// parse_fail and the turn's agreement; and its cost.
func TestJudgedAxisShowsEveryItem(t *testing.T) {
	dir := fakeStore(t, 10)
	writeMTAxis(t, dir)
	doc := get(t, serve(t, dir).URL+"/run/fake-run/axis/mt/")
	checkMTPage(t, doc)
}

// TestJudgedAxisInChromium: the same page as Chromium builds it.
func TestJudgedAxisInChromium(t *testing.T) {
	dir := fakeStore(t, 10)
	writeMTAxis(t, dir)
	checkMTPage(t, pagetest.DumpDOM(t, serve(t, dir).URL+"/run/fake-run/axis/mt/"))
}

func checkMTPage(t *testing.T, doc string) {
	t.Helper()
	if got := strings.Join(pageIDs(doc), ","); got != "mt_bench/0,mt_bench/1,mt_bench/2" {
		t.Errorf("items listed: %s, want all three, scored first", got)
	}
	for id, want := range map[string]string{"kept": "3", "total": "1", "unscored": "2", "matched": "3"} {
		if m := regexp.MustCompile(`id="` + id + `">(\d+)<`).FindStringSubmatch(doc); m == nil || m[1] != want {
			t.Errorf("header %s = %v, want %s", id, m, want)
		}
	}
	for _, reason := range []string{reasonNoValid, reasonNoPrediction} {
		if !strings.Contains(doc, `<span class="num reason-count">1</span> not scored: <span class="reason">`+reason) {
			t.Errorf("the header does not count the reason %q", reason)
		}
	}
	// One article per item: cut the page there.
	arts := regexp.MustCompile(`(?s)<article .*?</article>`).FindAllString(doc, -1)
	if len(arts) != 3 {
		t.Fatalf("%d articles", len(arts))
	}
	first, second, third := arts[0], arts[1], arts[2]
	for _, want := range []string{"Question one of 0?", "Answer one of 0.", "Reference one of 0.", "Follow-up of 0?", "Answer two of 0.", "Reference two of 0.",
		"reply of judge-a on turn 1", "reply of judge-b on turn 2", `data-turn="1"`, `data-turn="2"`} {
		if !strings.Contains(first, want) {
			t.Errorf("the scored MT item lacks %q", want)
		}
	}
	// Turn 1: judges 7 and 9; turn 2: 8 and 10.
	for turn, vals := range map[int][]float64{1: {7, 9}, 2: {8, 10}} {
		re := regexp.MustCompile(`data-kind="rating" data-turn="` + strconv.Itoa(turn) + `"><caption>[^<]*<span class="agg-score">[^<]*</span>[^<]*<span class="agreement" data-value="([^"]+)"`)
		m := re.FindStringSubmatch(first)
		if m == nil {
			t.Errorf("turn %d: no agreement shown", turn)
			continue
		}
		if got, _ := strconv.ParseFloat(m[1], 64); got != judge.Agreement(vals) {
			t.Errorf("turn %d agreement %v, want %v", turn, got, judge.Agreement(vals))
		}
	}
	if !strings.Contains(first, `data-value="30"`) || !strings.Contains(first, `data-value="1234"`) {
		t.Error("the item's prompt tokens and latency are not shown")
	}
	if !strings.Contains(second, reasonNoValid) || strings.Count(second, ">parse_fail</span>") != 4 || !strings.Contains(second, "reply of judge-b on turn 1") {
		t.Errorf("the unrated item does not show its reason and its four parse_fail replies:\n%s", second)
	}
	if !strings.Contains(third, reasonNoPrediction) || !strings.Contains(third, "Question one of 2?") {
		t.Errorf("the unanswered item does not show its reason and question:\n%s", third)
	}
}

// TestSortedItems: sort=-score lists the highest scores first, ties in file
// order, across pages; sort=score the lowest; an unknown order is refused.
func TestSortedItems(t *testing.T) {
	dir := fakeStore(t, 10)
	base := serve(t, dir).URL + "/run/fake-run/axis/big/"
	if got := strings.Join(pageIDs(get(t, base+"?sort=-score")), ","); got != "dsa/0,dsb/3,dsa/6,dsb/9,dsa/2,dsb/5,dsa/8,dsb/1,dsa/4,dsb/7" {
		t.Errorf("sort=-score: %s", got)
	}
	if got := strings.Join(pageIDs(get(t, base+"?sort=score&dataset=dsa")), ","); got != "dsa/4,dsa/2,dsa/8,dsa/0,dsa/6" {
		t.Errorf("sort=score&dataset=dsa: %s", got)
	}
	resp, err := http.Get(base + "?sort=bogus")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("sort=bogus: %s, want 400", resp.Status)
	}
}

// TestUnscoredWhenScoresOutOfOrder: the kept items without a score are
// found whatever the order of scores.jsonl (here reversed, two dropped).
func TestUnscoredWhenScoresOutOfOrder(t *testing.T) {
	dir := fakeStore(t, 10)
	path := filepath.Join(dir, "runs", "fake-run", "big", "scores.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	var kept []string
	for i := len(lines) - 1; i >= 0; i-- {
		if i != 3 && i != 7 {
			kept = append(kept, strings.TrimSuffix(lines[i], "\n")+"\n")
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := get(t, serve(t, dir).URL+"/run/fake-run/axis/big/")
	if got := strings.Join(pageIDs(doc), ","); got != "dsb/9,dsa/8,dsa/6,dsb/5,dsa/4,dsa/2,dsb/1,dsa/0,dsb/3,dsb/7" {
		t.Errorf("items: %s", got)
	}
	if m := regexp.MustCompile(`id="unscored">(\d+)<`).FindStringSubmatch(doc); m == nil || m[1] != "2" {
		t.Errorf("unscored count %v, want 2", m)
	}
}
