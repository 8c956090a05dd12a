package ifeval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/backendtest"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// TestGPT4PaperNumbers compares the four accuracies on the GPT-4 responses
// with the paper (Zhou et al. 2023, table 3: 76.89 / 83.57 / 79.30 / 85.37).
// Strict agrees exactly. Loose is one prompt and one instruction higher here
// (79.48 / 85.49); the official checkers as of today give the same loose
// verdicts as this package (TestGPT4MatchesOfficialCheckers), so the gap is
// a change upstream since the paper, not a porting error.
func TestGPT4PaperNumbers(t *testing.T) {
	prompts, responses := loadGPT4(t)
	res, err := Evaluate(prompts, responses)
	if err != nil {
		t.Fatal(err)
	}
	if res.Prompts != 541 || res.Instructions != 834 {
		t.Fatalf("%d prompts, %d instructions; want 541, 834", res.Prompts, res.Instructions)
	}
	for _, c := range []struct {
		name      string
		got, want float64
		n         int
		slack     int
	}{
		{"prompt strict", res.PromptStrict, 0.7689, 541, 0},
		{"instruction strict", res.InstStrict, 0.8357, 834, 0},
		{"prompt loose", res.PromptLoose, 0.7930, 541, 1},
		{"instruction loose", res.InstLoose, 0.8537, 834, 1},
	} {
		diff := (c.got - c.want) * float64(c.n)
		if diff < -0.5-float64(c.slack) || diff > 0.5+float64(c.slack) {
			t.Errorf("%s = %.4f, paper %.4f (%.1f items apart)", c.name, c.got, c.want, diff)
		}
	}
}

func TestSEAIFEvalLoads(t *testing.T) {
	for _, lang := range []string{"en", "id"} {
		ps, err := ReadPrompts(filepath.Join(testdata, lang+"_sea_ifeval.jsonl"), DialectSEA, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 105 {
			t.Fatalf("%s: %d prompts, want 105", lang, len(ps))
		}
		for _, p := range ps {
			if p.Lang != lang || len(p.InstructionIDs) != 1 {
				t.Fatalf("%s line %d: lang %q ids %v", lang, p.Line, p.Lang, p.InstructionIDs)
			}
		}
	}
}

func TestSEAChecks(t *testing.T) {
	mk := func(id, lang string, kw map[string]any) Checker {
		t.Helper()
		c, err := NewChecker(id, kw, CheckerOptions{SEA: true, Lang: lang})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if !mk("detectable_format:constrained_response", "id", nil).Check("Jawaban saya adalah tidak.") {
		t.Error("Indonesian constrained option not accepted")
	}
	if mk("detectable_format:constrained_response", "id", nil).Check("My answer is no.") {
		t.Error("English option accepted for an Indonesian prompt")
	}
	if !mk("keywords:number_frequency", "id", kw("number", "7", "frequency", 2, "relation", "exactly")).Check("7 hari, 7 malam") {
		t.Error("number_frequency exactly 2")
	}
	if !mk("startend:first_word", "id", kw("first_word", "Halo")).Check("  halo semua") {
		t.Error("first_word")
	}
	if !mk("language:response_language", "id", kw("language", "id")).Check("Ini adalah kalimat dalam bahasa Indonesia tentang cuaca hari ini.") {
		t.Error("Indonesian not detected")
	}
	if _, err := NewChecker("length_constraints:number_words", kw("num_words", 3, "relation", "exactly"), CheckerOptions{}); err == nil {
		t.Error(`relation "exactly" accepted outside SEA-IFEval`)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadInputErrors(t *testing.T) {
	for _, c := range []struct{ name, file, want string }{
		{"unknown id", `{"key": 1, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
{"key": 7, "prompt": "b", "instruction_id_list": ["keywords:nope"], "kwargs": [{}]}`, `f.jsonl:2: key 7: unknown instruction id "keywords:nope"`},
		{"missing kwarg", `{"key": 3, "prompt": "a", "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"relation": "at least"}]}`,
			`f.jsonl:1: key 3: instruction "length_constraints:number_words": missing kwarg "num_words"`},
		{"kwargs length", `{"key": 4, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": []}`, "f.jsonl:1: key 4: 1 instruction ids but 0 kwargs"},
		{"bad json", `{"key": 5, "prompt": `, "f.jsonl:1: invalid JSON"},
		{"duplicate key", `{"key": 6, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
{"key": 6, "prompt": "b", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}`, "f.jsonl:2: key 6 already used on line 1"},
	} {
		_, err := ReadPrompts(writeTemp(t, c.file), DialectIFEval, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}

	prompts, err := ParsePrompts(strings.NewReader(`{"key": 1, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}`), DialectIFEval, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = MatchResponses(prompts, []ResponseLine{{Line: 1, Prompt: "a", Response: "x"}, {Line: 2, Prompt: "zzz", Response: "y"}})
	if err == nil || !strings.Contains(err.Error(), "response line 2") {
		t.Errorf("unknown response prompt: %v", err)
	}
	_, err = MatchResponses(prompts, []ResponseLine{{Line: 1, Prompt: "b", Response: "x"}})
	if err == nil || !strings.Contains(err.Error(), "prompt line 1: key 1") {
		t.Errorf("missing response: %v", err)
	}
	if _, err := Evaluate(prompts, map[string]string{}); err == nil || !strings.Contains(err.Error(), "key 1: no response") {
		t.Errorf("Evaluate without response: %v", err)
	}
	_, err = ReadResponses(writeTemp(t, `{"prompt": "a", "response": "x"}`+"\n"+`{"prompt": "b"}`))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("response without response field: %v", err)
	}
}

func TestLooseVariants(t *testing.T) {
	v := looseVariants("Sure!\n*a*\nb\nBye")
	want := [8]string{"Sure!\n*a*\nb\nBye", "Sure!\na\nb\nBye", "*a*\nb\nBye", "Sure!\n*a*\nb", "*a*\nb", "a\nb\nBye", "Sure!\na\nb", "a\nb"}
	if v != want {
		t.Errorf("looseVariants = %q\nwant %q", v, want)
	}
	if v := looseVariants("one line"); v[2] != "" || v[3] != "" || v[4] != "" {
		t.Errorf("single line variants %q", v)
	}
}

func TestAxis(t *testing.T) {
	ax := NewAxis()
	if ax.Name() != "if" {
		t.Fatalf("Name = %q", ax.Name())
	}
	cfg := scorers.AxisConfig{BaseDir: testdata, Datasets: []scorers.DatasetConfig{
		{Name: "ifeval", Path: "input_data.jsonl", Format: "ifeval", Limit: 20},
		{Name: "sea_id", Path: "id_sea_ifeval.jsonl", Format: "sea_ifeval", Lang: "id", Limit: 10},
	}}
	items := scorerstest.Load(t, ax, cfg)
	if len(items) != 30 || items[0].ID != "ifeval/1000" || items[20].Lang != "id" {
		t.Fatalf("%d items, first %q, item 20 lang %q", len(items), items[0].ID, items[20].Lang)
	}
	b := &backendtest.Fixed{Text: "hello world", Caps: backends.Capabilities{Name: "fake"}}
	var preds []scorers.Prediction
	for i, it := range items {
		chat := "auto"
		if i == 0 {
			chat = "always"
		}
		p, err := ax.Predict(context.Background(), b, it, scorers.PredictOptions{ChatTemplate: chat})
		if err != nil {
			t.Fatal(err)
		}
		preds = append(preds, p)
	}
	if len(b.Requests[0].Messages) != 1 || b.Requests[0].Prompt != "" || b.Requests[1].Prompt == "" || b.Requests[1].MaxTokens != DefaultMaxTokens {
		t.Errorf("requests: chat %+v raw %+v", b.Requests[0], b.Requests[1])
	}
	res, err := ax.Score(items, preds, scorers.ScoreOptions{Seed: 1, BootstrapResamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metric != "prompt_level_strict_acc" || res.Score == nil || res.CI95 == nil || len(res.Items) != 30 {
		t.Fatalf("result %+v", res)
	}
	if lo, hi := res.CI95[0], res.CI95[1]; lo > *res.Score || hi < *res.Score {
		t.Errorf("CI %v does not contain %v", *res.CI95, *res.Score)
	}
	perLang := res.Secondary["per_language"].(map[string]Accuracy)
	if perLang["en"].Prompts != 20 || perLang["id"].Prompts != 10 {
		t.Errorf("per language %+v", perLang)
	}
	// The axis score equals Evaluate's on the same responses.
	prompts, err := ReadPrompts(filepath.Join(testdata, "input_data.jsonl"), DialectIFEval, "")
	if err != nil {
		t.Fatal(err)
	}
	resp := map[string]string{}
	for _, p := range prompts[:20] {
		resp[p.Key] = "hello world"
	}
	direct, err := Evaluate(prompts[:20], resp)
	if err != nil {
		t.Fatal(err)
	}
	if got := perLang["en"].PromptStrict; got != direct.PromptStrict {
		t.Errorf("axis en prompt strict %v, Evaluate %v", got, direct.PromptStrict)
	}
	if _, err := ax.Score(items, preds[:3], scorers.ScoreOptions{}); err == nil {
		t.Error("mismatched predictions accepted")
	}
	bad := cfg
	bad.Datasets = []scorers.DatasetConfig{{Name: "x", Path: "input_data.jsonl", Format: "mmlu"}}
	if _, err := ax.Load(bad); err == nil || !strings.Contains(err.Error(), "unknown prompt format") {
		t.Errorf("bad format: %v", err)
	}
}

// BenchmarkEvaluateGPT4 scores all 541 prompts strictly and loosely.
func BenchmarkEvaluateGPT4(b *testing.B) {
	prompts, responses := loadGPT4(b)
	if _, err := DetectLanguage("warm up the profiles"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := Evaluate(prompts, responses); err != nil {
			b.Fatal(err)
		}
	}
}
