package inputs

import (
	"strings"
	"testing"
)

func TestReadAnchorsForms(t *testing.T) {
	set, err := ReadAnchors("a.csv", strings.NewReader("x/1,easy,0.8-1.0\nx/2, Medium ,50-80%\n\nx/3,hard\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Anchors) != 3 || set.Bands["easy"] != (Band{0.8, 1}) || set.Bands["medium"] != (Band{0.5, 0.8}) {
		t.Errorf("got %+v", set)
	}
	// A worksheet: columns by header name, unfilled rows counted and skipped.
	set, err = ReadAnchors("w.csv", strings.NewReader("axis,item_id,reasons,expected_difficulty\nk,x/1,wrong,hard\nk,x/2,wrong,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Anchors) != 1 || set.Anchors[0].Difficulty != "hard" || set.Blank != 1 || set.Anchors[0].Line != 2 {
		t.Errorf("worksheet: %+v", set)
	}
}

func TestReadAnchorsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"x/1,trivial\n", "a.csv:1: field expected_difficulty"},
		{"x/1,easy\nx/1,hard\n", "a.csv:2: field item_id: \"x/1\" already anchored on line 1"},
		{"x/1,easy,0.9-0.8\n", "a.csv:1: field expected_accuracy"},
		{"x/1,easy,high\n", "a.csv:1: field expected_accuracy"},
		{"x/1,easy,0.8-1\nx/2,easy,0.7-1\n", "a.csv:2: field expected_accuracy: easy band"},
		{",easy\n", "a.csv:1: field item_id is empty"},
		{"item_id,difficulty\nx,easy\n", "a.csv:1: header: no expected_difficulty column"},
		{"x/1,\"easy\n", "a.csv:1:"},
		{"", "a.csv: no anchor"},
		{"x,120-130%,easy\n", "a.csv:1: field expected_difficulty"},
		{"x,easy,120-130%\n", "a.csv:1: field expected_accuracy"},
	} {
		_, err := ReadAnchors("a.csv", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzReadAnchors(f *testing.F) {
	for _, s := range []string{
		"x/1,easy,0.8-1.0\nx/2,medium\n",
		"axis,item_id,expected_difficulty,expected_accuracy\nk,x,hard,10-20%\n",
		"\ufeffitem_id,expected_difficulty\n\"a,b\",easy\n",
		"x,easy,–\n", "x,easy,0.5-\n", "x,\"easy\n", ",,,\n", "item_id\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		set, err := ReadAnchors("f.csv", strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, a := range set.Anchors {
			if a.ItemID == "" || (a.Difficulty != "easy" && a.Difficulty != "medium" && a.Difficulty != "hard") {
				t.Fatalf("accepted bad anchor %+v", a)
			}
			if a.Band != nil && !(a.Band.Lo >= 0 && a.Band.Lo <= a.Band.Hi && a.Band.Hi <= 1) {
				t.Fatalf("accepted bad band %+v", a.Band)
			}
			if a.Band != nil && set.Bands[a.Difficulty] != *a.Band {
				t.Fatalf("anchor band %v differs from the %s band %v", *a.Band, a.Difficulty, set.Bands[a.Difficulty])
			}
		}
	})
}
