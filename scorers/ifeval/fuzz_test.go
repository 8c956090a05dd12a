package ifeval

import (
	"strings"
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

// fuzzFamily runs the checkers of one family ("keywords:"...), strictly
// and loosely, on arbitrary input: no panics, and loose is never stricter
// than strict.
func fuzzFamily(f *testing.F, family string) {
	addSeeds(f)
	var checkers []Checker
	var ids []string
	for _, c := range fuzzCheckers {
		if !strings.HasPrefix(c.id, family+":") {
			continue
		}
		ch, err := NewChecker(c.id, c.kw, CheckerOptions{Seed: 1})
		if err != nil {
			f.Fatal(err)
		}
		checkers = append(checkers, ch)
		ids = append(ids, c.id)
	}
	if len(checkers) == 0 {
		f.Fatalf("no checkers in family %s", family)
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

func FuzzKeywords(f *testing.F)          { fuzzFamily(f, "keywords") }
func FuzzLanguage(f *testing.F)          { fuzzFamily(f, "language") }
func FuzzLengthConstraints(f *testing.F) { fuzzFamily(f, "length_constraints") }
func FuzzDetectableContent(f *testing.F) { fuzzFamily(f, "detectable_content") }
func FuzzDetectableFormat(f *testing.F)  { fuzzFamily(f, "detectable_format") }
func FuzzCombination(f *testing.F)       { fuzzFamily(f, "combination") }
func FuzzStartEnd(f *testing.F)          { fuzzFamily(f, "startend") }
func FuzzChangeCase(f *testing.F)        { fuzzFamily(f, "change_case") }
func FuzzPunctuation(f *testing.F)       { fuzzFamily(f, "punctuation") }

// FuzzParsePrompts: prompt files of either dialect never panic the reader;
// what it accepts has consistent ids and kwargs.
func FuzzParsePrompts(f *testing.F) {
	f.Add(`{"key": 1, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}`, false)
	f.Add(`{"key": 2, "prompt": "b", "instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"relation": "at least", "num_words": 3}]}`, false)
	f.Add(`{"key": 3, "prompt": "c", "instruction_id_list": ["keywords:letter_frequency"], "kwargs": [{"letter": 5, "let_frequency": 1e400, "let_relation": null}]}`, false)
	f.Add(`{"id":1,"prompts":[{"text":"x"}],"prompt_templates":["{text}"],"metadata":{"language":"id","subcategory":"detectable_format:constrained_response"},"kwargs":[{}]}`, true)
	f.Add(`{"id":2,"prompts":[],"metadata":{}}`, true)
	f.Fuzz(func(t *testing.T, data string, sea bool) {
		dialect := DialectIFEval
		if sea {
			dialect = DialectSEA
		}
		ps, err := ParsePrompts(strings.NewReader(data), dialect, "")
		if err != nil {
			return
		}
		for _, p := range ps {
			if len(p.InstructionIDs) != len(p.Kwargs) || len(p.InstructionIDs) == 0 {
				t.Fatalf("accepted prompt %+v", p)
			}
		}
	})
}

// FuzzParseResponses: response files never panic the reader.
func FuzzParseResponses(f *testing.F) {
	f.Add(`{"prompt": "a", "response": "b"}` + "\n" + `{"prompt": "c", "response": ""}`)
	f.Add(`{"prompt": 1}`)
	f.Fuzz(func(t *testing.T, data string) {
		ls, err := ParseResponses(strings.NewReader(data))
		if err == nil && strings.TrimSpace(data) == "" && len(ls) != 0 {
			t.Fatal("responses from blank input")
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
