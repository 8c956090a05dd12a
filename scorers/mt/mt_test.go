package mt

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry/registrytest"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/scorers/scorerstest"
	"github.com/glossobench/glossobench/stats"
)

func loadAll(t *testing.T) []scorers.Item {
	t.Helper()
	return scorerstest.Load(t, New(), scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "mt_bench", Path: "question.jsonl", Format: FormatQuestions}}, BaseDir: "../../testdata/mt"})
}

func TestLoadMTBench(t *testing.T) {
	items := loadAll(t)
	if len(items) != 80 {
		t.Fatalf("%d items, want 80", len(items))
	}
	cats := map[string]int{}
	withRef := 0
	for _, it := range items {
		var e extra
		json.Unmarshal(it.Extra, &e)
		cats[e.Category]++
		if it.Source != "mt_bench" {
			t.Errorf("%s: source %q", it.ID, it.Source)
		}
		if len(it.Turns) != 2 || it.Lang != "en" || it.Gold != -1 {
			t.Errorf("%s: %+v", it.ID, it)
		}
		var ex extra
		json.Unmarshal(it.Extra, &ex)
		if ex.NeedsRef {
			withRef++
			if len(it.References) != 2 {
				t.Errorf("%s: references %v", it.ID, it.References)
			}
		}
	}
	if len(cats) != 8 || cats["math"] != 10 || withRef != 30 {
		t.Errorf("categories %v, %d with a reference (want 8 x 10, 30)", cats, withRef)
	}
	first := items[0]
	if first.ID != "mt_bench/81" || !strings.Contains(string(first.Extra), `"category":"writing"`) {
		t.Errorf("first item %s %s", first.ID, first.Extra)
	}
	// Question 101 (reasoning) joins its GPT-4 reference answers by question_id.
	for _, it := range items {
		if it.ID == "mt_bench/101" && !strings.HasPrefix(it.References[0], "If you have just overtaken the second person") {
			t.Errorf("101 reference %q", it.References[0])
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	cases := []struct{ content, want string }{
		{`{"question_id": 1, "category": "writing", "turns": ["a", "b"]}` + "\n{bad", "q.jsonl:2: invalid JSON"},
		{`{"category": "writing", "turns": ["a"]}`, "q.jsonl:1: field question_id: missing"},
		{`{"question_id": 1, "turns": ["a"]}`, "q.jsonl:1: field category: missing"},
		{`{"question_id": 1, "category": "math", "turns": []}`, "q.jsonl:1: field turns: missing or empty"},
		{`{"question_id": 1, "category": "math", "turns": ["a", " "]}`, "q.jsonl:1: field turns[1]: empty"},
		{"\n" + `{"question_id": 1, "category": "math", "turns": ["a"]}` + "\n" + `{"question_id": 1, "category": "math", "turns": ["b"]}`, "q.jsonl:3: duplicate item id"},
	}
	for _, c := range cases {
		p := write("q.jsonl", c.content)
		_, err := New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "q", Path: p, Format: FormatQuestions}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("content %q: error %v, want %q", c.content, err, c.want)
		}
	}
	q := write("q.jsonl", `{"question_id": 1, "category": "math", "turns": ["a"]}`)
	ref := write("r.jsonl", `{"question_id": 1, "choices": []}`)
	_, err := New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Path: q, Format: FormatQuestions}, {Path: ref, Format: FormatReferences}}})
	if err == nil || !strings.Contains(err.Error(), "r.jsonl:1: field choices[0].turns") {
		t.Errorf("bad reference: %v", err)
	}
	_, err = New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Path: q, Format: FormatQuestions}, {Name: "refs", Path: "hf://datasets/o/n@~parquet", Config: "c", Split: "s", Format: FormatReferences}}})
	if err == nil || !strings.Contains(err.Error(), "axes.mt.datasets[1] (refs): the mt_bench_reference format reads one file") {
		t.Errorf("references as a Hub set: %v", err)
	}
	_, err = New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "x", Path: q, Format: "belebele"}}})
	if err == nil || !strings.Contains(err.Error(), `unknown format "belebele"`) {
		t.Errorf("unknown format: %v", err)
	}
	_, err = New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Path: q, Format: FormatQuestions}}, Options: map[string]any{"flor": 1}})
	if err == nil || !strings.Contains(err.Error(), "options.flor: unknown option") {
		t.Errorf("unknown option: %v", err)
	}
}

// chatRecorder answers each chat with a turn-numbered reply and records what it saw.
type chatRecorder struct {
	mu   sync.Mutex
	seen [][]backends.Message
	// reply, when set, answers instead (judges).
	reply func(msgs []backends.Message) string
}

func (c *chatRecorder) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	var out []backends.Generation
	for _, r := range reqs {
		c.mu.Lock()
		c.seen = append(c.seen, r.Messages)
		c.mu.Unlock()
		text := fmt.Sprintf("answer %d", len(r.Messages)/2+1)
		if c.reply != nil {
			text = c.reply(r.Messages)
		}
		out = append(out, backends.Generation{ID: r.ID, Text: text, FinishReason: "stop"})
	}
	return out, nil
}
func (c *chatRecorder) LogLikelihood(context.Context, []backends.LLRequest) ([]backends.LLResult, error) {
	return nil, backends.ErrUnsupported
}
func (c *chatRecorder) Capabilities() backends.Capabilities { return backends.Capabilities{Chat: true} }
func (c *chatRecorder) Close() error                        { return nil }

func TestPredictCarriesConversation(t *testing.T) {
	it := loadAll(t)[0]
	b := &chatRecorder{}
	p, err := New().Predict(context.Background(), b, it, scorers.PredictOptions{MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Generations) != 2 || len(b.seen) != 2 {
		t.Fatalf("%d generations, %d calls", len(p.Generations), len(b.seen))
	}
	second := b.seen[1]
	if len(second) != 3 || second[0].Content != it.Turns[0] || second[1].Role != "assistant" || second[1].Content != "answer 1" || second[2].Content != it.Turns[1] {
		t.Errorf("second turn saw %+v", second)
	}
	if len(b.seen[0]) != 1 {
		t.Errorf("first turn saw %d messages (the slice was shared)", len(b.seen[0]))
	}
}

func TestJudgeRequests(t *testing.T) {
	items := loadAll(t)
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		preds[i] = scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: "a1"}, {Text: "a2"}}}
	}
	preds[3].Generations = preds[3].Generations[:1] // an unfinished item gets no request
	reqs := New().JudgeRequests(items, preds)
	if len(reqs) != 158 {
		t.Fatalf("%d requests, want 158", len(reqs))
	}
	var math2 judge.Request
	for _, r := range reqs {
		if r.ItemID == "mt_bench/111" && r.Turn == 2 {
			math2 = r
		}
	}
	if len(math2.Question) != 2 || len(math2.Answer) != 2 || len(math2.References) != 2 || math2.References[1] == "" || math2.Kind != judge.KindRating {
		t.Errorf("math turn 2 request %+v", math2)
	}
	msgs, err := judge.Messages(math2, "")
	if err != nil || !strings.Contains(msgs[1].Content, "### Reference answer:") {
		t.Errorf("math turn 2 uses single-math-v1-multi-turn: %v %v", err, msgs)
	}
}

func rating(j, item string, turn int, v float64) judge.Rating {
	return judge.Rating{Judge: j, ItemID: item, Turn: turn, Kind: judge.KindRating, Value: &v}
}

// A hand-checkable MT score: three items, two judges.
func TestScoreHandChecked(t *testing.T) {
	items := loadAll(t)[:4]
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		preds[i] = scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: "a", FinishReason: "stop"}, {Text: "b", FinishReason: "length"}}}
	}
	id := func(i int) string { return items[i].ID }
	pf := judge.Rating{Judge: "b", ItemID: id(2), Turn: 2, Kind: judge.KindRating, ParseFail: true}
	err := judge.Attach(preds, []judge.Rating{
		rating("a", id(0), 1, 8), rating("b", id(0), 1, 6), rating("a", id(0), 2, 4), rating("b", id(0), 2, 4), // turns 0.7, 0.4 → 0.55
		rating("a", id(1), 1, 0), rating("b", id(1), 1, 10), rating("a", id(1), 2, 5), rating("b", id(1), 2, 5), // turns 0.5 (low_conf), 0.5 → 0.5
		rating("a", id(2), 1, 9), rating("b", id(2), 1, 9), rating("a", id(2), 2, 3), pf, // 0.9, 0.3 → 0.6
		// item 3: no ratings → unrated
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New().Score(items, preds, scorers.ScoreOptions{Seed: 1, BootstrapResamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	want := (0.55 + 0.5 + 0.6) / 3
	if r.Score == nil || math.Abs(*r.Score-want) > 1e-12 || r.N != 3 || r.Metric != "mean_judge_score_normalized" {
		t.Fatalf("score %v n %d metric %s, want %v n 3", r.Score, r.N, r.Metric, want)
	}
	lo, hi, _ := stats.MeanCI([]float64{0.55, 0.5, 0.6}, 200, 1, 0.95)
	if r.CI95 == nil || r.CI95[0] != lo || r.CI95[1] != hi {
		t.Errorf("CI %v, want [%v %v]", r.CI95, lo, hi)
	}
	sec := r.Secondary
	if w := sec["weighted_win_rate"].(float64); math.Abs(w-(1+0.5+1)/3) > 1e-12 {
		t.Errorf("weighted_win_rate %v", w)
	}
	bt := sec["by_turn"].(map[string]Group)
	if math.Abs(bt["1"].Score-(0.7+0.5+0.9)/3) > 1e-12 || math.Abs(bt["2"].Score-(0.4+0.5+0.3)/3) > 1e-12 {
		t.Errorf("by_turn %v", bt)
	}
	if lc := sec["low_conf_items"].([]string); len(lc) != 1 || lc[0] != id(1) || r.Items[1].Flagged != "low_conf" {
		t.Errorf("low_conf %v", lc)
	}
	if sec["parse_fail"].(int) != 1 || r.TruncationRate != 0.5 {
		t.Errorf("parse_fail %v truncation %v", sec["parse_fail"], r.TruncationRate)
	}
	if cat := sec["by_category"].(map[string]Group); cat["writing"].N != 3 {
		t.Errorf("by_category %v", cat)
	}
	if !strings.Contains(strings.Join(r.Notes, ";"), "1 items had no valid judge rating") {
		t.Errorf("notes %v", r.Notes)
	}
}

// Ensemble sizes 0, 1 and 3 through JudgeRequests → Rate → Attach → Score.
func TestEnsembleSizes(t *testing.T) {
	items := loadAll(t)[:6]
	ax := New()
	preds := make([]scorers.Prediction, len(items))
	model := &chatRecorder{}
	for i, it := range items {
		p, err := ax.Predict(context.Background(), model, it, scorers.PredictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		preds[i] = p
	}
	judgeWith := func(n int) scorers.AxisResult {
		ps := make([]scorers.Prediction, len(preds))
		copy(ps, preds)
		e := &judge.Ensemble{Floor: 0.5}
		for k := range n {
			e.Judges = append(e.Judges, judge.New(judge.Config{Name: fmt.Sprintf("j%d", k)}, &chatRecorder{reply: func([]backends.Message) string {
				return fmt.Sprintf(`{"explanation": "ok", "rating": %d}`, 6+k)
			}}))
		}
		if n > 0 {
			rs, err := e.Rate(context.Background(), ax.JudgeRequests(items, ps))
			if err != nil {
				t.Fatal(err)
			}
			if err := judge.Attach(ps, rs); err != nil {
				t.Fatal(err)
			}
		}
		r, err := ax.Score(items, ps, scorers.ScoreOptions{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := judgeWith(0); r.Score != nil || r.Metric != "skipped_no_judge" {
		t.Errorf("0 judges: %v %s", r.Score, r.Metric)
	}
	if r := judgeWith(1); r.Score == nil || math.Abs(*r.Score-0.6) > 1e-12 || r.Secondary["inter_judge_kappa"].(*float64) != nil {
		t.Errorf("1 judge: %+v", r)
	}
	r := judgeWith(3)
	if r.Score == nil || math.Abs(*r.Score-0.7) > 1e-12 || len(r.Secondary["judges"].([]string)) != 3 {
		t.Errorf("3 judges: %v %v", r.Score, r.Secondary["judges"])
	}
	// 6, 7, 8: std sqrt(2/3), mean 7 → agreement 0.883; above the floor.
	if lc := r.Secondary["low_conf_items"].([]string); len(lc) != 0 {
		t.Errorf("low_conf %v", lc)
	}
	if pairs := r.Secondary["inter_judge_kappa_pairs"].([]judge.PairKappa); len(pairs) != 3 {
		t.Errorf("κ pairs %v", pairs)
	}
}

// The embedded GGUF model answering both turns, then judging them: whatever
// the tiny model writes, the axis scores or reports, never fails.
func TestGGUFEndToEnd(t *testing.T) {
	b := registrytest.TinyModel(t)
	items := loadAll(t)[:2]
	ax := New()
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		var err error
		if preds[i], err = ax.Predict(context.Background(), b, it, scorers.PredictOptions{MaxTokens: 8}); err != nil {
			t.Fatal(err)
		}
	}
	e := &judge.Ensemble{Judges: []*judge.Judge{judge.New(judge.Config{Name: "tiny", MaxTokens: 12}, b)}, Floor: 0.5}
	rs, err := e.Rate(context.Background(), ax.JudgeRequests(items, preds))
	if err != nil || len(rs) != 4 {
		t.Fatal(rs, err)
	}
	if err := judge.Attach(preds, rs); err != nil {
		t.Fatal(err)
	}
	r, err := ax.Score(items, preds, scorers.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The tiny judge mostly fails the rating schema: without a score the
	// result keeps the parse failures rather than claiming there was no judge.
	if r.Score == nil && (r.Metric == "skipped_no_judge" || r.Secondary["parse_fail"] == nil) {
		t.Errorf("result %+v", r)
	}
	if len(preds[0].Generations) != 2 || r.TruncationRate < 0 || r.TruncationRate > 1 {
		t.Errorf("generations %d, truncation rate %v", len(preds[0].Generations), r.TruncationRate)
	}
}

func FuzzParseQuestion(f *testing.F) {
	for _, s := range []string{
		`{"question_id": 81, "category": "writing", "turns": ["a", "b"]}`,
		`{"question_id": 111, "category": "math", "turns": ["a"], "reference": ["r"]}`,
		`{"question_id": null}`, `[]`, `{"turns": [""]}`, ``,
	} {
		f.Add([]byte(s))
	}
	refs := map[string][]string{"111": {"x", "y"}}
	c, err := compile(scorers.DatasetConfig{Format: FormatQuestions})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var row map[string]any
		if json.Unmarshal(data, &row) != nil {
			return
		}
		it, keep, err := questionFromRow(c, dataset.Row{Line: 1, Fields: row}, "d", nil, refs)
		if err == nil && keep && (len(it.Turns) == 0 || it.Source == "" || !strings.HasPrefix(it.ID, "d/")) {
			t.Fatalf("accepted %q as %+v", data, it)
		}
	})
}
