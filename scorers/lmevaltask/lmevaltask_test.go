package lmevaltask

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/mcq"
	"github.com/glossobench/glossobench/scorers/nlg"
)

const tasks = "../../testdata/lmeval-tasks"

// roundTrip marshals the entry as import-task writes it and reads it back
// as a config would, so the test runs what a user would paste.
func roundTrip(t *testing.T, e *Entry) scorers.DatasetConfig {
	t.Helper()
	b, err := yaml.Marshal(e.Dataset)
	if err != nil {
		t.Fatal(err)
	}
	var d scorers.DatasetConfig
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return d
}

func write(t *testing.T, name, body string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBelebele: lm-eval's belebele_zsm_Latn.yaml (with its include) on
// rows in facebook/belebele's columns gives lm-eval's prompt, the four
// letters as choices and the gold index from correct_answer_num.
func TestBelebele(t *testing.T) {
	task, err := Load(filepath.Join(tasks, "belebele", "belebele_zsm_Latn.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data := write(t, "zsm_Latn.jsonl",
		`{"flores_passage":"Ali pergi ke pasar.","question":"  Ke mana Ali pergi? ","mc_answer1":"sekolah","mc_answer2":"pasar","mc_answer3":"rumah","mc_answer4":"masjid","correct_answer_num":"2"}`+"\n"+
			`{"flores_passage":"Hari hujan.","question":"Bagaimana cuaca?","mc_answer1":"panas","mc_answer2":"berangin","mc_answer3":"bersalji","mc_answer4":"hujan","correct_answer_num":"4"}`+"\n")
	e, err := Convert(task, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Axis != "mcq" || e.Source != "dataset_path facebook/belebele, dataset_name zsm_Latn, split test" {
		t.Errorf("axis %s, source %q", e.Axis, e.Source)
	}
	if len(e.Unsupported) != 0 {
		t.Errorf("unsupported: %q", e.Unsupported)
	}
	items, err := mcq.LoadDataset("nlu", roundTrip(t, e), "")
	if err != nil {
		t.Fatal(err)
	}
	// lm-eval renders "P: {{flores_passage}}\nQ: {{question.strip()}}\nA: ..."
	want := "P: Ali pergi ke pasar.\nQ: Ke mana Ali pergi?\nA: sekolah\nB: pasar\nC: rumah\nD: masjid\nAnswer:"
	if len(items) != 2 || items[0].Prompt != want || items[0].Gold != 1 || items[1].Gold != 3 || strings.Join(items[0].Choices, "") != "ABCD" {
		t.Fatalf("items %+v", items)
	}
	// A target outside ['1', '2', '3', '4'] names the row and field.
	bad := write(t, "bad.jsonl", `{"flores_passage":"x","question":"q","mc_answer1":"a","mc_answer2":"b","mc_answer3":"c","mc_answer4":"d","correct_answer_num":"5"}`+"\n")
	e, _ = Convert(task, bad)
	if _, err := mcq.LoadDataset("nlu", roundTrip(t, e), ""); err == nil || !strings.Contains(err.Error(), bad+":1: fields.answer") {
		t.Errorf("bad target: %v", err)
	}
}

// TestGlobalMMLU: the answer is a column holding the letter (lm-eval's
// choices.index(target)); process_docs is Python and is named.
func TestGlobalMMLU(t *testing.T) {
	task, err := Load(filepath.Join(tasks, "global_mmlu_id", "global_mmlu_id_business.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data := write(t, "id.jsonl", `{"question":"Apa ibu kota Indonesia?","option_a":"Jakarta","option_b":"Bandung","option_c":"Medan","option_d":"Surabaya","answer":"A","subject_category":"Business"}`+"\n")
	e, err := Convert(task, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Unsupported) != 1 || !strings.Contains(e.Unsupported[0], "process_docs is Python (!function utils.process_business)") {
		t.Errorf("unsupported: %q", e.Unsupported)
	}
	items, err := mcq.LoadDataset("knowledge", roundTrip(t, e), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Gold != 0 || items[0].Prompt != "Apa ibu kota Indonesia?\nA. Jakarta\nB. Bandung\nC. Medan\nD. Surabaya\nAnswer:" {
		t.Fatalf("items %+v", items)
	}
}

// TestFloresGenerateUntil: a generate_until translation task becomes an
// nlg entry (prompt, references); its stop string, target_delimiter ”
// and BLEU/TER are named as what the entry does not do.
func TestFloresGenerateUntil(t *testing.T) {
	task, err := Load(filepath.Join(tasks, "flores_eu", "flores_en-eu.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data := write(t, "devtest.jsonl", `{"id":1,"sentence_eng_Latn":"Good morning.","sentence_eus_Latn":"Egun on."}`+"\n")
	e, err := Convert(task, data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Axis != "nlg" || e.Source != "dataset_path facebook/flores, dataset_name all, split devtest" {
		t.Errorf("axis %s source %q", e.Axis, e.Source)
	}
	joined := strings.Join(e.Unsupported, "\n")
	for _, want := range []string{`target_delimiter ""`, `generation_kwargs.until ["\n"]`, "metric bleu", "metric ter"} {
		if !strings.Contains(joined, want) {
			t.Errorf("unsupported lacks %q:\n%s", want, joined)
		}
	}
	d := roundTrip(t, e)
	items, err := nlg.Axis{}.Load(scorers.AxisConfig{Datasets: []scorers.DatasetConfig{d}})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Prompt != "English sentence: Good morning.\nBasque sentence:" || strings.Join(items[0].References, "|") != "Egun on." {
		t.Fatalf("items %+v", items)
	}
}

// TestBeyondTranslation: Jinja the translator does not know is an error
// naming the expression, not a template that renders something else.
func TestBeyondTranslation(t *testing.T) {
	for src, want := range map[string]string{
		"{{ question | upper }}":                 "{{question | upper}} is beyond",
		"{% if x %}a{% endif %}":                 "Jinja statements",
		"{{ [1, 2].index(x) }}":                  "a list of other than quoted strings",
		"{{choices[answer]}}":                    "{{choices[answer]}} is beyond",
		"Q: {{question}}\nA: {{answer.strip()}}": "",
	} {
		_, err := translate(src, true)
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", src, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// TestDatasetKwargsNamed: dataset_kwargs (data_files, a revision, ...)
// change which rows lm-eval reads; the entry reads the split it names, so
// they are named as unsupported rather than dropped without a word.
func TestDatasetKwargsNamed(t *testing.T) {
	dir := t.TempDir()
	tmpl, err := os.ReadFile(filepath.Join(tasks, "belebele", "_default_template_yaml"))
	if err != nil {
		t.Fatal(err)
	}
	yaml := "include: _default_template_yaml\ntask: belebele_zsm_Latn_kwargs\ndataset_name: zsm_Latn\ndataset_kwargs:\n  revision: abc123\n"
	p := filepath.Join(dir, "task.yaml")
	if err := os.WriteFile(filepath.Join(dir, "_default_template_yaml"), tmpl, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Convert(task, write(t, "rows.jsonl", `{"flores_passage":"p","question":"q","mc_answer1":"a","mc_answer2":"b","mc_answer3":"c","mc_answer4":"d","correct_answer_num":"1"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(e.Unsupported, "\n"), "dataset_kwargs") {
		t.Errorf("dataset_kwargs not named: %q", e.Unsupported)
	}
}
