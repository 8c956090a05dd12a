package mt

// The MT question reader as it was before mt_bench became a preset of the
// declarative mechanism (scorers/dataset), kept verbatim but for its names
// (and reference answers keyed by the id's text) so that
// TestPresetsMatchLegacyReaders can show the preset gives the same items
// byte for byte.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

func legacyReadQuestions(path string, d scorers.DatasetConfig, refAns map[string][]string) ([]scorers.Item, error) {
	name := d.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	}
	lang := d.Lang
	if lang == "" {
		lang = "en" // MT-Bench itself is English
	}
	var items []scorers.Item
	err := eachLine(path, d.SHA256, func(line int, data []byte) error {
		if d.Limit > 0 && len(items) >= d.Limit {
			return nil
		}
		it, keep, err := legacyParseQuestion(data, name, lang, line, d.Filter, refAns)
		if keep {
			items = append(items, it)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return items, nil
}

// parseQuestion turns one question line into an item; keep is false for a
// line the filter drops.
func legacyParseQuestion(data []byte, name, lang string, line int, filter map[string]string, refAns map[string][]string) (scorers.Item, bool, error) {
	var row struct {
		QuestionID *int     `json:"question_id"`
		Category   string   `json:"category"`
		Turns      []string `json:"turns"`
		Reference  []string `json:"reference"`
	}
	if err := json.Unmarshal(data, &row); err != nil {
		return scorers.Item{}, false, fmt.Errorf("invalid JSON: %v", err)
	}
	if row.QuestionID == nil {
		return scorers.Item{}, false, fmt.Errorf("field question_id: missing")
	}
	if row.Category == "" {
		return scorers.Item{}, false, fmt.Errorf("field category: missing")
	}
	if len(row.Turns) == 0 {
		return scorers.Item{}, false, fmt.Errorf("field turns: missing or empty")
	}
	for i, t := range row.Turns {
		if strings.TrimSpace(t) == "" {
			return scorers.Item{}, false, fmt.Errorf("field turns[%d]: empty", i)
		}
	}
	for k, v := range filter {
		if k != "category" {
			return scorers.Item{}, false, fmt.Errorf("filter.%s: the mt_bench format filters on category only", k)
		}
		if row.Category != v {
			return scorers.Item{}, false, nil
		}
	}
	// Source is the dataset: MT-Bench is one pool, and its category is a
	// breakdown, not a source the leakage audit should weigh.
	ex := extra{QuestionID: *row.QuestionID, Category: row.Category}
	var refs []string
	if needRef[row.Category] {
		refs = refAns[strconv.Itoa(*row.QuestionID)]
		if refs == nil {
			refs = row.Reference
		}
		ex.NeedsRef = len(refs) > 0
	}
	raw, _ := json.Marshal(ex)
	return scorers.Item{
		ID: fmt.Sprintf("%s/%d", name, *row.QuestionID), Axis: "mt", Dataset: name, Line: line,
		Source: name, Lang: lang, Prompt: strings.Join(row.Turns, "\n\n"), Gold: -1,
		Turns: row.Turns, References: refs, Extra: raw,
	}, true, nil
}
