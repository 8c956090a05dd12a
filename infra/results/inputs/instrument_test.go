package inputs

import (
	"strings"
	"testing"
)

const seahelmJSON = `{"instrument": "seahelm", "item_ids": ["belebele/1"],
 "item_hashes": ["ABCDEF"],
 "scores": [
  {"model_id": "m1", "score": 0.81, "item_ids": ["belebele/2"]},
  {"model_id": "m2", "score": 74}
 ]}`

func TestReadInstrumentShapes(t *testing.T) {
	in, err := ReadInstrument("s.json", []byte(seahelmJSON))
	if err != nil {
		t.Fatal(err)
	}
	if in.Title() != "seahelm" || in.Scores["m1"] != (ModelScore{Score: 0.81, Line: 4}) || in.Scores["m2"] != (ModelScore{Score: 74, Line: 5}) {
		t.Errorf("object with scores: %+v", in)
	}
	wantItems := map[string]string{HashItemID("belebele/1"): "belebele/1", HashItemID("belebele/2"): "belebele/2", "abcdef": ""}
	if !in.ListsItems || len(in.Items) != len(wantItems) {
		t.Errorf("items %v, want %v", in.Items, wantItems)
	}
	for h, id := range wantItems {
		if got, ok := in.Items[h]; !ok || got != id {
			t.Errorf("item %s: %q, %v; want %q", h, got, ok, id)
		}
	}

	in, err = ReadInstrument("l.json", []byte("[{\"model_id\":\"m1\",\"score\":1},\n {\"model_id\":\"m2\",\"score\":2}]"))
	if err != nil {
		t.Fatal(err)
	}
	if in.Title() != "l.json" || len(in.Scores) != 2 || in.Scores["m2"] != (ModelScore{Score: 2, Line: 2}) || in.ListsItems {
		t.Errorf("list: %+v", in)
	}

	in, err = ReadInstrument("m.json", []byte("{\"m1\": 0.5,\n\"m2\": -1e3}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Scores) != 2 || in.Scores["m2"] != (ModelScore{Score: -1000, Line: 2}) || in.ListsItems {
		t.Errorf("map: %+v", in)
	}

	// An empty list of items still lists them: the instrument scored none.
	in, err = ReadInstrument("e.json", []byte(`{"item_ids": [], "scores": [{"model_id":"m1","score":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !in.ListsItems || len(in.Items) != 0 {
		t.Errorf("empty item_ids: %+v", in)
	}
}

func TestHashItemID(t *testing.T) {
	// echo -n belebele/1 | sha256sum
	if got, want := HashItemID("belebele/1"), "07c9449aeb5255b6e7374806783d41ab9151688f1619dd338af4aab4c082d5a0"; got != want {
		t.Errorf("HashItemID = %q, want %q", got, want)
	}
}

func TestReadInstrumentErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"syntax", "{\"m1\": 1,\n \"m2\": }", "ext.json:2: invalid JSON"},
		{"string score in map", `{"m1": "1"}`, `ext.json:1: field "m1": score "1" is not a finite number`},
		{"map after instrument", "{\"instrument\": \"x\",\n\"m1\": 1}", `ext.json:2: unknown field "m1"`},
		{"scores not a list", `{"scores": {"m1": 1}}`, "ext.json:1: field scores: want a list"},
		{"instrument not a string", `{"instrument": 3, "scores": []}`, "ext.json:1: field instrument:"},
		{"missing score", "[{\"model_id\":\"m1\",\"score\":1},\n {\"model_id\":\"m2\"}]", "ext.json:2: scores[1] (m2): field score is missing"},
		{"missing model_id", "[\n{\"score\":1}]", "ext.json:2: scores[0]: field model_id is missing"},
		{"wrong type", "{\"scores\": [\n{\"model_id\": \"m1\", \"score\": \"high\"}]}", "ext.json:2: scores[0].score: want float64"},
		{"unknown field", `[{"model_id":"m1","score":1,"rank":3}]`, `unknown field "rank"`},
		{"duplicate", "[{\"model_id\":\"m1\",\"score\":1},\n{\"model_id\":\"m1\",\"score\":2}]", `ext.json:2: model_id "m1" already given on line 1`},
		{"no scores field", `{"instrument": "x"}`, `no field "scores"`},
		{"scalar", `3`, "ext.json:1: want a JSON object or list"},
		{"trailing", `{"m1": 1} {}`, "unexpected data after the scores"},
		{"empty list", `[]`, "ext.json: no scores"},
		{"truncated", `[{"model_id":"m1",`, "unexpected end of JSON"},
	} {
		_, err := ReadInstrument("ext.json", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func FuzzReadInstrument(f *testing.F) {
	for _, s := range []string{
		seahelmJSON,
		`{"m1": 1, "m2": 2.5}`,
		`[{"model_id":"m1","score":1,"item_hashes":["ab"]}]`,
		`{"scores": [{"model_id": "m1", "score": "x"}]}`,
		`{"instrument": 3}`,
		`[{"model_id":"m1","score":1e999}]`,
		`{"m1": 1, "instrument": "x"}`,
		`[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ReadInstrument("f.json", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if len(in.Scores) == 0 {
			t.Error("no error and no scores")
		}
	})
}
