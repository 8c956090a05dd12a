package ifeval

import (
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// tallyFixture loads IFEval and SEA-IFEval prompts in two languages and
// answers them with GPT-4's responses (or, for SEA-IFEval, the prompt
// itself), with truncated, failed, unsupported and empty predictions and
// predictions without an item id mixed in.
func tallyFixture(t *testing.T) ([]scorers.Item, []scorers.Prediction) {
	t.Helper()
	items, err := NewAxis().Load(scorers.AxisConfig{BaseDir: testdata, Datasets: []scorers.DatasetConfig{
		{Name: "ifeval", Path: "input_data.jsonl", Format: "ifeval", Limit: 40},
		{Name: "sea_id", Path: "id_sea_ifeval.jsonl", Format: "sea_ifeval", Lang: "id", Limit: 12},
		{Name: "sea_en", Path: "en_sea_ifeval.jsonl", Format: "sea_ifeval", Lang: "en", Limit: 8},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, responses := loadGPT4(t)
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		text, ok := responses[strings.TrimPrefix(it.ID, "ifeval/")]
		if !ok {
			text = it.Prompt
		}
		gen := backends.Generation{ID: it.ID, Text: text, FinishReason: "stop"}
		if i%6 == 5 {
			gen.FinishReason = "length"
		}
		p := scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{gen}}
		switch i {
		case 3:
			p.Error = "backend timed out"
		case 17:
			p.Unsupported = true
		case 22:
			p.Generations = nil
		case 8, 45:
			p.ItemID = ""
		}
		preds[i] = p
	}
	return items, preds
}

// TestTallyMatchesScoreWhateverTheSplit adds the fixture to a tally in
// shards of several sizes and requires the result and the item scores that
// Score gives for the whole axis.
func TestTallyMatchesScoreWhateverTheSplit(t *testing.T) {
	items, preds := tallyFixture(t)
	whole := scorerstest.CheckSplits(t, NewAxis(), scorers.ScoreOptions{Seed: 7, BootstrapResamples: 300}, items, preds)

	// The fixture must exercise every part of the result, or agreement
	// across splits would prove little.
	truncated, passed, instructions := 0, 0.0, 0
	for i, p := range preds {
		if p.Error == "" && !p.Unsupported && len(p.Generations) > 0 && p.Generations[0].Truncated() {
			truncated++
		}
		passed += whole.Items[i].Score
		instructions += len(whole.Items[i].Fields["instruction_id_list"].([]string))
	}
	perLang := whole.Secondary["per_language"].(map[string]Accuracy)
	switch {
	case whole.N != len(items) || len(whole.Items) != len(items):
		t.Fatalf("N = %d with %d item scores, want %d", whole.N, len(whole.Items), len(items))
	case whole.Score == nil || *whole.Score != passed/float64(len(items)) || passed == 0 || passed == float64(len(items)):
		t.Fatalf("score %v with %v of %d prompts passed", whole.Score, passed, len(items))
	case whole.CI95 == nil || whole.CI95[0] == whole.CI95[1]:
		t.Fatalf("CI %v", whole.CI95)
	case truncated == 0 || whole.TruncationRate != float64(truncated)/float64(len(items)):
		t.Fatalf("truncation rate %v, want %d of %d", whole.TruncationRate, truncated, len(items))
	case whole.Secondary["instructions"] != instructions:
		t.Fatalf("instructions %v, want %d", whole.Secondary["instructions"], instructions)
	case perLang["en"].Prompts != 48 || perLang["id"].Prompts != 12:
		t.Fatalf("per language %+v", perLang)
	case len(whole.Notes) != 4:
		t.Fatalf("notes %q, want the two method notes, the non-English note and the truncation note", whole.Notes)
	}
}

func TestTallyEmptyIsScoreOfNothing(t *testing.T) {
	got := scorerstest.CheckEmpty(t, NewAxis(), scorers.ScoreOptions{Seed: 3})
	if got.N != 0 || got.Score != nil || len(got.Notes) != 1 {
		t.Errorf("empty result %+v", got)
	}
}

// TestTallyRejectsMismatchedShards also checks that a rejected shard is not
// counted: the tally then scores the whole fixture exactly as Score does.
func TestTallyRejectsMismatchedShards(t *testing.T) {
	items, preds := tallyFixture(t)
	items, preds = items[:10], preds[:10]
	opt := scorers.ScoreOptions{Seed: 1, BootstrapResamples: 100}
	tl := scorerstest.Tally(t, NewAxis(), opt)
	if _, err := tl.Add(items[:3], preds[:2]); err == nil || !strings.Contains(err.Error(), "2 predictions for 3 items") {
		t.Errorf("short predictions: %v", err)
	}
	wrong := append([]scorers.Prediction(nil), preds[:3]...)
	wrong[2].ItemID = items[0].ID
	if _, err := tl.Add(items[:3], wrong); err == nil || !strings.Contains(err.Error(), "is for item "+items[0].ID) {
		t.Errorf("mismatched item id: %v", err)
	}
	scores := scorerstest.Add(t, tl, items, preds, []int{len(items)})
	want, err := NewAxis().Score(items, preds, opt)
	if err != nil {
		t.Fatal(err)
	}
	scorerstest.CheckResult(t, "after rejected shards", tl, scores, want)
}
