package runfiles

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

func TestJSONLErrorsNameFileLineAndField(t *testing.T) {
	type row struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
	}
	for _, c := range []struct{ name, data, want string }{
		{"type", "{\"id\":\"a\",\"score\":1}\n\n{\"id\":\"b\",\"score\":\"x\"}\n", "f.jsonl:3: field score: want float64, got string"},
		{"syntax", "{\"id\":\"a\"\n", "f.jsonl:1: "},
		{"two values", "{\"id\":\"a\"} {\"id\":\"b\"}\n", "f.jsonl:1: more than one JSON value on the line"},
	} {
		_, err := DecodeJSONL[row]("f.jsonl", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	err := ScanStrictJSONL(strings.NewReader("{\"id\":\"a\",\"extra\":1}\n"), "f.jsonl", func(int, row) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `f.jsonl:1: unknown field "extra"`) {
		t.Errorf("strict: %v", err)
	}
	rows := []row{{"a", 1}, {"<b>", 0.5}}
	data, err := EncodeJSONL(rows)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeJSONL[row]("f.jsonl", data)
	if err != nil || len(back) != 2 || back[1] != rows[1] || !strings.Contains(string(data), "<b>") {
		t.Errorf("round trip %q: %v %v", data, back, err)
	}
}

func TestFolderScores(t *testing.T) {
	files := fstest.MapFS{
		"result.json":      {Data: []byte(`{"run_id":"r","model_id":"m","axes":{"nlu":{"score":0.5}}}`)},
		"nlu/scores.jsonl": {Data: []byte("{\"item_id\":\"a\",\"score\":1}\n{\"item_id\":\"b\",\"score\":0}\n")},
	}
	f := FS(files, "runs/r")
	res, err := f.Result()
	if err != nil || res.ModelID != "m" || *res.Axes["nlu"].Score != 0.5 {
		t.Fatalf("result %+v %v", res, err)
	}
	s, err := f.Scores("nlu")
	if err != nil || len(s) != 2 || s[0].Score != 1 {
		t.Fatalf("scores %v %v", s, err)
	}
	if _, err := f.Scores("mt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing axis: %v", err)
	}
	for data, want := range map[string]string{
		"{\"item_id\":\"a\"}\n": "runs/r/nlu/scores.jsonl:1: field score is missing",
		"{\"item_id\":\"a\",\"score\":1}\n{\"item_id\":\"a\",\"score\":0}\n": `runs/r/nlu/scores.jsonl:2: item "a" scored twice`,
		"{\"score\":1}\n": "runs/r/nlu/scores.jsonl:1: field item_id is missing",
	} {
		files["nlu/scores.jsonl"] = &fstest.MapFile{Data: []byte(data)}
		if _, err := f.Scores("nlu"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", data, err, want)
		}
	}
}

func TestFolderInStoreAndOnDiskAgree(t *testing.T) {
	dir := t.TempDir()
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data, _ := EncodeJSONL([]scorers.ItemScore{{ItemID: "x", Score: 0.25}})
	if err := st.Put(ctx, ScoresKey("r1", "if"), data); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, ResultKey("r1"), []byte(`{"run_id":"r1","axes":{}}`)); err != nil {
		t.Fatal(err)
	}
	for part, rows := range [][]scorers.Prediction{{{ItemID: "a", Error: "old"}}, {{ItemID: "a", Error: "new"}, {ItemID: "b", Error: "B"}}} {
		data, _ := EncodeJSONL(rows)
		if err := st.Put(ctx, PredKey("r1", "mt", part%2, part), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Put(ctx, ShardPrefix("r1", "mt", 0)+"rated-00000.jsonl", []byte(`{"item_id":"a","error":"rated"}`+"\n")); err != nil {
		t.Fatal(err)
	}
	disk, err := Dir(filepath.Join(dir, "runs", "r1"))
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	for _, f := range []*Folder{InStore(ctx, st, "r1"), disk} {
		s, err := f.Scores("if")
		if err != nil || len(s) != 1 || s[0].Score != 0.25 {
			t.Errorf("%s: %v %v", f.Where(), s, err)
		}
		if _, err := f.Scores("nlu"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: missing axis: %v", f.Where(), err)
		}
		// Checkpoints are read in key order (a later part wins); ratings are not predictions.
		preds, err := f.Predictions("mt")
		if err != nil || len(preds) != 2 || preds["a"].Error != "new" || preds["b"].Error != "B" {
			t.Errorf("%s: Predictions = %v, %v", f.Where(), preds, err)
		}
	}
	runs, err := FindRuns(dir)
	if err != nil || len(runs) != 1 || filepath.Base(runs[0]) != "r1" {
		t.Errorf("FindRuns: %v %v", runs, err)
	}
}

func TestDirRefusesALinkOutOfTheFolder(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(outside, []byte(`{}`), 0o644)
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "result.json")); err != nil {
		t.Skip(err)
	}
	f, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Result(); err == nil {
		t.Error("read result.json through a link out of the folder")
	}
}

// TestCheckRunID: a run id stays one folder of the store; the ids that
// `run` makes of model ids and that Schedules make of their workflow ids pass.
func TestCheckRunID(t *testing.T) {
	for _, id := range []string{"a/b", "..", "../x", "a..b", "/abs", ".hidden", "-flag", "_x", "", "a b", "nul\x00", `a\b`,
		"é", strings.Repeat("a", MaxRunIDLen+1)} {
		err := CheckRunID(id)
		if err == nil {
			t.Errorf("run id %q accepted", id)
			continue
		}
		if !strings.Contains(err.Error(), "a run id is 1 to 128 of") {
			t.Errorf("run id %q: %v: the sentence does not state the alphabet", id, err)
		}
	}
	for _, id := range []string{"demo", "crash", "tiny-llama-20261204T190000", "evalrun-nightly-2026-12-04T02:00:00Z", "Qwen_Qwen2.5-7B", strings.Repeat("a", MaxRunIDLen)} {
		if err := CheckRunID(id); err != nil {
			t.Errorf("run id %q refused: %v", id, err)
		}
	}
	for text, want := range map[string]string{
		"tiny-llama": "tiny-llama-T", "Qwen/Qwen2.5-7B": "Qwen_Qwen2.5-7B-T", "../../model": "model-T", "@org/m": "org_m-T", "a..b": "a.b-T", "": "run-T", "///": "run-T",
	} {
		got := RunIDFrom(text, "-T")
		if got != want || CheckRunID(got) != nil {
			t.Errorf("RunIDFrom(%q) = %q (%v), want %q", text, got, CheckRunID(got), want)
		}
	}
	if got := RunIDFrom(strings.Repeat("x", 500), "-20261204T190000"); CheckRunID(got) != nil || !strings.HasSuffix(got, "-20261204T190000") {
		t.Errorf("a long model id gives run id %q: %v", got, CheckRunID(got))
	}
}

// TestPredictionsOfTheAxisGeneration: an axis started over on a new model
// (a model-change record naming it) is read from its generation's
// checkpoints only, the earlier model's answers left out; an axis not
// started over is read from generation 0 alone.
func TestPredictionsOfTheAxisGeneration(t *testing.T) {
	files := fstest.MapFS{
		"knowledge/shards/0000/pred-00000.jsonl":    {Data: []byte(`{"item_id":"a","text":"old a"}` + "\n" + `{"item_id":"b","text":"old b"}` + "\n")},
		"knowledge/shards/0000/pred-g1-00000.jsonl": {Data: []byte(`{"item_id":"a","text":"new a"}` + "\n")},
		"nlu/shards/0000/pred-00000.jsonl":          {Data: []byte(`{"item_id":"c","text":"kept c"}` + "\n")},
	}
	read := func(axis string) map[string]string {
		t.Helper()
		out := map[string]string{}
		err := FS(files, "run").EachPrediction(axis, func(id string, raw json.RawMessage) error {
			var p struct{ Text string }
			json.Unmarshal(raw, &p)
			out[id] = p.Text
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read("knowledge"); len(got) != 2 || got["a"] != "old a" || got["b"] != "old b" {
		t.Errorf("no model change: %v, want generation 0 alone", got)
	}
	files[ModelChangeName+"0001.json"] = &fstest.MapFile{Data: []byte(`{"n":1,"started_over":["knowledge"],"kept":["nlu"]}`)}
	if got := read("knowledge"); len(got) != 1 || got["a"] != "new a" {
		t.Errorf("started over: %v, want the new model's answers alone", got)
	}
	if got := read("nlu"); len(got) != 1 || got["c"] != "kept c" {
		t.Errorf("kept axis: %v", got)
	}
	// A run in a store reads its generations alike.
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range files {
		st.Put(context.Background(), RunPrefix("r")+name, f.Data)
	}
	for axis, want := range map[string]int{"knowledge": 1, "nlu": 0} {
		if gen, err := InStore(context.Background(), st, "r").Generation(axis); err != nil || gen != want {
			t.Errorf("%s in a store: generation %d, %v; want %d", axis, gen, err, want)
		}
	}
}
