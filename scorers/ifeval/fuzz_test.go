package ifeval

import (
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"", "Hello. World!", "Mr. Smith went to D.C. He said \"hi.\" (Then left.)",
	"* a\n* b\n- c\n***\n**bold** *it*", "<<Title>>\n\nP.S. done", "```json\n{\"a\": [1, NaN]}\n```",
	"ALL CAPS HERE. cannot gimme 'tis", "…!?;:,\u00a0\u2003 x", "\xff\xfe invalid", "1.2.3. 4... . . . --",
	"Ini adalah kalimat bahasa Indonesia.", "これは日本語です。", "http://x.y/z a@b.cd",
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
}

// FuzzPunkt: sentence splitting never panics, and the sentences are
// non-empty pieces of the input in order.
func FuzzPunkt(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, sent := range EnglishPunkt().Sentences(s) {
			if sent == "" {
				t.Fatalf("empty sentence from %q", s)
			}
		}
	})
}

// FuzzWordTokenize: the tokenizer never panics or returns empty tokens.
func FuzzWordTokenize(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range WordTokenize(s) {
			if w == "" {
				t.Fatalf("empty token from %q", s)
			}
		}
	})
}

// FuzzLangdetect: detection never panics and returns a profile language,
// "unknown" or ErrNoFeatures.
func FuzzLangdetect(f *testing.F) {
	addSeeds(f)
	d, err := loadDetector()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lang, err := DetectLanguage(s)
		if err != nil {
			return
		}
		if lang != "unknown" && !contains(d.langs, lang) {
			t.Fatalf("DetectLanguage(%q) = %q", s, lang)
		}
	})
}

// fuzzCheckers is one checker of each family with typical kwargs.
var fuzzCheckers = []struct {
	id string
	kw map[string]any
}{
	{"keywords:existence", map[string]any{"keywords": []any{"river", "Mona Lisa"}}},
	{"keywords:frequency", map[string]any{"keyword": "the", "frequency": 2.0, "relation": "at least"}},
	{"keywords:forbidden_words", map[string]any{"forbidden_words": []any{"power", "ünï"}}},
	{"keywords:letter_frequency", map[string]any{"letter": "#", "let_frequency": 2.0, "let_relation": "less than"}},
	{"language:response_language", map[string]any{"language": "en"}},
	{"length_constraints:number_sentences", map[string]any{"num_sentences": 3.0, "relation": "less than"}},
	{"length_constraints:number_paragraphs", map[string]any{"num_paragraphs": 2.0}},
	{"length_constraints:number_words", map[string]any{"num_words": 5.0, "relation": "at least"}},
	{"length_constraints:nth_paragraph_first_word", map[string]any{"num_paragraphs": 2.0, "nth_paragraph": 2.0, "first_word": "so"}},
	{"detectable_content:number_placeholders", map[string]any{"num_placeholders": 1.0}},
	{"detectable_content:postscript", map[string]any{"postscript_marker": "P.S."}},
	{"detectable_content:postscript", map[string]any{"postscript_marker": "P.P.S"}},
	{"detectable_format:number_bullet_lists", map[string]any{"num_bullets": 2.0}},
	{"detectable_format:constrained_response", nil},
	{"detectable_format:number_highlighted_sections", map[string]any{"num_highlights": 2.0}},
	{"detectable_format:multiple_sections", map[string]any{"section_spliter": "Section", "num_sections": 2.0}},
	{"detectable_format:json_format", nil},
	{"detectable_format:title", nil},
	{"combination:two_responses", nil},
	{"combination:repeat_prompt", map[string]any{"prompt_to_repeat": "Say hi."}},
	{"startend:end_checker", map[string]any{"end_phrase": "Any other questions?"}},
	{"change_case:capital_word_frequency", map[string]any{"capital_frequency": 2.0, "capital_relation": "at least"}},
	{"change_case:english_capital", nil},
	{"change_case:english_lowercase", nil},
	{"punctuation:no_comma", nil},
	{"startend:quotation", nil},
}

// FuzzCheckers runs every checker family, strict and loose, on arbitrary
// input: no panics, and loose is never stricter than strict.
func FuzzCheckers(f *testing.F) {
	addSeeds(f)
	var checkers []Checker
	var ids []string
	for _, c := range fuzzCheckers {
		ch, err := NewChecker(c.id, c.kw, CheckerOptions{Seed: 1})
		if err != nil {
			f.Fatal(err)
		}
		checkers = append(checkers, ch)
		ids = append(ids, c.id)
	}
	p := Prompt{Key: "fuzz", InstructionIDs: ids}
	f.Fuzz(func(t *testing.T, s string) {
		o := Check(p, checkers, s)
		for i := range o.Strict {
			if o.Strict[i] && !o.Loose[i] {
				t.Fatalf("%s: strict pass but loose fail on %q", ids[i], s)
			}
		}
	})
}

// FuzzPyJSON: the Python-compatible JSON check agrees with encoding/json
// wherever Python's extensions (NaN, Infinity) are absent.
func FuzzPyJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1, 2]`, `{"a": "\u00e9"}`, `01`, `[1,]`, `"\x01"`, `NaN`, `1e5`, `-0.5E-3`, `[[[[]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := pyJSONValid(s)
		if !utf8.ValidString(s) || containsAny(s, "NaN", "Infinity") {
			return
		}
		if want := jsonValid(s); got != want {
			t.Fatalf("pyJSONValid(%q) = %v, encoding/json says %v", s, got, want)
		}
	})
}
