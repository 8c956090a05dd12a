package safety

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// TestPresetsMatchLegacyReaders reads every safeguard file of testdata and
// of the shared data folder with the presets and with the reader they
// replaced (legacy_test.go), filters and limits included: the items are
// the same byte for byte.
func TestPresetsMatchLegacyReaders(t *testing.T) {
	var files []string
	for _, g := range []string{"../../testdata/safety/*.jsonl", "../../../shared/data/safety_seahelm_safeguard/*.jsonl"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("found %v", files)
	}
	for _, f := range files {
		format := FormatSafeguard
		if strings.Contains(f, "cultural") {
			format = FormatSafeguardCultural
		}
		for _, d := range []scorers.DatasetConfig{
			{Name: "s", Path: f, Format: format},
			{Path: f, Format: format, Lang: "ms", Limit: 7},
			{Name: "s", Path: f, Format: format, Filter: map[string]string{"label": "Harmful"}},
			{Name: "s", Path: f, Format: format, Filter: map[string]string{"topic": "aegis2"}},
		} {
			want, werr := legacyReadSafeguard(f, d)
			got, gerr := New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{d}})
			if werr != nil || gerr != nil {
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s %v: legacy %v, preset %v", f, d.Filter, werr, gerr)
				}
				continue // both find no prompts
			}
			scorerstest.SameJSON(t, f, got, want)
			t.Logf("%s (lang %q, limit %d, filter %v): %d items identical", filepath.Base(f), d.Lang, d.Limit, d.Filter, len(got))
		}
	}
}

// TestPresetTakesFieldsRegister: a safeguard preset's rows carry their own
// register when the dataset names the column (issue 15); other filters
// than the preset's are refused with the file and line.
func TestPresetTakesFieldsRegister(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	os.WriteFile(p, []byte(`{"prompt_label": "Harmful", "prompts": [{"prompt_text": "x"}], "metadata": {"topic": "aegis2", "register": "LOW"}}`+"\n"), 0o644)
	d := scorers.DatasetConfig{Name: "s", Path: p, Format: FormatSafeguard, Fields: scorerstest.Fields(t, `{register: metadata.register}`)}
	items, err := New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{d}})
	if err != nil || items[0].Register != "LOW" || items[0].Source != "aegis2" || items[0].Label != "Harmful" {
		t.Fatalf("%+v %v", items, err)
	}
	d.Fields, d.Filter = nil, map[string]string{"kategori": "x"}
	if _, err := New().Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{d}}); err == nil || !strings.Contains(err.Error(), p+":1: filter.kategori: the seahelm_safeguard format filters on label or topic only") {
		t.Fatalf("unknown filter: %v", err)
	}
}
