package ifeval

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The golden files are written by testdata/ifeval/make_golden.py with NLTK
// 3.8, python-langdetect 1.0.9 and a line-for-line transcription of the
// official checkers (testdata/ifeval/official_checks.py).

var testdata = filepath.Join("..", "..", "testdata", "ifeval")

func readJSONL[T any](t testing.TB, name string) []T {
	t.Helper()
	f, err := os.Open(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	return out
}

func TestPunktMatchesNLTK(t *testing.T) {
	rows := readJSONL[struct {
		Text      string   `json:"text"`
		Sentences []string `json:"sentences"`
		Words     []string `json:"words"`
	}](t, "tokenize_golden.jsonl")
	bad := 0
	for _, r := range rows {
		got := EnglishPunkt().Sentences(r.Text)
		if !slices.Equal(got, r.Sentences) && len(got)+len(r.Sentences) > 0 {
			bad++
			if bad <= 5 {
				t.Errorf("Sentences(%.80q):\n got %q\nwant %q", r.Text, got, r.Sentences)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ from nltk.sent_tokenize", bad, len(rows))
	}
}

func TestWordTokenizeMatchesNLTK(t *testing.T) {
	rows := readJSONL[struct {
		Text  string   `json:"text"`
		Words []string `json:"words"`
	}](t, "tokenize_golden.jsonl")
	bad := 0
	for _, r := range rows {
		got := WordTokenize(r.Text)
		if !slices.Equal(got, r.Words) && len(got)+len(r.Words) > 0 {
			bad++
			if bad <= 5 {
				for i := range min(len(got), len(r.Words)) {
					if got[i] != r.Words[i] {
						t.Errorf("WordTokenize(%.60q): first difference at token %d: got %q want %q (context %q)", r.Text, i, got[i], r.Words[i], r.Words[max(0, i-3):min(len(r.Words), i+3)])
						break
					}
				}
				if len(got) != len(r.Words) {
					t.Errorf("WordTokenize(%.60q): %d tokens, want %d", r.Text, len(got), len(r.Words))
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts differ from nltk.word_tokenize", bad, len(rows))
	}
}

func TestLangdetectMatchesPython(t *testing.T) {
	rows := readJSONL[struct {
		Text string  `json:"text"`
		Lang *string `json:"lang"`
	}](t, "langdetect_golden.jsonl")
	for _, r := range rows {
		got, err := DetectLanguage(r.Text)
		switch {
		case r.Lang == nil && err == nil:
			t.Errorf("DetectLanguage(%.60q) = %q, want langdetect's error", r.Text, got)
		case r.Lang != nil && err != nil:
			t.Errorf("DetectLanguage(%.60q): %v, want %q", r.Text, err, *r.Lang)
		case r.Lang != nil && got != *r.Lang:
			t.Errorf("DetectLanguage(%.60q) = %q, want %q", r.Text, got, *r.Lang)
		}
	}
}

func loadGPT4(t testing.TB) ([]Prompt, map[string]string) {
	t.Helper()
	prompts, err := ReadPrompts(filepath.Join(testdata, "input_data.jsonl"), DialectIFEval, "")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := ReadResponses(filepath.Join(testdata, "responses_gpt4_aligned.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	responses, err := MatchResponses(prompts, lines)
	if err != nil {
		t.Fatal(err)
	}
	return prompts, responses
}

// TestGPT4MatchesOfficialCheckers scores the GPT-4 responses that ship with
// IFEval and compares every instruction verdict, strict and loose, with the
// official checkers' verdicts.
func TestGPT4MatchesOfficialCheckers(t *testing.T) {
	res := compareOfficial(t, "gpt4_outcomes.jsonl", 0)
	t.Logf("prompt strict %.4f inst strict %.4f prompt loose %.4f inst loose %.4f",
		res.PromptStrict, res.InstStrict, res.PromptLoose, res.InstLoose)
}

// TestShiftedMatchesOfficialCheckers checks each prompt against the next
// prompt's response: mostly failing verdicts, a different path through
// every checker.
func TestShiftedMatchesOfficialCheckers(t *testing.T) {
	compareOfficial(t, "gpt4_shifted_outcomes.jsonl", 1)
}

func compareOfficial(t *testing.T, goldenFile string, shift int) Result {
	prompts, responses := loadGPT4(t)
	shifted := make(map[string]string, len(prompts))
	for i, p := range prompts {
		shifted[p.Key] = responses[prompts[(i+shift)%len(prompts)].Key]
	}
	res, err := Evaluate(prompts, shifted)
	if err != nil {
		t.Fatal(err)
	}
	golden := readJSONL[struct {
		Key    int      `json:"key"`
		IDs    []string `json:"instruction_id_list"`
		Strict []bool   `json:"strict"`
		Loose  []bool   `json:"loose"`
	}](t, goldenFile)
	if len(golden) != len(res.Outcomes) {
		t.Fatalf("%d outcomes, golden has %d", len(res.Outcomes), len(golden))
	}
	exempt, compared := 0, 0
	for i, g := range golden {
		o := res.Outcomes[i]
		for j, id := range g.IDs {
			if id == "keywords:letter_frequency" && chooseLetter(prompts[i].Kwargs[j]["letter"], 0) != []rune(prompts[i].Kwargs[j]["letter"].(string))[0] {
				// "#" and "!": google-research HEAD counts the character
				// itself; the IFEval of the paper drew a random letter,
				// which this package draws from a seeded generator.
				exempt++
				continue
			}
			compared++
			if o.Strict[j] != g.Strict[j] {
				t.Errorf("key %d %s: strict %v, official %v", g.Key, id, o.Strict[j], g.Strict[j])
			}
			if o.Loose[j] != g.Loose[j] {
				t.Errorf("key %d %s: loose %v, official %v", g.Key, id, o.Loose[j], g.Loose[j])
			}
		}
	}
	if exempt != 2 || compared != 832 {
		t.Errorf("compared %d verdicts and exempted %d, want 832 and 2 (keys 1122 and 1129)", compared, exempt)
	}
	return res
}
