package nlg

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// TestPresetsMatchLegacyReaders reads every NLG file of testdata and of
// the shared data folder with the presets and with the readers they
// replaced (legacy_test.go), with the options that change items: the
// items, prompts and payloads included, are the same byte for byte.
func TestPresetsMatchLegacyReaders(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "data", "nlg_translation")
	ex := func(name, file string) map[string]any {
		return map[string]any{"fewshot": 3, "examples": map[string]any{name: file}}
	}
	cases := []struct {
		dir  string
		opts map[string]any
		ds   scorers.DatasetConfig
		max  int
	}{
		{data, nil, scorers.DatasetConfig{Name: "p", Path: "flores_passages_eng_zsm_from_belebele.sample.jsonl", Format: FormatPassages}, 0},
		{data, map[string]any{"directions": []any{"ms-en"}, "metricx": "metricx-24-hybrid-large"}, scorers.DatasetConfig{Name: "p", Path: "flores_passages_eng_zsm_from_belebele.sample.jsonl", Format: FormatPassages, Limit: 5}, 128},
		{data, nil, scorers.DatasetConfig{Name: "s", Path: "flores200_devtest_en_to_ind_Latn.sample.jsonl", Format: FormatSeaHelm}, 0},
		{data, nil, scorers.DatasetConfig{Name: "s", Path: "flores200_devtest_ind_Latn_to_en.sample.jsonl", Format: FormatSeaHelm, Limit: 3}, 64},
		{data, ex("s", "flores200_dev_en_to_ind_Latn_examples.jsonl"), scorers.DatasetConfig{Name: "s", Path: "flores200_devtest_en_to_ind_Latn.sample.jsonl", Format: FormatSeaHelm}, 0},
		{data, ex("s", "flores200_dev_ind_Latn_to_en_examples.jsonl"), scorers.DatasetConfig{Name: "s", Path: "flores200_devtest_ind_Latn_to_en.sample.jsonl", Format: FormatSeaHelm, Lang: "id-en"}, 0},
		{shared, nil, scorers.DatasetConfig{Name: "p", Path: "flores_passages_eng_zsm_from_belebele.jsonl", Format: FormatPassages}, 0},
		{shared, map[string]any{"fewshot": 5}, scorers.DatasetConfig{Name: "s", Path: "flores200_devtest_en_to_ind_Latn.jsonl", Format: FormatSeaHelm}, 0},
		{shared, map[string]any{"fewshot": 5}, scorers.DatasetConfig{Name: "s", Path: "flores200_devtest_ind_Latn_to_en.jsonl", Format: FormatSeaHelm}, 0},
	}
	for _, c := range cases {
		if _, err := os.Stat(filepath.Join(c.dir, c.ds.Path)); err != nil {
			t.Logf("skip %s: %v", c.ds.Path, err)
			continue
		}
		cfg := scorers.AxisConfig{BaseDir: c.dir, Options: c.opts, MaxTokens: c.max, Datasets: []scorers.DatasetConfig{c.ds}}
		want, err := legacyLoad(cfg)
		if err != nil {
			t.Fatalf("%s: legacy reader: %v", c.ds.Path, err)
		}
		got, err := NewAxis().Load(cfg)
		if err != nil {
			t.Fatalf("%s: preset: %v", c.ds.Path, err)
		}
		scorerstest.SameJSON(t, c.ds.Path, got, want)
		t.Logf("%s (%s, options %v): %d items identical", c.ds.Path, c.ds.Format, c.opts, len(got))
	}
}
