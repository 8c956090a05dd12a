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
	nullPath := filepath.Join(dir, "n.jsonl")
	os.WriteFile(nullPath, []byte(`{"q":"what","A":"x","B":"y","key":"A"}`+"\n"+`{"q":null,"A":"x","B":"y","key":"A"}`+"\n"), 0o644)
	cases := []struct {
		path, fields, want string
	}{
		{csvPath, "question: '{{.questoin}}'\nchoices: [A, B]\nanswer: key\n", csvPath + `:1: fields.question reads column "questoin"`},
		{csvPath, "question: q\nchoices: [A, B, C]\nanswer: key\n", csvPath + `:1: fields.choices[2] reads column "C"`},
		{csvPath, "question: q\nchoices: [A, B]\nanswer: key\n", csvPath + `:3: field key: answer "C" is outside the 2 choices (A-B)`},
		{csvPath, "question: q\nchoices: [A, B]\nanswer: key\nanswer_as: text\n", csvPath + `:2: field key: "A" is not the text of any of the 2 choices`},
		{jsonPath, "question: '{{.q}}?'\nchoices: [A, B]\nanswer: key\n", jsonPath + ":2: field q: missing (read by the template of fields.question)"},
		{jsonPath, "question: q\nchoices: [A, B]\nanswer: key\n", jsonPath + ":2: field q: missing (fields.question)"},
		{nullPath, "question: 'Q: {{.q}}'\nchoices: [A, B]\nanswer: key\n", nullPath + ":2: fields.question: {{.q}} is null in this row"},
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

// TestMalformedTextIsRefused: text encoding/json would change (invalid
// UTF-8 becomes U+FFFD, so does a lone surrogate escape), a NUL byte, a
// null or empty option before a given one and an empty question are each
// an error naming the file, the line and the field, not an item.
func TestMalformedTextIsRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	good := `{"q":"Apa?","A":"x","B":"y","key":"A"}` + "\n"
	const fields = "question: q\nchoices: [A, B]\nanswer: key\n"
	cases := []struct {
		name, path, fields, want string
	}{
		{"invalid UTF-8", write("utf8.jsonl", good+"{\"q\":\"Ap\xe9?\",\"A\":\"x\",\"B\":\"y\",\"key\":\"A\"}\n"), fields,
			"utf8.jsonl:2: field q: invalid UTF-8 at byte 8 of the record"},
		{"invalid UTF-8 in a column no field reads", write("unused.jsonl", good+"{\"q\":\"Apa?\",\"A\":\"x\",\"B\":\"y\",\"key\":\"A\",\"meta\":{\"n\":[\"\xff\"]}}\n"), fields,
			"unused.jsonl:2: field meta.n.0: invalid UTF-8"},
		{"lone surrogate", write("sur.jsonl", good+`{"q":"Apa?","A":"x\ud800","B":"y","key":"A"}`+"\n"), fields,
			`sur.jsonl:2: field A: an unpaired surrogate escape \ud800`},
		{"NUL", write("nul.jsonl", good+`{"q":"Apa?","A":"x","B":"y\u0000","key":"A"}`+"\n"), fields,
			"nul.jsonl:2: field B: a NUL byte at byte 1 (fields.choices[1])"},
		{"null option", write("null.jsonl", good+`{"q":"Apa?","A":null,"B":"y","key":"B"}`+"\n"), fields,
			"null.jsonl:2: field A: option A is empty or null"},
		{"empty option", write("empty.jsonl", good+`{"q":"Apa?","A":" ","B":"y","key":"B"}`+"\n"), fields,
			"empty.jsonl:2: field A: option A is empty or null"},
		{"null in a list", write("list.jsonl", `{"q":"Apa?","opts":["x",null,"z"],"key":"A"}`+"\n"), "question: q\nchoices: opts\nanswer: key\n",
			"list.jsonl:1: field opts[1]: option B is empty or null"},
		{"empty lettered option", write("lettered.jsonl", `{"q":"Apa?","mcq":"A: x\nB: \nC: z","key":"A"}`+"\n"), "question: q\nchoices_text: mcq\nanswer: key\n",
			"lettered.jsonl:1: field mcq: option B is empty"},
		{"empty question", write("noq.jsonl", good+`{"q":"  ","A":"x","B":"y","key":"A"}`+"\n"), fields,
			"noq.jsonl:2: field q: empty question"},
		{"empty prompt", write("nop.jsonl", `{"p":"","A":"x","B":"y","key":"A"}`+"\n"), "prompt: p\nchoices: [A, B]\nanswer: key\n",
			"nop.jsonl:1: field p: empty prompt"},
		{"invalid UTF-8 in CSV", write("bad.csv", "q,A,B,key\nApa?,x,y,A\nApa?,x,\xc3,A\n"), fields,
			"bad.csv:3: field B: invalid UTF-8 at byte 0 (fields.choices[1])"},
		{"NUL through a template", write("tmpl.csv", "q,A,B,key\n\"a\x00b\",x,y,A\n"), "question: '{{.q}}'\nchoices: [A, B]\nanswer: key\n",
			"tmpl.csv:2: fields.question: the template's text has a NUL byte at byte 1"},
		{"JSON array record", write("arr.json", "[{\"q\":\"Apa?\",\"A\":\"x\",\"B\":\"y\",\"key\":\"A\"},\n {\"q\":\"Apa?\",\"A\":\"\xff\",\"B\":\"y\",\"key\":\"A\"}]"), fields,
			"arr.json: record 2: field A: invalid UTF-8"},
	}
	for _, c := range cases {
		d := scorers.DatasetConfig{Name: "m", Path: c.path, Format: "mcq", Fields: scorerstest.Fields(t, c.fields)}
		items, err := LoadDataset("knowledge", d, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: items %v, error %v, want %q", c.name, items, err, c.want)
		}
	}
	// Escapes that are text (a surrogate pair, an escaped backslash before
	// "ud800") and trailing empty options (a four-option row in a
	// five-column set) still read.
	ok := write("ok.jsonl", `{"q":"Apa \ud83d\ude00 \\ud800?","A":"x","B":"y","C":null,"key":"A"}`+"\n")
	d := scorers.DatasetConfig{Name: "m", Path: ok, Format: "mcq", Fields: scorerstest.Fields(t, "question: q\nchoices: [A, B, C]\nanswer: key\n")}
	items, err := LoadDataset("knowledge", d, "")
	if err != nil || len(items) != 1 || len(items[0].Choices) != 2 || questionOf(items[0]) != `Apa 😀 \ud800?` {
		t.Fatalf("items %+v, err %v", items, err)
	}
}
