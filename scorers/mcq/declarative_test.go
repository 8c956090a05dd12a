package mcq

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

const malayMMLUFields = `
id: id
question: question
choices: [A, B, C, D, E]
answer: key
answer_as: letter
source: subject
`

// TestMalayMMLUShapedCSV declares a MalayMMLU-shaped CSV in fields alone:
// ids, subjects as pooling sources, four- and five-option questions, the
// letter key, and few-shot examples from a second file.
func TestMalayMMLUShapedCSV(t *testing.T) {
	d := scorers.DatasetConfig{Name: "malaymmlu", Path: "../../testdata/suites/data/malaymmlu_sample.csv", Format: "mcq", Lang: "ms", Fields: scorerstest.Fields(t, malayMMLUFields)}
	items, err := LoadDataset("knowledge", d, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 12 {
		t.Fatalf("%d items, want 12", len(items))
	}
	it := items[1]
	if it.ID != "malaymmlu/2" || it.Source != "Sejarah" || len(it.Choices) != 5 || it.Gold != 0 || it.Label != "A" || it.Line != 3 || it.Lang != "ms" {
		t.Fatalf("item 2: %+v", it)
	}
	if len(items[0].Choices) != 4 || !strings.Contains(questionOf(items[0]), `"bagai aur dengan tebing"`) {
		t.Fatalf("item 1: %+v", items[0])
	}
	want := "Soalan: Bilakah Persekutuan Tanah Melayu mencapai kemerdekaan?\nA. 1957\nB. 1963\nC. 1945\nD. 1948\nE. 1965\nJawapan:"
	if it.Prompt != want {
		t.Fatalf("prompt\n%q\nwant\n%q", it.Prompt, want)
	}
	d.Fewshot = &scorers.FewshotConfig{Path: "../../testdata/suites/data/malaymmlu_fewshot.csv", N: 2}
	shot, err := LoadDataset("knowledge", d, "")
	if err != nil {
		t.Fatal(err)
	}
	prefix := "Soalan: Apakah ibu negara Malaysia?\nA. Johor Bahru\nB. Kuala Lumpur\nC. Ipoh\nD. Melaka\nJawapan: B\n\n" +
		"Soalan: Berapakah bilangan kaki labah-labah?\nA. Enam\nB. Lapan\nC. Sepuluh\nD. Empat\nJawapan: B\n\n"
	if shot[1].Prompt != prefix+want {
		t.Fatalf("few-shot prompt\n%q", shot[1].Prompt)
	}
	d.Fewshot.N = 3
	if _, err := LoadDataset("knowledge", d, ""); err == nil || !strings.Contains(err.Error(), "2 examples, fewshot.n asks for 3") {
		t.Fatalf("too few examples: %v", err)
	}
}

// TestSourcesGiveTheSameItems writes one dataset as TSV, gzip and zstd
// JSONL, a JSON array and Parquet: each reads to the CSV's items.
func TestSourcesGiveTheSameItems(t *testing.T) {
	dir := t.TempDir()
	base := scorers.DatasetConfig{Name: "m", Format: "mcq", Lang: "ms", Fields: scorerstest.Fields(t, malayMMLUFields)}
	base.Path = "../../testdata/suites/data/malaymmlu_sample.csv"
	want, err := LoadDataset("knowledge", base, "")
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		ID       string `parquet:"id" json:"id"`
		Subject  string `parquet:"subject" json:"subject"`
		Question string `parquet:"question" json:"question"`
		A        string `parquet:"A" json:"A"`
		B        string `parquet:"B" json:"B"`
		C        string `parquet:"C" json:"C"`
		D        string `parquet:"D" json:"D"`
		E        string `parquet:"E" json:"E"`
		Key      string `parquet:"key" json:"key"`
	}
	var recs []rec
	for _, it := range want {
		r := rec{ID: strings.TrimPrefix(it.ID, "m/"), Subject: it.Source, Question: questionOf(it), Key: it.Label}
		ch := append(append([]string(nil), it.Choices...), "", "", "", "", "")
		r.A, r.B, r.C, r.D, r.E = ch[0], ch[1], ch[2], ch[3], ch[4]
		recs = append(recs, r)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var tsv, jsonl, arr bytes.Buffer
	tsv.WriteString("id\tsubject\tquestion\tA\tB\tC\tD\tE\tkey\n")
	arr.WriteString("[\n")
	for i, r := range recs {
		tsv.WriteString(strings.Join([]string{r.ID, r.Subject, r.Question, r.A, r.B, r.C, r.D, r.E, r.Key}, "\t") + "\n")
		b := mustJSON(r)
		jsonl.Write(append(b, '\n'))
		if i > 0 {
			arr.WriteString(",\n")
		}
		arr.Write(b)
	}
	arr.WriteString("\n]\n")
	var gz, zs, pq bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(jsonl.Bytes())
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(jsonl.Bytes())
	zw.Close()
	if err := parquet.Write(&pq, recs); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		write("m.tsv", tsv.Bytes()), write("m.jsonl.gz", gz.Bytes()), write("m.jsonl.zst", zs.Bytes()),
		write("m.json", arr.Bytes()), write("m.parquet", pq.Bytes()),
	}
	for _, p := range paths {
		d := base
		d.Path = p
		got, err := LoadDataset("knowledge", d, "")
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d items, want %d", p, len(got), len(want))
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.ID != w.ID || g.Prompt != w.Prompt || g.Gold != w.Gold || g.Source != w.Source || strings.Join(g.Choices, "|") != strings.Join(w.Choices, "|") {
				t.Fatalf("%s item %d: %+v, want %+v", p, i, g, w)
			}
		}
	}
	// A pin that does not match refuses the file before any row is used.
	d := base
	d.Path, d.SHA256 = paths[4], strings.Repeat("0", 64)
	if _, err := LoadDataset("knowledge", d, ""); err == nil || !strings.Contains(err.Error(), "the config pins") {
		t.Fatalf("mismatched pin: %v", err)
	}
	d.SHA256 = dataset.SHA256Hex(pq.Bytes())
	if _, err := LoadDataset("knowledge", d, ""); err != nil {
		t.Fatalf("matching pin: %v", err)
	}
}

// TestMalformedRowsNameFileLineAndField: a template or column the file does
// not have is refused at the header; an answer outside the choices names
// the file, the line and the field.
func TestMalformedRowsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "m.csv")
	os.WriteFile(csvPath, []byte("q,A,B,key\nwhat,x,y,A\nwho,x,y,C\n"), 0o644)
	jsonPath := filepath.Join(dir, "m.jsonl")
	os.WriteFile(jsonPath, []byte(`{"q":"what","A":"x","B":"y","key":"A"}`+"\n"+`{"A":"x","B":"y","key":"A"}`+"\n"), 0o644)
	cases := []struct {
		path, fields, want string
	}{
		{csvPath, "question: '{{.questoin}}'\nchoices: [A, B]\nanswer: key\n", csvPath + `:1: fields.question reads column "questoin"`},
		{csvPath, "question: q\nchoices: [A, B, C]\nanswer: key\n", csvPath + `:1: fields.choices[2] reads column "C"`},
		{csvPath, "question: q\nchoices: [A, B]\nanswer: key\n", csvPath + `:3: field key: answer "C" is outside the 2 choices (A-B)`},
		{csvPath, "question: q\nchoices: [A, B]\nanswer: key\nanswer_as: text\n", csvPath + `:2: field key: "A" is not the text of any of the 2 choices`},
		{jsonPath, "question: '{{.q}}?'\nchoices: [A, B]\nanswer: key\n", jsonPath + ":2: field q: missing (read by the template of fields.question)"},
		{jsonPath, "question: q\nchoices: [A, B]\nanswer: key\n", jsonPath + ":2: field q: missing (fields.question)"},
	}
	for _, c := range cases {
		d := scorers.DatasetConfig{Name: "m", Path: c.path, Format: "mcq", Fields: scorerstest.Fields(t, c.fields)}
		_, err := LoadDataset("knowledge", d, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("fields %q: error %v, want %q", c.fields, err, c.want)
		}
	}
}

func questionOf(it scorers.Item) string {
	var extra map[string]string
	_ = json.Unmarshal(it.Extra, &extra)
	return extra["question"]
}
