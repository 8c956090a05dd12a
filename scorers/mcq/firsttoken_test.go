package mcq

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
)

func ll(logprobs []float64, tokens []int) backends.LLResult {
	r := backends.LLResult{TokenLogProbs: logprobs, Tokens: tokens}
	for _, v := range logprobs {
		r.LogProb += v
	}
	return r
}

// TestClozeScoresTheFirstToken: spec §1, the first token's log-probability
// over each choice picks the answer, not the continuation's sum; choices
// whose continuations share a first token are said to, with the rule used.
func TestClozeScoresTheFirstToken(t *testing.T) {
	items := []scorers.Item{
		{ID: "d/1", Choices: []string{"x", "y"}, Gold: 0},
		{ID: "d/2", Choices: []string{"x", "y"}, Gold: 1},
		{ID: "d/3", Choices: []string{"x", "y"}, Gold: 1},
	}
	preds := []scorers.Prediction{
		// Sum picks B (-2.5 > -6); the first token picks A (-1 > -2).
		{ItemID: "d/1", LogLiks: []backends.LLResult{ll([]float64{-1, -5}, []int{10, 11}), ll([]float64{-2, -0.5}, []int{12, 13})}},
		// Both continuations begin with token 7: the sums decide (B).
		{ItemID: "d/2", LogLiks: []backends.LLResult{ll([]float64{-1, -3}, []int{7, 1}), ll([]float64{-1, -2}, []int{7, 2})}},
		// Cut unlike (one token against a space and a letter): the sums decide (B).
		{ItemID: "d/3", LogLiks: []backends.LLResult{ll([]float64{-3}, []int{5}), ll([]float64{-0.5, -2}, []int{6, 9})}},
	}
	r, err := NewAxis("knowledge").Score(items, preds, scorers.ScoreOptions{ScoringMode: "cloze"})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(r.Notes, "\n")
	if r.Score == nil || *r.Score != 1 || !strings.Contains(notes, "first token") || !strings.Contains(notes, "2 items' choice continuations do not begin with distinct tokens, cut alike") {
		t.Fatalf("score %v, notes:\n%s", r.Score, notes)
	}
}

// TestClozeTargetTextIsTheHeadline: cloze_target: text makes the full-text
// log-likelihood (lm-eval's acc) the headline; acc_norm divides by the
// choice's characters, as lm-eval does, not its bytes.
func TestClozeTargetTextIsTheHeadline(t *testing.T) {
	items := []scorers.Item{{ID: "d/1", Choices: []string{"éé", "bbb"}, Gold: 1}}
	full, _ := json.Marshal([]backends.LLResult{{LogProb: -3}, {LogProb: -3.5}})
	// Letters pick B (right); full text sums pick A (-3 > -3.5); per character B (-1.1667 > -1.5),
	// per byte of " éé" (5) and " bbb" (4) A (-0.6 > -0.875).
	preds := []scorers.Prediction{{ItemID: "d/1",
		LogLiks:  []backends.LLResult{ll([]float64{-2}, []int{1}), ll([]float64{-1}, []int{2})},
		Variants: map[string]json.RawMessage{variantClozeText: full}}}
	r, err := NewAxis("knowledge").Score(items, preds, scorers.ScoreOptions{ScoringMode: "cloze", Options: map[string]any{"cloze_target": "text"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Metric != "acc_cloze_text" || r.Score == nil || *r.Score != 0 || r.Secondary["acc"] != 0.0 || r.Secondary["acc_norm"] != 1.0 {
		t.Fatalf("metric %s score %v acc %v acc_norm %v", r.Metric, r.Score, r.Secondary["acc"], r.Secondary["acc_norm"])
	}
}

// textLL answers every continuation with minus its length in bytes, so the
// shortest choice text wins acc and per character every choice ties.
type textLL struct{ conts []string }

func (b *textLL) LogLikelihood(_ context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	out := make([]backends.LLResult, len(reqs))
	for i, r := range reqs {
		b.conts = append(b.conts, r.Continuation)
		out[i] = ll([]float64{-float64(len(r.Continuation))}, []int{i})
	}
	return out, nil
}
func (b *textLL) Generate(context.Context, []backends.GenRequest) ([]backends.Generation, error) {
	return nil, backends.ErrUnsupported
}
func (b *textLL) Capabilities() backends.Capabilities { return backends.Capabilities{} }
func (b *textLL) Close() error                        { return nil }

// TestAccAndAccNormForEveryClozeItem: acc and acc_norm (the choice texts'
// log-likelihood, whole and per character) are recorded for every cloze
// item with the default letter target too, as the README says, per item
// and in secondary; the letter reading stays the headline.
func TestAccAndAccNormForEveryClozeItem(t *testing.T) {
	items := []scorers.Item{{ID: "d/1", Prompt: "Q", Choices: []string{"aaaa", "b"}, Gold: 1}}
	b := &textLL{}
	p, err := NewAxis("knowledge").Predict(context.Background(), b, items[0], scorers.PredictOptions{ScoringMode: "cloze"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(b.conts, "|") != " A| B| aaaa| b" {
		t.Fatalf("continuations asked: %q", b.conts)
	}
	r, err := NewAxis("knowledge").Score(items, []scorers.Prediction{p}, scorers.ScoreOptions{ScoringMode: "cloze"})
	if err != nil {
		t.Fatal(err)
	}
	// Letters: " A" and " B" tie at -2, so A (wrong) is the headline's pick.
	if r.Metric != "acc_cloze" || *r.Score != 0 || r.Secondary["acc"] != 1.0 || r.Secondary["acc_norm"] != 0.0 {
		t.Fatalf("metric %s score %v acc %v acc_norm %v", r.Metric, *r.Score, r.Secondary["acc"], r.Secondary["acc_norm"])
	}
	ts := &tally{axis: "knowledge", mode: "cloze"}
	out, _ := ts.Add(items, []scorers.Prediction{p})
	if out[0].Fields["acc"] != 1.0 || out[0].Fields["acc_norm"] != 0.0 {
		t.Fatalf("item fields %v", out[0].Fields)
	}
}

// failingText refuses the choice-text requests only.
type failingText struct{ textLL }

func (b *failingText) LogLikelihood(ctx context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	if strings.HasSuffix(reqs[0].ID, "/text") {
		return nil, errors.New("context full")
	}
	return b.textLL.LogLikelihood(ctx, reqs)
}

// TestChoiceTextFailureLeavesTheLetterHeadline: under the letter target
// acc and acc_norm are secondary, so a backend that fails their requests
// leaves the item scored on its letters, and the notes count the items
// without them; under the text target the failure is the item's.
func TestChoiceTextFailureLeavesTheLetterHeadline(t *testing.T) {
	it := scorers.Item{ID: "d/1", Prompt: "Q", Choices: []string{"aaaa", "b"}, Gold: 0}
	p, err := NewAxis("knowledge").Predict(context.Background(), &failingText{}, it, scorers.PredictOptions{ScoringMode: "cloze"})
	if err != nil || len(p.LogLiks) != 2 || p.Variants != nil {
		t.Fatalf("letter target: %v, %+v", err, p)
	}
	text := scorers.PredictOptions{ScoringMode: "cloze", Options: map[string]any{"cloze_target": "text"}}
	if _, err := NewAxis("knowledge").Predict(context.Background(), &failingText{}, it, text); err == nil {
		t.Fatal("text target: the failed headline request was not an error")
	}
	ok, _ := NewAxis("knowledge").Predict(context.Background(), &textLL{}, scorers.Item{ID: "d/2", Prompt: "Q", Choices: it.Choices}, scorers.PredictOptions{ScoringMode: "cloze"})
	r, err := NewAxis("knowledge").Score([]scorers.Item{it, {ID: "d/2", Prompt: "Q", Choices: it.Choices}}, []scorers.Prediction{p, ok}, scorers.ScoreOptions{ScoringMode: "cloze"})
	if err != nil || r.N != 2 || !strings.Contains(strings.Join(r.Notes, "\n"), "acc and acc_norm are over 1 of 2 cloze items") {
		t.Fatalf("n %d, notes %v (%v)", r.N, r.Notes, err)
	}
}
