package audit

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var testCols = Columns{Label: "y", Source: "src", Measurements: []string{"a", "b"}}

func TestReadCSV(t *testing.T) {
	in := "\ufeffy,src,a,b,extra\nyes,s1,1.5,2,x\n0,s2,-3,4e-1,\nTRUE,s1,0,0,z\n"
	rows, err := ReadCSV(strings.NewReader(in), "t.csv", testCols)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || !rows[0].Label || rows[1].Label || !rows[2].Label || rows[1].Source != "s2" || rows[1].Measurements[1] != 0.4 {
		t.Errorf("rows %+v", rows)
	}
}

func TestReadErrorsNameFileLineColumn(t *testing.T) {
	cases := []struct{ in, want string }{
		{"y,src,a\n1,s,2\n", `t.csv:1: no column "b"`},
		{"y,src,a,b\n1,s,2,3\n1,s,abc,3\n", `t.csv:3: column "a": "abc" is not a number`},
		{"y,src,a,b\n1,s,2,NaN\n", `t.csv:2: column "b": "NaN" is not a finite number`},
		{"y,src,a,b\nmaybe,s,2,3\n", `t.csv:2: column "y": "maybe" is not a yes/no label`},
		{"y,src,a,b\n1,,2,3\n", `t.csv:2: column "src": empty source tag`},
		{"y,src,a,b\n1,s,,3\n", `t.csv:2: column "a": empty`},
		{"y,src,a,b\n", "t.csv: no data rows"},
		{"", "t.csv: empty file"},
	}
	for _, c := range cases {
		_, err := ReadCSV(strings.NewReader(c.in), "t.csv", testCols)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	jcases := []struct{ in, want string }{
		{`{"y":true,"src":"s","a":1}`, `t.jsonl:1: column "b": missing`},
		{"{\"y\":true,\"src\":\"s\",\"a\":1,\"b\":2}\n\n{\"y\":2,\"src\":\"s\",\"a\":1,\"b\":2}", `t.jsonl:3: column "y": "2" is not a yes/no label`},
		{`{"y":true,"src":"s","a":"x","b":2}`, `t.jsonl:1: column "a": "x" is not a number`},
		{`{"y":true,"src":"s","a":null,"b":2}`, `t.jsonl:1: column "a": null`},
		{`{"y":true,"src":["s"],"a":1,"b":2}`, `t.jsonl:1: column "src": an array is not a source tag`},
		{`[1,2]`, `t.jsonl:1:`},
		{`{"y":true`, `t.jsonl:1:`},
	}
	for _, c := range jcases {
		_, err := ReadJSONL(strings.NewReader(c.in), "t.jsonl", testCols)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestReadJSONL(t *testing.T) {
	in := `{"y":true,"src":"s1","a":1,"b":"2.5"}
{"y":"no","src":7,"a":false,"b":-1}
{"y":0,"src":"s1","a":true,"b":0}
`
	rows, err := ReadJSONL(strings.NewReader(in), "t.jsonl", testCols)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1].Source != "7" || rows[0].Measurements[1] != 2.5 || rows[2].Measurements[0] != 1 || rows[2].Label {
		t.Errorf("rows %+v", rows)
	}
}

func TestReadFileGzipAndFormat(t *testing.T) {
	rows, err := ReadFile("../../../testdata/audit/mmlu_audit.csv.gz", Columns{"gold_is_a", "subject", []string{"question_tokens"}})
	if err != nil || len(rows) != 14042 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	p := filepath.Join(t.TempDir(), "x.txt")
	os.WriteFile(p, []byte("y"), 0o644)
	if _, err := ReadFile(p, testCols); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("unknown format: %v", err)
	}
}

func checkRows(t *testing.T, rows []Row, err error) {
	if err != nil {
		return
	}
	if len(rows) == 0 {
		t.Fatal("no rows and no error")
	}
	for _, r := range rows {
		if len(r.Measurements) != 2 || r.Source == "" {
			t.Fatalf("bad row %+v", r)
		}
		for _, v := range r.Measurements {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite measurement in %+v", r)
			}
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	f.Add("y,src,a,b\n1,s,2,3\n0,t,4,5\n")
	f.Add("y,src,a,b\n\"1\",\"s,x\",2,3\n")
	f.Add("y,src,a,b\nyes,s,1e308,-0\n")
	f.Add("a,b\n1,2\n")
	f.Add("y,src,a,b\n1,s,2\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadCSV(strings.NewReader(in), "f.csv", testCols)
		checkRows(t, rows, err)
		if err == nil {
			runAndMarshal(t, rows)
		}
	})
}

func FuzzReadJSONL(f *testing.F) {
	f.Add(`{"y":true,"src":"s","a":1,"b":2}` + "\n" + `{"y":0,"src":"t","a":"3","b":false}`)
	f.Add(`{"y":"yes","src":5,"a":1e400,"b":2}`)
	f.Add(`{"y":null}`)
	f.Add("[]\n{}")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ReadJSONL(strings.NewReader(in), "f.jsonl", testCols)
		checkRows(t, rows, err)
		if err == nil {
			runAndMarshal(t, rows)
		}
	})
}

func TestPlot(t *testing.T) {
	rows := synth(400, []float64{0.9, 0.3}, 1, 8)
	for _, det := range []string{DetectorMeanHalf, DetectorEach} {
		o := quick()
		o.Detector = det
		rep, err := Run(rows, []string{"a", "b"}, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".png", ".svg"} {
			p := filepath.Join(t.TempDir(), "audit"+ext)
			if err := rep.Plot(p); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
				t.Errorf("%s: %v %v", p, st, err)
			}
		}
	}
	if err := (Report{Skip: "not pooled"}).Plot(filepath.Join(t.TempDir(), "x.png")); err == nil {
		t.Error("skipped report: want an error")
	}
	if err := (Report{}).Plot("x.gif"); err == nil {
		t.Error("gif: want an error")
	}
}

// runAndMarshal audits fuzzed rows: no panic, and a report always encodes
// (no NaN or Inf reaches the JSON).
func runAndMarshal(t *testing.T, rows []Row) {
	for _, det := range []string{DetectorMeanHalf, DetectorLogReg} {
		rep, err := Run(rows, testCols.Measurements, Options{Detector: det, Folds: 2, Shuffles: 5, Bootstrap: 5, FingerprintTrees: 2, Trees: 3})
		if err != nil {
			continue
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Fatalf("%s: report does not encode: %v", det, err)
		}
		_ = rep.Line()
	}
}

func TestSplitNames(t *testing.T) {
	if got := SplitNames(" a, b,,c ,"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("SplitNames = %q", got)
	}
}
