package mt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// TestPresetsMatchLegacyReaders reads the MT-Bench question files of
// testdata and of the shared data folder with the mt_bench preset and
// with the reader it replaced (legacy_test.go), reference answers joined
// the same way: the items are the same byte for byte.
func TestPresetsMatchLegacyReaders(t *testing.T) {
	for _, c := range []struct {
		dir string
		ds  scorers.DatasetConfig
	}{
		{"../../testdata/mt", scorers.DatasetConfig{Name: "mt_bench", Path: "question.jsonl", Format: FormatQuestions}},
		{"../../testdata/mt", scorers.DatasetConfig{Name: "mt_bench", Path: "question.jsonl", Format: FormatQuestions, Limit: 10, Lang: "ms"}},
		{"../../testdata/mt", scorers.DatasetConfig{Path: "question.jsonl", Format: FormatQuestions, Filter: map[string]string{"category": "math"}}},
		{"../../../shared/data/mt_bench", scorers.DatasetConfig{Name: "mt_bench", Path: "question.jsonl", Format: FormatQuestions}},
	} {
		path := filepath.Join(c.dir, c.ds.Path)
		if _, err := os.Stat(path); err != nil {
			t.Logf("skip %s: %v", path, err)
			continue
		}
		refs := map[string][]string{}
		if err := readReferences(filepath.Join(c.dir, DefaultReferenceFile), "", refs); err != nil {
			t.Fatal(err)
		}
		want, err := legacyReadQuestions(path, c.ds, refs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := New().Load(scorers.AxisConfig{BaseDir: c.dir, Datasets: []scorers.DatasetConfig{c.ds}})
		if err != nil {
			t.Fatal(err)
		}
		scorerstest.SameJSON(t, path, got, want)
		nref := 0
		for _, it := range got {
			if len(it.References) > 0 {
				nref++
			}
		}
		t.Logf("%s (limit %d, filter %v): %d items (%d with references) identical", path, c.ds.Limit, c.ds.Filter, len(got), nref)
	}
}

// TestDeclaredMTDataset: multi-turn conversations in a file of other
// column names (a turns list, an optional reference, string ids) become
// MT items through fields alone; a preset takes fields.register (issue
// 15); malformed mappings name the file, line and field.
func TestDeclaredMTDataset(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "perbualan.jsonl"), []byte(
		`{"kod": "ms-1", "jenis": "math", "giliran": ["Berapa 2+2?", "Dan 3+3?"], "rujukan": ["4", "6"], "laras": "MID"}`+"\n"+
			`{"kod": "ms-2", "jenis": "writing", "giliran": ["Tulis pantun."], "laras": "HIGH"}`+"\n"), 0o644)
	ds := scorers.DatasetConfig{Name: "ms_mt", Path: "perbualan.jsonl", Format: "mt", Lang: "ms",
		Fields: scorerstest.Fields(t, `{id: kod, category: jenis, turns: giliran, references: "rujukan?", register: laras}`)}
	items := scorerstest.Load(t, New(), scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{ds}})
	var ex extra
	json.Unmarshal(items[0].Extra, &ex)
	if len(items) != 2 || items[0].ID != "ms_mt/ms-1" || len(items[0].Turns) != 2 || items[0].References[1] != "6" || !ex.NeedsRef ||
		ex.ID != "ms-1" || ex.Category != "math" || items[0].Lang != "ms" || items[0].Register != "MID" || items[1].Register != "HIGH" || items[1].References != nil {
		t.Fatalf("items %+v extra %+v", items, ex)
	}

	for _, c := range []struct{ name, fields, want string }{
		{"missing turns column", `{id: kod, category: jenis, turns: turns}`, "perbualan.jsonl:1: field turns: missing (fields.turns)"},
		{"template reads a missing column", `{id: kod, category: "{{.kategori}}", turns: giliran}`, "perbualan.jsonl:1: field kategori: missing (read by the template of fields.category)"},
		{"reference missing in a row", `{id: kod, category: "{{\"math\"}}", turns: giliran, references: rujukan}`, "perbualan.jsonl:2: field rujukan: missing (fields.references)"},
	} {
		d := ds
		d.Fields = scorerstest.Fields(t, c.fields)
		_, err := New().Load(scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{d}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}

	mt := scorers.DatasetConfig{Name: "mt_bench", Path: "question.jsonl", Format: FormatQuestions, Limit: 2, Fields: scorerstest.Fields(t, `{register: "{{\"HIGH\"}}"}`)}
	items, err := New().Load(scorers.AxisConfig{BaseDir: "../../testdata/mt", Datasets: []scorers.DatasetConfig{mt}})
	if err != nil || items[0].Register != "HIGH" || items[0].ID != "mt_bench/81" {
		t.Fatalf("mt_bench with fields.register: %+v %v", items, err)
	}
}
