package inputs

import (
	"strings"
	"testing"
)

func TestReadScoresCSV(t *testing.T) {
	scores, err := ReadScoresCSV("s.csv", strings.NewReader("model_id,score\n m1 , 0.5\n\n\"m,2\",-3e1\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ModelScore{"m1": {Score: 0.5, Line: 2}, "m,2": {Score: -30, Line: 4}}
	if len(scores) != len(want) || scores["m1"] != want["m1"] || scores["m,2"] != want["m,2"] {
		t.Errorf("got %+v, want %+v", scores, want)
	}
}

func TestReadScoresCSVErrors(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"not a number", "a,1\nb,x\n", "ext.csv:2: field score"},
		{"three fields", "a,1\nb,2,3\n", "ext.csv:2: want 2 fields"},
		{"duplicate", "a,1\na,2\n", `ext.csv:2: model_id "a" already given on line 1`},
		{"empty id", "a,1\n,2\n", "ext.csv:2: field model_id is empty"},
		{"nan", "a,1\nb,NaN\n", "ext.csv:2: field score"},
		{"infinity", "a,1\nb,-Inf\n", `ext.csv:2: field score: "-Inf" is not a finite number`},
		{"bad quote", "a,1\n\"b,2\n", "ext.csv:2:"},
		{"header only", "model_id,score\n", "ext.csv: no model_id,score rows"},
		{"empty", "", "no model_id,score rows"},
	} {
		_, err := ReadScoresCSV("ext.csv", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

func FuzzReadScoresCSV(f *testing.F) {
	for _, s := range []string{
		"model_id,score\nm1,0.5\nm2,0.7\n",
		"m1,1\nm2,2\n",
		"\"m,1\",3\n",
		"a,1\nb,2,3\n",
		"a,1\n\"b,2\n",
		"a,NaN\n",
		"a, 1e308\nb,-0\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		scores, err := ReadScoresCSV("f.csv", strings.NewReader(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for id, v := range scores {
			if id == "" || v.Line < 1 || v.Score != v.Score {
				t.Errorf("bad row %q %+v", id, v)
			}
		}
	})
}
