package gguf

import (
	"math"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// A request's numbers do not depend on what the model was asked before. An
// EvalRun sends the shards of an axis to one model concurrently, so the
// order of requests changes from run to run; if a request reused the cache a
// different earlier request left (a shared prefix computed in another batch
// shape), its log-probabilities and its greedy text would change in the last
// bits from run to run.
func TestRequestsDoNotDependOnEarlierRequests(t *testing.T) {
	passage := strings.Repeat("Kucing itu duduk di atas tikar dan melihat burung di luar tingkap. ", 6)
	x := backends.LLRequest{ID: "x", Context: passage + "Soalan: Apakah yang dilihat oleh kucing itu?\nJawapan:", Continuation: " burung"}
	y := backends.LLRequest{ID: "y", Context: passage + "Soalan: Di manakah kucing itu duduk?\nJawapan:", Continuation: " tikar"}
	gx := backends.GenRequest{ID: "gx", Prompt: x.Context, MaxTokens: 12}
	gy := backends.GenRequest{ID: "gy", Prompt: y.Context + " tikar. Soalan lain:", MaxTokens: 12}

	fresh := openTiny(t, Options{})
	alone, err := fresh.LogLikelihood(bg, []backends.LLRequest{x})
	if err != nil {
		t.Fatal(err)
	}
	genAlone, err := fresh.Generate(bg, []backends.GenRequest{gx})
	if err != nil {
		t.Fatal(err)
	}

	m := openTiny(t, Options{})
	if _, err := m.LogLikelihood(bg, []backends.LLRequest{y}); err != nil {
		t.Fatal(err)
	}
	after, err := m.LogLikelihood(bg, []backends.LLRequest{x})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(bg, []backends.GenRequest{gy}); err != nil {
		t.Fatal(err)
	}
	genAfter, err := m.Generate(bg, []backends.GenRequest{gx})
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(alone[0].LogProb) != math.Float64bits(after[0].LogProb) {
		t.Errorf("log-probability of x alone %.17g, after y %.17g", alone[0].LogProb, after[0].LogProb)
	}
	if genAlone[0].Text != genAfter[0].Text || genAlone[0].Tokens != genAfter[0].Tokens {
		t.Errorf("greedy text of gx alone %q, after gy %q", genAlone[0].Text, genAfter[0].Text)
	}
}
