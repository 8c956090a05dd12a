package dataset

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestLinesAreTheFilesLines: a JSONL record's line counts blank lines
// before it, and a CSV record's line is where it starts even after a
// quoted value that spans lines.
func TestLinesAreTheFilesLines(t *testing.T) {
	dir := t.TempDir()
	j := filepath.Join(dir, "a.jsonl")
	os.WriteFile(j, []byte("\n\n{\"a\": 1}\n\n{\"a\": 2}\n"), 0o644)
	c := filepath.Join(dir, "a.csv")
	os.WriteFile(c, []byte("a,b\n1,\"two\nlines\"\n3,x\n"), 0o644)
	for path, want := range map[string][]int{j: {3, 5}, c: {2, 4}} {
		var got []int
		var header []string
		err := Each(context.Background(), Source{URI: path}, func(cols Columns) error { header = cols.Names; return nil }, func(r Row) error {
			got = append(got, r.Line)
			return nil
		})
		if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: lines %v (%v), want %v", path, got, err, want)
		}
		if path == c && strings.Join(header, ",") != "a,b" {
			t.Errorf("header %v", header)
		}
	}
	os.WriteFile(c, []byte("a,a\n1,2\n"), 0o644)
	if err := Each(context.Background(), Source{URI: c}, nil, func(Row) error { return nil }); err == nil || !strings.Contains(err.Error(), c+`:1: header: column name "a" is empty or repeated`) {
		t.Errorf("repeated column: %v", err)
	}
	if err := Each(context.Background(), Source{URI: "s9://bucket/x.jsonl"}, nil, func(Row) error { return nil }); err == nil || !strings.Contains(err.Error(), "no reader for s9:// sources") {
		t.Errorf("unregistered scheme: %v", err)
	}
}

func TestValuesAndChecks(t *testing.T) {
	var m Mapping
	if err := yaml.Unmarshal([]byte(`{question: "{{.q}} ({{opt . \"topic\"}})", choices: opts, answer: prompts.0.gold, id: "id?", lang: "{{or datasetLang \"ms\"}}"}`), &m); err != nil {
		t.Fatal(err)
	}
	c, err := m.Compile("mcq", Env{Lang: ""})
	if err != nil {
		t.Fatal(err)
	}
	row := Row{Line: 1, Fields: map[string]any{"q": "Soalan", "opts": []any{"x", 2.0}, "prompts": []any{map[string]any{"gold": 1.0}}}}
	if s, _, err := c.String("question", row); err != nil || s != "Soalan ()" {
		t.Errorf("question: %q %v", s, err)
	}
	if l, _, _ := c.String("lang", row); l != "ms" {
		t.Errorf("lang %q", l)
	}
	if v, ok, err := c.Value("id", row); v != nil || !ok || err != nil {
		t.Errorf("optional id: %v %v %v", v, ok, err)
	}
	if list, _, err := c.Strings("choices", row); err != nil || strings.Join(list, "|") != "x|2" {
		t.Errorf("choices %v %v", list, err)
	}
	if g, _, err := c.String("answer", row); err != nil || g != "1" {
		t.Errorf("answer %q %v", g, err)
	}
	if err := c.CheckColumns("f.csv", Columns{Names: []string{"q", "opts"}, Line: 1}); err == nil || !strings.Contains(err.Error(), `f.csv:1: fields.answer reads column "prompts.0.gold"`) {
		t.Errorf("CheckColumns: %v", err)
	}
	for kind, fields := range map[string]string{
		"safety": "{prompt: p, label: l, harmful: [y]}",
		"mt":     "{id: i, turns: t}",
	} {
		var m Mapping
		yaml.Unmarshal([]byte(fields), &m)
		if err := m.Check(kind); err == nil || !strings.Contains(err.Error(), "required by the "+kind+" axes") {
			t.Errorf("%s %s: %v", kind, fields, err)
		}
	}
	over := Merge(Mapping{Question: "a", Answer: "b"}, Mapping{Answer: "c"})
	if over.Question != "a" || over.Answer != "c" {
		t.Errorf("Merge: %+v", over)
	}
}

// TestSetSource: a source named by config and split is named, typed and
// refused as a set: its path is the repository's, its name says which
// split, its format is Parquet only, and a program without a resolver for
// its scheme says so.
func TestSetSource(t *testing.T) {
	s := Source{URI: "hf://datasets/facebook/belebele@~parquet", Config: "zsm_Latn", Split: "test"}
	if s.Path() != "hf://datasets/facebook/belebele@~parquet/zsm_Latn/test" || s.Name() != "belebele_zsm_Latn_test" {
		t.Errorf("path %q, name %q", s.Path(), s.Name())
	}
	if f, err := s.FileFormat(); f != FileParquet || err != nil {
		t.Errorf("format %q, %v", f, err)
	}
	s.Format = FileCSV
	if _, err := s.FileFormat(); err == nil || !strings.Contains(err.Error(), "Parquet") {
		t.Errorf("csv set: %v", err)
	}
	s.Format = ""
	s.URI = "s9://bucket/x"
	if err := Each(context.Background(), s, nil, func(Row) error { return nil }); err == nil || !strings.Contains(err.Error(), "for hf:// only") {
		t.Errorf("no resolver: %v", err)
	}
	if p, err := ParseHFRepo("hf://datasets/o/n@refs%2Fconvert%2Fparquet"); err != nil || p.Revision != ParquetBranch || p.Repo != "o/n" {
		t.Errorf("ParseHFRepo: %+v %v", p, err)
	}
	for _, bad := range []string{"hf://datasets/o/n", "hf://datasets/o/n@main/file.parquet", "hf://datasets/o@main"} {
		if _, err := ParseHFRepo(bad); err == nil {
			t.Errorf("ParseHFRepo(%q) accepted", bad)
		}
	}
}
