package inputs

import (
	"strings"
	"testing"
)

func TestReadItemScores(t *testing.T) {
	in := `{"axis":"nlu","item_id":"nlu/0","score":1}` + "\n\n" +
		` {"axis":"nlu","item_id":"nlu/1","score":0.25} ` + "\n" +
		`{"axis":"mt","item_id":"nlu/0","score":0}` + "\n"
	got, err := ReadItemScores("a.jsonl", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got["nlu"]) != 2 || got["nlu"]["nlu/1"] != 0.25 || len(got["mt"]) != 1 || got["mt"]["nlu/0"] != 0 {
		t.Errorf("got %v", got)
	}
}

func TestReadItemScoresErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"string score", `{"axis":"nlu","item_id":"nlu/0","score":"x"}`, "b.jsonl:1: field score: want float64"},
		{"unknown field", `{"axis":"nlu","item":"nlu/0","score":1}`, `b.jsonl:1: unknown field "item"`},
		{"missing axis", `{"item_id":"nlu/0","score":1}`, "b.jsonl:1: field axis is missing"},
		{"empty item_id", `{"axis":"nlu","item_id":"","score":1}`, "b.jsonl:1: field item_id is missing or empty"},
		{"missing score", "\n" + `{"axis":"nlu","item_id":"nlu/0"}`, "b.jsonl:2: field score is missing"},
		{"duplicate", `{"axis":"nlu","item_id":"nlu/0","score":1}` + "\n" + `{"axis":"nlu","item_id":"nlu/0","score":0}`, `b.jsonl:2: item "nlu/0" of axis "nlu" scored twice`},
		{"truncated", `{"axis":"nlu",`, "b.jsonl:1:"},
		{"two values", `{"axis":"nlu","item_id":"a","score":1} {}`, "b.jsonl:1: more than one JSON value"},
		{"empty", "", "b.jsonl: no scored items"},
	} {
		_, err := ReadItemScores("b.jsonl", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func FuzzReadItemScores(f *testing.F) {
	for _, s := range []string{
		`{"axis":"nlu","item_id":"nlu/0","score":1}` + "\n" + `{"axis":"nlu","item_id":"nlu/1","score":0}` + "\n",
		`{"axis":"nlu","item_id":"a","score":null}`,
		"\n\n{\"axis\":\"x\",\"item_id\":\"a\",\"score\":1e308}\n",
		`{"axis":"nlu","item_id":"a","score":1} {}`,
		`[1,2]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scores, err := ReadItemScores("f.jsonl", strings.NewReader(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.jsonl") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for ax, items := range scores {
			if ax == "" || len(items) == 0 {
				t.Errorf("bad axis %q with %d items", ax, len(items))
			}
		}
	})
}
