package mcq

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// TestPresetsMatchLegacyReaders reads every MCQ file of testdata and of
// the shared data folder with the presets and with the readers they
// replaced (legacy_test.go): the items, prompts included, are the same
// byte for byte.
func TestPresetsMatchLegacyReaders(t *testing.T) {
	shared := filepath.Join("..", "..", "..", "shared", "data")
	cases := []struct {
		file   string
		format string
		lang   string
		filter map[string]string
	}{
		{"../../testdata/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz", "global_mmlu", "ms", nil},
		{"../../testdata/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz", "global_mmlu", "ms", map[string]string{"cultural_sensitivity_label": "CS"}},
		{"../../testdata/data/belebele_ms_en/ms_belebele.jsonl", "belebele", "ms", nil},
		{"../../testdata/data/belebele_ms_en/en_belebele.jsonl", "belebele", "en", nil},
		{"../../testdata/data/nli_indonli/id_indonli_lay_1000sample.jsonl", "indonli", "id", nil},
		{"../../testdata/data/nli_indonli/id_indonli_lay_1000sample.jsonl", "indonli", "", nil},
		{"../../testdata/data/nli_indonli/id_indonli_lay_1000sample.jsonl", "indonli", "ms", nil},
		{"../../testdata/data/cultural_kalahi_tl/tl_kalahi_mc.jsonl", "kalahi", "tl", nil},
		{shared + "/global_mmlu_ms/global_mmlu_ms_test.jsonl.gz", "global_mmlu", "ms", nil},
		{shared + "/global_mmlu_ms/global_mmlu_ms_test.jsonl.gz", "global_mmlu", "ms", map[string]string{"cultural_sensitivity_label": "CS"}},
		{shared + "/global_mmlu_ms/global_mmlu_ms_dev.jsonl.gz", "global_mmlu", "ms", nil},
		{shared + "/belebele_ms_en/ms_belebele.jsonl", "belebele", "ms", nil},
		{shared + "/belebele_ms_en/en_belebele.jsonl", "belebele", "en", nil},
		{shared + "/belebele_ms_en/ms_belebele_examples.jsonl", "belebele", "ms", nil},
		{shared + "/belebele_ms_en/en_belebele_examples.jsonl", "belebele", "en", nil},
		{shared + "/nli_indonli/id_indonli_lay_1000sample.jsonl", "indonli", "id", nil},
		{shared + "/cultural_kalahi_tl/tl_kalahi_mc.jsonl", "kalahi", "tl", nil},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.file); err != nil {
			t.Logf("skip %s: %v", c.file, err)
			continue
		}
		d := scorers.DatasetConfig{Name: "ds", Path: c.file, Format: c.format, Lang: c.lang, Filter: c.filter}
		want, err := legacyLoadDataset("knowledge", d, "")
		if err != nil {
			t.Fatalf("%s: legacy reader: %v", c.file, err)
		}
		got, err := LoadDataset("knowledge", d, "")
		if err != nil {
			t.Fatalf("%s: preset: %v", c.file, err)
		}
		scorerstest.SameJSON(t, c.file+" ("+c.format+")", got, want)
		t.Logf("%s (%s, lang %q, filter %v): %d items identical", filepath.Base(c.file), c.format, c.lang, c.filter, len(got))
	}
}

// TestPresetTakesFieldsRegister: a built-in format's rows carry their own
// register when the dataset names the column (issue 15), a bad value
// names the file, line and column, and without the field none is invented.
func TestPresetTakesFieldsRegister(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "g.jsonl")
	os.WriteFile(p, []byte(`{"sample_id": "a", "question": "q?", "A": "1", "B": "2", "C": "3", "D": "4", "answer": "B", "laras": "LOW"}`+"\n"+
		`{"sample_id": "b", "question": "r?", "A": "1", "B": "2", "C": "3", "D": "4", "answer": "C", "laras": "tinggi"}`+"\n"), 0o644)
	d := scorers.DatasetConfig{Name: "g", Path: p, Format: "global_mmlu", Limit: 1}
	items, err := LoadDataset("knowledge", d, "")
	if err != nil || items[0].Register != "" {
		t.Fatalf("without fields: %+v %v", items, err)
	}
	d.Fields = &dataset.Mapping{Register: "laras"}
	items, err = LoadDataset("knowledge", d, "")
	if err != nil || items[0].Register != "LOW" || items[0].ID != "g/a" || items[0].Gold != 1 {
		t.Fatalf("with fields.register: %+v %v", items, err)
	}
	d.Limit = 0
	if _, err := LoadDataset("knowledge", d, ""); err == nil || !strings.Contains(err.Error(), p+`:2: field laras: register must be HIGH, MID or LOW, got "tinggi"`) {
		t.Fatalf("bad register: %v", err)
	}
}
