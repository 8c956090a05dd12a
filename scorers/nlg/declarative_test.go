package nlg

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// TestDeclaredNLGDataset: a CSV of source sentences and references
// becomes NLG items through fields alone, with the prompt a template, the
// register per row and the direction from the dataset's lang.
func TestDeclaredNLGDataset(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pairs.csv"), []byte("no,en,ms,laras\n7,Good morning.,Selamat pagi.,MID\n9,Thank you.,Terima kasih.,LOW\n"), 0o644)
	ds := scorers.DatasetConfig{Name: "pairs", Path: "pairs.csv", Format: "nlg", Lang: "en-ms", Fields: scorerstest.Fields(t,
		`{id: "no", prompt: "Terjemahkan ke Bahasa Melayu:\n{{.en}}\nTerjemahan:", text: en, references: ms, answer_tag: "{{\"Terjemahan:\"}}", register: laras}`)}
	items := scorerstest.Load(t, NewAxis(), scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{ds}})
	if len(items) != 2 {
		t.Fatalf("%d items", len(items))
	}
	it := items[1]
	var ex extra
	json.Unmarshal(it.Extra, &ex)
	if it.ID != "pairs/9" || it.TaskID != "pairs/9" || it.Prompt != "Terjemahkan ke Bahasa Melayu:\nThank you.\nTerjemahan:" ||
		it.References[0] != "Terima kasih." || it.Register != "LOW" || it.Lang != "ms" || it.Source != "pairs" ||
		ex.Direction != "en-ms" || ex.SrcLang != "en" || ex.TgtLang != "ms" || ex.AnswerTag != "Terjemahan:" || ex.Source != "Thank you." || ex.MaxTokens != defaultMaxTokens {
		t.Errorf("item %+v extra %+v", it, ex)
	}

	for _, c := range []struct{ name, fields, want string }{
		{"template reads a missing column", `{prompt: "{{.english}}", references: ms}`, "pairs.csv:1: fields.prompt reads column \"english\""},
		{"missing reference column", `{prompt: "{{.en}}", references: melayu}`, "pairs.csv:1: fields.references reads column \"melayu\""},
		{"bad register", `{prompt: "{{.en}}", references: ms, register: en}`, "pairs.csv:2: field en: register must be HIGH, MID or LOW"},
	} {
		d := ds
		d.Fields = scorerstest.Fields(t, c.fields)
		_, err := NewAxis().Load(scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{d}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestPresetTakesFieldsRegister: a preset's rows carry their own register
// when the dataset names the column (issue 15), and only then.
func TestPresetTakesFieldsRegister(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(`{"pair_id": 1, "eng_Latn": "a", "zsm_Latn": "b", "reg": "HIGH"}`+"\n"), 0o644)
	ds := scorers.DatasetConfig{Name: "p", Path: "p.jsonl", Format: FormatPassages}
	items, err := NewAxis().Load(scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{ds}})
	if err != nil || items[0].Register != "" {
		t.Fatalf("without fields: register %q, %v", items[0].Register, err)
	}
	ds.Fields = scorerstest.Fields(t, `{register: reg}`)
	items, err = NewAxis().Load(scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{ds}})
	if err != nil || len(items) != 2 || items[0].Register != "HIGH" || items[1].Register != "HIGH" || items[0].ID != "p/en-ms/1" {
		t.Fatalf("with fields.register: %+v, %v", items, err)
	}
}
