package gguf

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/grammar"
)

// ratingSchema is scorers/judge's rating schema (backends import nothing
// above them, so it is written out here).
func ratingSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"explanation": map[string]any{"type": "string", "maxLength": 400},
			"rating":      map[string]any{"type": "integer", "enum": []any{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		},
		"required":             []any{"explanation", "rating"},
		"additionalProperties": false,
	}
}

var schemaPrompts = []string{
	"Question: What is the capital of France?\nAnswer:",
	"Question: Rate the answer \"Paris\" to \"What is the capital of France?\" from 0 to 10 as JSON.\nAnswer:",
	"Once upon a time",
	"{",
}

// TestGenerateJSONSchema: a request's JSONSchema constrains the reply to the
// schema's grammar, greedy and sampled, raw prompts and chat; the same
// greedy request gives the same reply. The tiny model often writes the
// explanation until max_tokens: such a reply must be a prefix of the
// grammar, and every reply that stops must be a complete match.
func TestGenerateJSONSchema(t *testing.T) {
	m := openTiny(t, Options{ChatFormat: "qa"})
	g, err := grammar.FromSchema(ratingSchema())
	if err != nil {
		t.Fatal(err)
	}
	var reqs []backends.GenRequest
	for _, p := range schemaPrompts {
		reqs = append(reqs, backends.GenRequest{Prompt: p, MaxTokens: 256, JSONSchema: ratingSchema()})
	}
	reqs = append(reqs,
		backends.GenRequest{Messages: []backends.Message{{Role: "user", Content: "Rate this answer: Paris."}}, MaxTokens: 256, JSONSchema: ratingSchema()},
		backends.GenRequest{Prompt: schemaPrompts[0], MaxTokens: 256, Temperature: 0.8, Seed: 7, JSONSchema: ratingSchema()},
		backends.GenRequest{Prompt: schemaPrompts[2], MaxTokens: 256, Temperature: 1.5, Seed: 8, JSONSchema: ratingSchema()},
	)
	gens, err := m.Generate(bg, reqs)
	if err != nil {
		t.Fatal(err)
	}
	complete := 0
	for i, gen := range gens {
		t.Logf("%d: %q (%s, %d tokens)", i, gen.Text, gen.FinishReason, gen.Tokens)
		if gen.Truncated() {
			if gen.Tokens != reqs[i].MaxTokens || !g.AcceptsPrefix(gen.Text) {
				t.Errorf("request %d: cut reply %q (%d tokens) is not a prefix of the schema's grammar", i, gen.Text, gen.Tokens)
			}
			continue
		}
		if !g.Accepts(gen.Text) {
			t.Errorf("request %d: reply %q (%s) is not a complete match of the schema's grammar", i, gen.Text, gen.FinishReason)
			continue
		}
		complete++
		var v struct {
			Explanation *string `json:"explanation"`
			Rating      *int    `json:"rating"`
		}
		if err := json.Unmarshal([]byte(gen.Text), &v); err != nil || v.Explanation == nil || v.Rating == nil || *v.Rating < 0 || *v.Rating > 10 {
			t.Errorf("request %d: reply %q does not decode as a rating: %v", i, gen.Text, err)
		}
	}
	if complete < 3 {
		t.Errorf("%d complete replies of %d; the test checks too little", complete, len(gens))
	}
	again, err := m.Generate(bg, reqs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Text != gens[0].Text {
		t.Errorf("greedy reply changed: %q then %q", gens[0].Text, again[0].Text)
	}
	// Without the schema the tiny model does not write the JSON: the
	// constraint, not the prompt, makes the reply parse.
	free, err := m.Generate(bg, []backends.GenRequest{{Prompt: schemaPrompts[1], MaxTokens: 64}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Accepts(free[0].Text) {
		t.Errorf("the unconstrained reply %q already matches; the test shows nothing", free[0].Text)
	}
}

// TestGenerateJSONSchemaUnsupported: a schema the grammar cannot express
// fails the request with a sentence naming the keyword.
func TestGenerateJSONSchemaUnsupported(t *testing.T) {
	m := openTiny(t, Options{})
	s := ratingSchema()
	s["properties"].(map[string]any)["explanation"] = map[string]any{"type": "string", "pattern": "^[a-z]+$"}
	_, err := m.Generate(bg, []backends.GenRequest{{ID: "x", Prompt: "a", MaxTokens: 8, JSONSchema: s}})
	if err == nil || !strings.Contains(err.Error(), `keyword "pattern" is not supported`) || !strings.Contains(err.Error(), "properties.explanation") {
		t.Errorf("err = %v, want one naming pattern at properties.explanation", err)
	}
}

// TestSampleMask: greedy picks the largest allowed logit, sampling never
// picks a masked token, and an empty mask yields -1.
func TestSampleMask(t *testing.T) {
	logits := []float32{5, 1, 4, 9, 3, 9}
	mask := []uint64{1<<1 | 1<<2 | 1<<4}
	if got := sample(logits, 0, nil, mask); got != 2 {
		t.Errorf("greedy among {1,2,4} = %d, want 2", got)
	}
	if got := sample(logits, 0, nil, nil); got != 3 {
		t.Errorf("greedy unmasked = %d, want 3 (the first of the equal maxima)", got)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[int]bool{}
	for range 2000 {
		seen[sample(logits, 5, rng, mask)] = true
	}
	if len(seen) != 3 || !seen[1] || !seen[2] || !seen[4] {
		t.Errorf("sampled %v, want exactly {1, 2, 4}", seen)
	}
	if got := sample(logits, 0, nil, []uint64{0}); got != -1 {
		t.Errorf("nothing allowed: got %d, want -1", got)
	}
}

// TestGenerateJSONSchemaSpeed: the mask must not make generation slow. The
// same greedy requests with and without the schema (each reply as long as
// the other), after one warm-up request; the constrained run may cost at
// most twice the free one plus a small constant.
func TestGenerateJSONSchemaSpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	m := openTiny(t, Options{})
	var withSchema, free []backends.GenRequest
	for _, p := range schemaPrompts {
		withSchema = append(withSchema, backends.GenRequest{Prompt: p, MaxTokens: 200, JSONSchema: ratingSchema()})
	}
	if _, err := m.Generate(bg, withSchema[:1]); err != nil { // builds the vocabulary trie
		t.Fatal(err)
	}
	start := time.Now()
	gens, err := m.Generate(bg, withSchema)
	if err != nil {
		t.Fatal(err)
	}
	constrained := time.Since(start)
	tokens := 0
	for i, g := range gens {
		tokens += g.Tokens
		// the same number of tokens, unconstrained: stop strings off, EOG can still end early
		free = append(free, backends.GenRequest{Prompt: schemaPrompts[i], MaxTokens: max(g.Tokens, 1)})
	}
	start = time.Now()
	fg, err := m.Generate(bg, free)
	if err != nil {
		t.Fatal(err)
	}
	unconstrained := time.Since(start)
	freeTokens := 0
	for _, g := range fg {
		freeTokens += g.Tokens
	}
	perTok := constrained / time.Duration(max(tokens, 1))
	perFree := unconstrained / time.Duration(max(freeTokens, 1))
	t.Logf("constrained %d tokens in %v (%v/token), unconstrained %d in %v (%v/token)", tokens, constrained, perTok, freeTokens, unconstrained, perFree)
	if perTok > 2*perFree+200*time.Microsecond {
		t.Errorf("constrained generation takes %v a token, unconstrained %v", perTok, perFree)
	}
}

// TestLiveJSONSchemaMatchesLlamaServer compares constrained greedy replies
// with llama-server's json_schema on the tiny model (F32, where llama-server
// and this backend give the same logits to ~1e-6 and the same greedy tokens,
// see TestLiveLlamaServer): the same schema must give the same text. The one
// known difference is outside these prompts: llama.cpp lets control tokens
// (<s>, <unk>) through as their text inside a JSON string, this backend
// never does (they add no text to the reply).
func TestLiveJSONSchemaMatchesLlamaServer(t *testing.T) {
	url := liveServer(t)
	m := openTiny(t, Options{})
	schemas := []map[string]any{ratingSchema(), {
		"type": "object",
		"properties": map[string]any{
			"explanation": map[string]any{"type": "string", "maxLength": 40},
			"label":       map[string]any{"type": "string", "enum": []any{"Harmful", "Safe", "Refusal"}},
			"n":           map[string]any{"type": "integer", "minimum": -5, "maximum": 120},
		},
		"required": []any{"label", "n"},
	}}
	for _, schema := range schemas {
		for _, p := range schemaPrompts {
			const n = 160
			var r struct {
				Content string `json:"content"`
			}
			postJSON(t, url+"/completion", map[string]any{"prompt": p, "n_predict": n, "temperature": 0,
				"samplers": []string{"top_k"}, "top_k": 1, "cache_prompt": false, "json_schema": schema}, &r)
			g, err := m.Generate(bg, []backends.GenRequest{{Prompt: p, MaxTokens: n, JSONSchema: schema}})
			if err != nil {
				t.Fatal(err)
			}
			if g[0].Text != r.Content {
				t.Errorf("%q: Generate = %q (%s), llama-server %q", p, g[0].Text, g[0].FinishReason, r.Content)
			}
		}
	}
}

// TestGrammarMatchesNodeLlamaCpp runs llama.cpp's own grammar sampler
// (node-llama-cpp 3.21.1's prebuilt llama.cpp, testdata/gguf/grammar_greedy.mjs)
// on the GBNF text SchemaGBNF makes of the rating schema, greedy on the tiny
// model, and requires the same replies as Generate with the schema. With
// TestSchemaGBNFMatchesLlamaCpp (the same GBNF text as llama.cpp's converter)
// this is llama-server's json_schema path without llama-server. Needs node
// and GLOSSOBENCH_NODE_LLAMA_CPP (the package's dist/index.js).
func TestGrammarMatchesNodeLlamaCpp(t *testing.T) {
	lib := os.Getenv("GLOSSOBENCH_NODE_LLAMA_CPP")
	if lib == "" {
		t.Skip("GLOSSOBENCH_NODE_LLAMA_CPP not set")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	const n = 160
	src, err := grammar.SchemaGBNF(ratingSchema())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prompts, _ := json.Marshal(schemaPrompts)
	if err := os.WriteFile(filepath.Join(dir, "g.gbnf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p.json"), prompts, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "../../testdata/gguf/grammar_greedy.mjs", tinyPath, filepath.Join(dir, "g.gbnf"), filepath.Join(dir, "p.json"), strconv.Itoa(n))
	cmd.Env = append(os.Environ(), "NODE_LLAMA_CPP="+lib)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("grammar_greedy.mjs: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var want []string
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &want); err != nil || len(want) != len(schemaPrompts) {
		t.Fatalf("grammar_greedy.mjs printed %q: %v", out, err)
	}
	m := openTiny(t, Options{})
	for i, p := range schemaPrompts {
		g, err := m.Generate(bg, []backends.GenRequest{{Prompt: p, MaxTokens: n, JSONSchema: ratingSchema()}})
		if err != nil {
			t.Fatal(err)
		}
		if g[0].Text != want[i] {
			t.Errorf("%q: Generate = %q, llama.cpp %q", p, g[0].Text, want[i])
		}
	}
}
