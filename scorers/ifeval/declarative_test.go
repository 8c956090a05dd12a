package ifeval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// TestDeclaredIFDataset: instruction-following rows as IFEval has them
// (prompt, instruction_id_list, kwargs) in a file of other column names,
// JSONL with nested kwargs and CSV with the lists as JSON text, become IF
// items through fields alone; their instructions are checked at load.
func TestDeclaredIFDataset(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "arahan.jsonl"), []byte(
		`{"no": "a1", "arahan": "Tulis tanpa koma.", "ids": ["punctuation:no_comma"], "args": [{}], "laras": "HIGH"}`+"\n"+
			`{"no": "a2", "arahan": "Tulis sekurang-kurangnya 5 perkataan.", "ids": ["length_constraints:number_words"], "args": [{"relation": "at least", "num_words": 5}], "laras": "LOW"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "arahan.csv"), []byte("no,arahan,ids,args\n"+
		`b1,Jawab dalam huruf kecil.,"[""change_case:english_lowercase""]","[{}]"`+"\n"), 0o644)
	cfg := scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{
		{Name: "j", Path: "arahan.jsonl", Format: "if", Lang: "ms", Fields: scorerstest.Fields(t, `{id: "no", prompt: arahan, instruction_ids: ids, kwargs: args, register: laras}`)},
		{Name: "c", Path: "arahan.csv", Lang: "ms", Fields: scorerstest.Fields(t, `{id: "no", prompt: "{{.arahan}}", instruction_ids: ids, kwargs: args}`)},
	}}
	items := scorerstest.Load(t, Axis{}, cfg)
	if len(items) != 3 {
		t.Fatalf("%d items", len(items))
	}
	var ex itemExtra
	json.Unmarshal(items[1].Extra, &ex)
	if items[1].ID != "j/a2" || items[1].Register != "LOW" || items[1].Lang != "ms" || items[1].Source != "j" ||
		ex.Dialect != DialectIFEval || ex.InstructionIDs[0] != "length_constraints:number_words" || ex.Kwargs[0]["num_words"] != 5.0 {
		t.Errorf("item %+v extra %+v", items[1], ex)
	}
	json.Unmarshal(items[2].Extra, &ex)
	if items[2].ID != "c/b1" || items[2].Prompt != "Jawab dalam huruf kecil." || ex.InstructionIDs[0] != "change_case:english_lowercase" || len(ex.Kwargs) != 1 {
		t.Errorf("csv item %+v extra %+v", items[2], ex)
	}

	for _, c := range []struct{ name, path, fields, want string }{
		{"template reads a missing column", "arahan.csv", `{prompt: "{{.soalan}}", instruction_ids: ids, kwargs: args}`, `arahan.csv:1: fields.prompt reads column "soalan"`},
		{"missing column in a row", "arahan.jsonl", `{prompt: arahan, instruction_ids: ids, kwargs: kw}`, "arahan.jsonl:1: field kw: missing (fields.kwargs)"},
		{"unknown instruction", "arahan.csv", `{prompt: arahan, instruction_ids: "{{\"nope:x\"}}", kwargs: args}`, `arahan.csv:2: key 2: unknown instruction id "nope:x"`},
		{"kwargs not records", "arahan.jsonl", `{prompt: arahan, instruction_ids: ids, kwargs: ids}`, "arahan.jsonl:1: field ids[0]: want a record of kwargs"},
	} {
		d := scorers.DatasetConfig{Name: "x", Path: c.path, Fields: scorerstest.Fields(t, c.fields)}
		_, err := Axis{}.Load(scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{d}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestPresetTakesFieldsRegister: an IFEval preset's rows carry their own
// register when the dataset names the column (issue 15).
func TestPresetTakesFieldsRegister(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "input.jsonl"), []byte(`{"key": 1, "prompt": "a", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}], "register": "MID"}`+"\n"), 0o644)
	ds := scorers.DatasetConfig{Name: "i", Path: "input.jsonl", Format: DialectIFEval}
	items, err := Axis{}.Load(scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{ds}})
	if err != nil || items[0].Register != "" {
		t.Fatalf("without fields: %q %v", items[0].Register, err)
	}
	ds.Fields = scorerstest.Fields(t, `{register: register}`)
	items, err = Axis{}.Load(scorers.AxisConfig{BaseDir: dir, Datasets: []scorers.DatasetConfig{ds}})
	if err != nil || items[0].Register != "MID" || items[0].ID != "i/1" {
		t.Fatalf("with fields.register: %+v %v", items, err)
	}
}
