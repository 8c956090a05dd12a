package elo

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/stats"
)

// prefers is a judge backend that picks the assistant whose last answer
// contains word (a tie when both or neither do); biased always says A.
type prefers struct {
	word   string
	biased bool
	calls  int
}

func (p *prefers) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	out := make([]backends.Generation, len(reqs))
	for i, r := range reqs {
		p.calls++
		user := r.Messages[len(r.Messages)-1].Content
		a := between(user, "[The Start of Assistant A's Answer]", "[The End of Assistant A's Answer]")
		b := between(user, "[The Start of Assistant B's Answer]", "[The End of Assistant B's Answer]")
		v := "C"
		switch {
		case p.biased:
			v = "A"
		case strings.Contains(a, p.word) && !strings.Contains(b, p.word):
			v = "A"
		case strings.Contains(b, p.word) && !strings.Contains(a, p.word):
			v = "B"
		}
		out[i] = backends.Generation{ID: r.ID, Text: `{"explanation": "", "verdict": "` + v + `"}`, FinishReason: "stop"}
	}
	return out, nil
}

func between(s, from, to string) string {
	i, j := strings.Index(s, from), strings.Index(s, to)
	if i < 0 || j < i {
		return ""
	}
	return s[i+len(from) : j]
}

func (p *prefers) LogLikelihood(context.Context, []backends.LLRequest) ([]backends.LLResult, error) {
	return nil, errors.New("not a scorer")
}
func (p *prefers) Capabilities() backends.Capabilities { return backends.Capabilities{} }
func (p *prefers) Close() error                        { return nil }

func turnsOf(answers map[string]string) Turns {
	t := Turns{}
	for id, a := range answers {
		r := judge.Request{ItemID: id, Lang: "en", Turn: 1, Question: []string{"Q " + id}, Answer: []string{a}, Kind: judge.KindRating}
		t[TurnKey(r)] = r
	}
	return t
}

func TestPairMatches(t *testing.T) {
	runs := []*Run{{Player: "good", Family: "llama"}, {Player: "bad", Family: "qwen"}, {Player: "mixed", Family: "gemma"}}
	turns := []Turns{
		turnsOf(map[string]string{"1": "good", "2": "good", "3": "good"}),
		turnsOf(map[string]string{"1": "meh", "2": "meh", "3": "meh"}),
		turnsOf(map[string]string{"1": "good", "2": "meh"}), // item 3 unanswered
	}
	fair := &prefers{word: "good"}
	jf := judge.New(judge.Config{Name: "fair", Family: "mistral"}, fair)
	matches, notes, err := PairMatches(context.Background(), []*judge.Judge{jf}, runs, turns)
	if err != nil {
		t.Fatal(err)
	}
	// good–bad: 3 turns, good wins all; good–mixed: 1 tie, 1 win; bad–mixed: 1 tie, 1 loss.
	want := map[string]float64{"good>bad": 3, "good>mixed": 1.5, "bad>mixed": 0.5}
	got := map[string]float64{}
	n := map[string]int{}
	for _, m := range matches {
		got[m.A+">"+m.B] += m.Score
		n[m.A+">"+m.B]++
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: points %v, want %v (matches %+v)", k, got[k], v, matches)
		}
	}
	if n["good>bad"] != 3 || n["good>mixed"] != 2 || n["bad>mixed"] != 2 || fair.calls != 14 {
		t.Errorf("matches per pair %v, judge calls %d (want 7 turns × 2 orders)", n, fair.calls)
	}
	if len(notes) != 0 {
		t.Errorf("notes %v", notes)
	}

	// A judge that always names the first position flips with the swap:
	// every match is a tie. Beside the fair judge, good–bad turns score
	// (1 + 0.5) / 2.
	biased := judge.New(judge.Config{Name: "biased"}, &prefers{biased: true})
	matches, _, _ = PairMatches(context.Background(), []*judge.Judge{jf, biased}, runs[:2], turns[:2])
	for _, m := range matches {
		if m.Score != 0.75 {
			t.Errorf("fair + position-biased judge: %+v, want 0.75", m)
		}
	}

	// Self-judge exclusion: a llama judge never decides a match llama plays.
	llama := judge.New(judge.Config{Name: "llama-judge", Family: "Llama-3"}, &prefers{word: "good"})
	matches, notes, _ = PairMatches(context.Background(), []*judge.Judge{llama}, runs, turns)
	for _, m := range matches {
		if m.A == "good" || m.B == "good" {
			t.Errorf("a llama judge decided %+v", m)
		}
	}
	if len(matches) != 2 || !strings.Contains(strings.Join(notes, ";"), "excluded from 5 pairwise turns played by its own family") {
		t.Errorf("self-exclusion: %d matches, notes %v", len(matches), notes)
	}
}

// Judged MT matches replace the single-score MT matches and are counted
// under PairAxis; the exact-match axes stay.
func TestRankWithJudgedMatches(t *testing.T) {
	runs := []*Run{
		{Player: "a", RunID: "ra", Scores: map[string]map[string]float64{"nlu": {"1": 1, "2": 1}, "mt": {"x": 0.1}}},
		{Player: "b", RunID: "rb", Scores: map[string]map[string]float64{"nlu": {"1": 0, "2": 1}, "mt": {"x": 0.9}}},
	}
	set := Settings{BT: true, Prior: 1, Seed: 1, Resamples: 20}
	plain, err := Rank(runs, nil, set)
	if err != nil {
		t.Fatal(err)
	}
	if plain.ByAxis["nlu"] != 1 || plain.ByAxis["mt"] != 1 {
		t.Errorf("without judges: %v", plain.ByAxis)
	}
	judged, err := Rank(runs, []stats.Match{{A: "a", B: "b", Score: 1}, {A: "a", B: "b", Score: 1}}, set)
	if err != nil {
		t.Fatal(err)
	}
	if judged.ByAxis["mt"] != 0 || judged.ByAxis[PairAxis] != 2 || judged.ByAxis["nlu"] != 1 || judged.Matches != 3 {
		t.Errorf("with judged matches: %v", judged.ByAxis)
	}
	// Bradley–Terry with one virtual tie: a wins 3–0 plus 0.5–0.5, so
	// p_a/p_b = 3.5/0.5 = 7.
	if d := judged.Players[0].Rating - judged.Players[1].Rating; judged.Players[0].Player != "a" || math.Abs(d-400*math.Log10(7)) > 1e-6 {
		t.Errorf("ratings %+v", judged.Players)
	}
}

func TestLoadErrors(t *testing.T) {
	files := map[string]string{
		"result.json":      `{"run_id":"r","model_id":"m","model_meta":{"family":"llama"},"axes":{"nlu":{"scorer_type":"deterministic-rule","weight":1,"discriminates":true},"nlg":{"scorer_type":"deterministic-rule","weight":1,"discriminates":true},"mt":{"scorer_type":"llm-judge","weight":1,"discriminates":true}}}`,
		"nlu/scores.jsonl": "{\"item_id\":\"a\",\"score\":1}\n\n{\"item_id\":\"b\",\"score\":0}\n",
		"mt/scores.jsonl":  "{\"item_id\":\"q\",\"score\":0.7}\n",
	}
	read := func() *runfiles.Folder {
		m := fstest.MapFS{}
		for name, s := range files {
			m[name] = &fstest.MapFile{Data: []byte(s)}
		}
		return runfiles.FS(m, "runs/r")
	}
	r, err := Load(read())
	if err != nil {
		t.Fatal(err)
	}
	if r.Player != "m" || r.Family != "llama" || len(r.Scores["nlu"]) != 2 || r.Scores["mt"]["q"] != 0.7 || r.Scores["nlg"] != nil {
		t.Errorf("loaded %+v", r)
	}
	files["nlu/scores.jsonl"] = "{\"item_id\":\"a\",\"score\":1}\n{\"item_id\":\"a\",\"score\":1}\n"
	if _, err := Load(read()); err == nil || !strings.Contains(err.Error(), `runs/r/nlu/scores.jsonl:2: item "a" scored twice`) {
		t.Errorf("duplicate item: %v", err)
	}
	files["nlu/scores.jsonl"] = "{\"item_id\":\"a\"}\n"
	if _, err := Load(read()); err == nil || !strings.Contains(err.Error(), "runs/r/nlu/scores.jsonl:1: field score is missing") {
		t.Errorf("missing score: %v", err)
	}
}

// TestNearChanceAxesPlayNoMatches: an axis near chance for any run is left
// out of every match (spec §4), and the notes say for whom.
func TestNearChanceAxesPlayNoMatches(t *testing.T) {
	load := func(model, nluDiscriminates, knowledge string) *Run {
		files := map[string]string{
			"result.json":            `{"model_id":"` + model + `","axes":{"nlu":{"scorer_type":"deterministic-rule","weight":1,"discriminates":` + nluDiscriminates + `},"knowledge":{"scorer_type":"deterministic-rule","weight":1,"discriminates":true}}}`,
			"nlu/scores.jsonl":       "{\"item_id\":\"a\",\"score\":1}\n{\"item_id\":\"b\",\"score\":0}\n",
			"knowledge/scores.jsonl": knowledge,
		}
		m := fstest.MapFS{}
		for name, s := range files {
			m[name] = &fstest.MapFile{Data: []byte(s)}
		}
		r, err := Load(runfiles.FS(m, model))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	x := load("x", "false", "{\"item_id\":\"k\",\"score\":1}\n")
	y := load("y", "true", "{\"item_id\":\"k\",\"score\":0}\n")
	y.Scores["nlu"] = map[string]float64{"a": 0, "b": 1}
	rep, err := Rank([]*Run{x, y}, nil, Settings{BT: true, Prior: 1, Seed: 1, Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByAxis["nlu"] != 0 || rep.ByAxis["knowledge"] != 1 || !strings.Contains(strings.Join(rep.Notes, "\n"), "axis nlu: near chance for x; not used") {
		t.Errorf("matches by axis %v, notes %v", rep.ByAxis, rep.Notes)
	}
}

// TestEloPlaysOnlyRankingAxes: Elo plays only the axes the ranking mean
// uses: a self-built axis and an axis of weight 0 play no match, and the
// notes say why.
func TestEloPlaysOnlyRankingAxes(t *testing.T) {
	load := func(model, score string) *Run {
		axis := func(extra string) string {
			return `{"scorer_type":"deterministic-rule","discriminates":true` + extra + `}`
		}
		files := map[string]string{
			"result.json": `{"model_id":"` + model + `","axes":{"knowledge":` + axis(`,"weight":0`) + `,"cultural":` + axis(`,"weight":1,"tier":"selfbuilt"`) + `,"nlu":` + axis(`,"weight":1`) + `}}`,
		}
		for _, a := range []string{"knowledge", "cultural", "nlu"} {
			files[a+"/scores.jsonl"] = `{"item_id":"k","score":` + score + "}\n"
		}
		m := fstest.MapFS{}
		for name, s := range files {
			m[name] = &fstest.MapFile{Data: []byte(s)}
		}
		r, err := Load(runfiles.FS(m, model))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	rep, err := Rank([]*Run{load("x", "1"), load("y", "0")}, nil, Settings{BT: true, Prior: 1, Seed: 1, Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(rep.Notes, "\n")
	if rep.ByAxis["knowledge"] != 0 || rep.ByAxis["cultural"] != 0 || rep.ByAxis["nlu"] != 1 ||
		!strings.Contains(notes, "axis knowledge: not in the ranking mean of x (weight 0), y (weight 0)") ||
		!strings.Contains(notes, "axis cultural: not in the ranking mean of x (self-built (experimental) tier)") {
		t.Errorf("matches by axis %v, notes %v", rep.ByAxis, rep.Notes)
	}
}
