package ifeval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStressMatchesPython compares sentences, words, the \w+ word count and
// every checker's strict and loose verdicts with the Python reference on
// 1500 seeded random texts of tricky pieces (testdata/ifeval/make_stress.py).
func TestStressMatchesPython(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testdata, "stress_golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var head struct {
		Checks [][2]json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil {
		t.Fatal(err)
	}
	p := Prompt{Key: "stress"}
	var checkers []Checker
	for _, c := range head.Checks {
		var id string
		var kw map[string]any
		if err := json.Unmarshal(c[0], &id); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c[1], &kw); err != nil {
			t.Fatal(err)
		}
		ch, err := NewChecker(id, kw, CheckerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkers = append(checkers, ch)
		p.InstructionIDs = append(p.InstructionIDs, id)
	}
	fails := map[string]int{}
	report := func(kind, text string, got, want any) {
		fails[kind]++
		if fails[kind] <= 3 {
			t.Errorf("%s on %q:\n got %q\nwant %q", kind, text, got, want)
		}
	}
	for _, line := range lines[1:] {
		var r struct {
			Text      string   `json:"text"`
			Sentences []string `json:"sentences"`
			Words     []string `json:"words"`
			NWords    int      `json:"nwords"`
			Strict    []bool   `json:"strict"`
			Loose     []bool   `json:"loose"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if got := EnglishPunkt().Sentences(r.Text); !slices.Equal(got, r.Sentences) && len(got)+len(r.Sentences) > 0 {
			report("sentences", r.Text, got, r.Sentences)
		}
		if got := WordTokenize(r.Text); !slices.Equal(got, r.Words) && len(got)+len(r.Words) > 0 {
			report("words", r.Text, got, r.Words)
		}
		if got := countWordRuns(r.Text); got != r.NWords {
			report("word count", r.Text, got, r.NWords)
		}
		o := Check(p, checkers, r.Text)
		for i, id := range p.InstructionIDs {
			if o.Strict[i] != r.Strict[i] {
				report(id+" strict", r.Text, o.Strict[i], r.Strict[i])
			}
			if o.Loose[i] != r.Loose[i] {
				report(id+" loose", r.Text, o.Loose[i], r.Loose[i])
			}
		}
	}
	if len(fails) > 0 {
		t.Errorf("mismatches by kind: %v", fails)
	}
}
