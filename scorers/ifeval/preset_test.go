package ifeval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// legacyLoad is the axis's Load as it was before the formats became
// presets (through legacyParsePrompts), verbatim but for its name.
func legacyLoad(cfg scorers.AxisConfig) ([]scorers.Item, error) {
	var items []scorers.Item
	for _, ds := range cfg.Datasets {
		src := ds.Source(cfg.BaseDir)
		f, err := dataset.Open(context.Background(), src)
		if err != nil {
			return nil, err
		}
		prompts, err := legacyParsePrompts(f, ds.Format, ds.Lang)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("if axis: dataset %s: %w", ds.Name, err)
		}
		n := 0
		for _, p := range prompts {
			if id, ok := ds.Filter["instruction_id"]; ok && !contains(p.InstructionIDs, id) {
				continue
			}
			if ds.Limit > 0 && n >= ds.Limit {
				break
			}
			n++
			extra, err := json.Marshal(itemExtra{p.Key, p.Dialect, p.InstructionIDs, p.Kwargs})
			if err != nil {
				return nil, err
			}
			items = append(items, scorers.Item{
				ID: ds.Name + "/" + p.Key, Axis: "if", Dataset: ds.Name, Line: p.Line,
				Source: ds.Name, Lang: p.Lang, Prompt: p.Text, Gold: -1, Extra: extra,
			})
		}
	}
	return items, nil
}

// TestPresetsMatchLegacyReaders reads every IF file of testdata and of
// the shared data folder with the presets and with the readers they
// replaced (legacy_test.go): the prompts and the items are the same byte
// for byte.
func TestPresetsMatchLegacyReaders(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "data")
	cases := []scorers.DatasetConfig{
		{Path: testdata + "/input_data.jsonl", Format: DialectIFEval},
		{Path: testdata + "/input_data.jsonl", Format: DialectIFEval, Lang: "ms", Limit: 30},
		{Path: testdata + "/input_data.jsonl", Format: DialectIFEval, Filter: map[string]string{"instruction_id": "punctuation:no_comma"}},
		{Path: testdata + "/en_sea_ifeval.jsonl", Format: DialectSEA},
		{Path: testdata + "/id_sea_ifeval.jsonl", Format: DialectSEA, Lang: "id"},
		{Path: testdata + "/id_sea_ifeval.jsonl", Format: DialectSEA, Lang: "en"},
		{Path: shared + "/ifeval/input_data.jsonl", Format: DialectIFEval},
		{Path: shared + "/sea_ifeval/id_sea_ifeval.jsonl", Format: DialectSEA},
		{Path: shared + "/sea_ifeval/en_sea_ifeval.jsonl", Format: DialectSEA},
	}
	for _, d := range cases {
		d.Name = "ds"
		if _, err := os.Stat(d.Path); err != nil {
			t.Logf("skip %s: %v", d.Path, err)
			continue
		}
		want, err := legacyReadPrompts(d.Path, d.Format, d.Lang)
		if err != nil {
			t.Fatalf("%s: legacy reader: %v", d.Path, err)
		}
		got, err := ReadPrompts(d.Path, d.Format, d.Lang)
		if err != nil {
			t.Fatalf("%s: preset: %v", d.Path, err)
		}
		scorerstest.SameJSON(t, d.Path+" prompts", got, want)
		cfg := scorers.AxisConfig{Datasets: []scorers.DatasetConfig{d}}
		wantItems, err := legacyLoad(cfg)
		if err != nil {
			t.Fatal(err)
		}
		gotItems, err := Axis{}.Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		scorerstest.SameJSON(t, d.Path+" items", gotItems, wantItems)
		t.Logf("%s (%s, lang %q, limit %d, filter %v): %d prompts, %d items identical", filepath.Base(d.Path), d.Format, d.Lang, d.Limit, d.Filter, len(got), len(gotItems))
	}
}
