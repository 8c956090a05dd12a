package mcq

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/probes"
)

const data = "../../testdata/data"

func TestLoadRealDatasets(t *testing.T) {
	cases := []struct {
		d      scorers.DatasetConfig
		n      int
		source string
		nopt   int
	}{
		{scorers.DatasetConfig{Name: "g", Path: "global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz", Format: "global_mmlu", Limit: 30}, 30, "abstract_algebra", 4},
		{scorers.DatasetConfig{Name: "b", Path: "belebele_ms_en/ms_belebele.jsonl", Format: "belebele"}, 895, "b", 4},
		{scorers.DatasetConfig{Name: "i", Path: "nli_indonli/id_indonli_lay_1000sample.jsonl", Format: "indonli"}, 1000, "i", 3},
		{scorers.DatasetConfig{Name: "k", Path: "cultural_kalahi_tl/tl_kalahi_mc.jsonl", Format: "kalahi"}, 150, "k", 4},
		{scorers.DatasetConfig{Name: "cs", Path: "global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz", Format: "global_mmlu",
			Filter: map[string]string{"cultural_sensitivity_label": "CS"}}, 761, "", 4},
	}
	for _, c := range cases {
		items, err := LoadDataset("x", c.d, data)
		if err != nil {
			t.Fatalf("%s: %v", c.d.Path, err)
		}
		if len(items) != c.n {
			t.Fatalf("%s: %d items, want %d", c.d.Path, len(items), c.n)
		}
		it := items[0]
		if len(it.Choices) != c.nopt || it.Gold < 0 || it.Gold >= c.nopt || !strings.HasPrefix(it.ID, c.d.Name+"/") {
			t.Fatalf("%s: first item %+v", c.d.Path, it)
		}
		if c.source != "" && it.Source != c.source {
			t.Fatalf("%s: source %q, want %q", c.d.Path, it.Source, c.source)
		}
		if !strings.Contains(it.Prompt, "A. "+it.Choices[0]) || !strings.HasSuffix(it.Prompt, ":") {
			t.Fatalf("%s: prompt does not list the options and end in the cue:\n%s", c.d.Path, it.Prompt)
		}
	}
}

func TestBadRowsNameFileLineAndField(t *testing.T) {
	dir := t.TempDir()
	rows := map[string]string{
		"json":   `{"question": "q", "A": "a"` + "\n",
		"field":  `{"question": "q", "A": "a", "B": "b", "C": "c", "answer": "A"}` + "\n",
		"answer": `{"question": "q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "Z"}` + "\n",
		"type":   `{"question": 7, "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"}` + "\n",
	}
	wants := map[string]string{"json": "invalid JSON", "field": "field D", "answer": "outside the 4 choices", "type": "field question"}
	for name, row := range rows {
		p := filepath.Join(dir, name+".jsonl")
		good := `{"question": "q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"}` + "\n"
		os.WriteFile(p, []byte(good+row), 0o644)
		_, err := LoadDataset("knowledge", scorers.DatasetConfig{Name: name, Path: p, Format: "global_mmlu"}, "")
		if err == nil || !strings.Contains(err.Error(), p+":2") || !strings.Contains(err.Error(), wants[name]) {
			t.Errorf("%s: error %v does not name %s:2 and %q", name, err, p, wants[name])
		}
	}
	if _, err := LoadDataset("k", scorers.DatasetConfig{Name: "x", Path: "p", Format: "nope"}, ""); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestParseLetter(t *testing.T) {
	cases := map[string]int{" B": 1, "Jawapan: C.": 2, "(D) because": 3, "A": 0, "I think it is E": -1, "": -1, "Bukan": -1, "Z then B": 1}
	for text, want := range cases {
		got, ok := ParseLetter(text, 4)
		if (want < 0) == ok || (ok && got != want) {
			t.Errorf("ParseLetter(%q) = %d %v, want %d", text, got, ok, want)
		}
	}
}

// scriptedBackend answers log-likelihoods from a table and generates fixed text.
type scriptedBackend struct {
	ll   map[string]float64
	text string
	reqs int
}

func (s *scriptedBackend) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	out := make([]backends.Generation, len(reqs))
	for i := range reqs {
		s.reqs++
		out[i] = backends.Generation{ID: reqs[i].ID, Text: s.text, FinishReason: "stop"}
	}
	return out, nil
}
func (s *scriptedBackend) LogLikelihood(_ context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	if s.ll == nil {
		return nil, backends.ErrUnsupported
	}
	out := make([]backends.LLResult, len(reqs))
	for i, r := range reqs {
		s.reqs++
		out[i] = backends.LLResult{ID: r.ID, LogProb: s.ll[r.Continuation]}
	}
	return out, nil
}
func (s *scriptedBackend) Capabilities() backends.Capabilities { return backends.Capabilities{} }
func (s *scriptedBackend) Close() error                        { return nil }

func item(id string, gold int) scorers.Item {
	it := scorers.Item{ID: id, Lang: "ms", Choices: []string{"w", "x", "y", "z"}, Gold: gold, Source: "s"}
	it.Prompt = Render(it)
	return it
}

func TestScoreBothModes(t *testing.T) {
	ax := NewAxis("knowledge")
	b := &scriptedBackend{ll: map[string]float64{" A": -3, " B": -1, " C": -2, " D": -4}, text: "Jawapan: C"}
	items := []scorers.Item{item("1", 1), item("2", 2), item("3", 3), item("4", 1)}
	var preds []scorers.Prediction
	for _, it := range items {
		p, err := ax.Predict(context.Background(), b, it, scorers.PredictOptions{ScoringMode: "both"})
		if err != nil {
			t.Fatal(err)
		}
		preds = append(preds, p)
	}
	r, err := ax.Score(items, preds, scorers.ScoreOptions{ScoringMode: "both", BootstrapResamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// cloze always picks B (gold for items 1 and 4); generate always says C (gold for item 2).
	if *r.ByScoring.Cloze != 0.5 || *r.ByScoring.Generate != 0.25 || *r.ByScoring.Gap != 0.25 || *r.Score != 0.25 || r.Metric != "acc_generate" {
		t.Fatalf("by_scoring %+v score %v", *r.ByScoring, *r.Score)
	}
	if r.Items[0].Fields["cloze_correct"] != true || r.Items[1].Fields["cloze_correct"] != false {
		t.Fatalf("cloze_correct per item: %+v", r.Items[:2])
	}
	if r.Chance != 0.25 || r.CI95 == nil || r.CI95[0] > 0.25 || r.CI95[1] < 0.25 {
		t.Fatalf("chance %v ci %v", r.Chance, r.CI95)
	}
}

func TestClozeUnsupportedIsReportedNotInvented(t *testing.T) {
	ax := NewAxis("nlu")
	b := &scriptedBackend{text: "B"}
	it := item("1", 1)
	p, err := ax.Predict(context.Background(), b, it, scorers.PredictOptions{ScoringMode: "cloze"})
	if err != nil || !p.Unsupported {
		t.Fatalf("prediction %+v err %v", p, err)
	}
	r, err := ax.Score([]scorers.Item{it}, []scorers.Prediction{p}, scorers.ScoreOptions{ScoringMode: "cloze"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Score != nil || r.Metric != "unsupported" || !strings.Contains(strings.Join(r.Notes, " "), "unsupported") {
		t.Fatalf("result %+v", r)
	}
}

func TestTruncationWarning(t *testing.T) {
	ax := NewAxis("knowledge")
	items := []scorers.Item{item("1", 0), item("2", 0)}
	preds := []scorers.Prediction{
		{ItemID: "1", Generations: []backends.Generation{{Text: "Let me think about", FinishReason: "length"}}},
		{ItemID: "2", Generations: []backends.Generation{{Text: "A", FinishReason: "stop"}}},
	}
	r, err := ax.Score(items, preds, scorers.ScoreOptions{ScoringMode: "generate"})
	if err != nil {
		t.Fatal(err)
	}
	if r.TruncationRate != 0.5 || !strings.Contains(strings.Join(r.Notes, " "), "WARNING: truncation_rate") || r.ByScoring != nil {
		t.Fatalf("result %+v", r)
	}
}

func TestProbesOnPositionMemoriser(t *testing.T) {
	// A model that always answers "B": right on gold-B items, collapses when
	// the options are shuffled, and keeps B when B no longer holds the answer.
	ax := NewAxis("knowledge")
	b := &scriptedBackend{text: "B"}
	items, err := LoadDataset("knowledge", scorers.DatasetConfig{Name: "g", Path: "global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz", Format: "global_mmlu", Limit: 200}, data)
	if err != nil {
		t.Fatal(err)
	}
	var gold []scorers.Item
	for _, it := range items {
		if it.Gold == 1 {
			gold = append(gold, it)
		}
	}
	pool := newTestPool(items)
	var preds []scorers.Prediction
	for _, it := range gold {
		p, err := ax.Predict(context.Background(), b, it, scorers.PredictOptions{ScoringMode: "generate"})
		if err != nil {
			t.Fatal(err)
		}
		p.Variants, err = ax.PredictProbes(context.Background(), b, it, pool, []string{"shuffle", "unanswerable"}, scorers.PredictOptions{ScoringMode: "generate", Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		preds = append(preds, p)
	}
	r, err := ax.Score(gold, preds, scorers.ScoreOptions{ScoringMode: "generate"})
	if err != nil {
		t.Fatal(err)
	}
	if *r.Score != 1 {
		t.Fatalf("memoriser should be perfect on gold-B items, got %v", *r.Score)
	}
	if d := r.Secondary["shuffle_drop"].(float64); d < 0.5 {
		t.Fatalf("shuffle_drop %v: a position memoriser must collapse", d)
	}
	if d := r.Secondary["unanswerable_drop"].(float64); d != 1 {
		t.Fatalf("unanswerable_drop %v: the memoriser keeps its letter", d)
	}
}

func newTestPool(items []scorers.Item) *probes.Pool { return probes.NewPool(items) }

func TestUnanswerableSkipsFixedLabelSets(t *testing.T) {
	items, err := LoadDataset("nlu", scorers.DatasetConfig{Name: "i", Path: "nli_indonli/id_indonli_lay_1000sample.jsonl", Format: "indonli", Limit: 20}, data)
	if err != nil {
		t.Fatal(err)
	}
	ax := NewAxis("nlu")
	b := &scriptedBackend{text: "A"}
	v, err := ax.PredictProbes(context.Background(), b, items[0], probes.NewPool(items), []string{"shuffle", "unanswerable"}, scorers.PredictOptions{ScoringMode: "generate"})
	if err != nil {
		t.Fatalf("a probe that cannot apply must not fail the item: %v", err)
	}
	if _, ok := v["probe_shuffle"]; !ok {
		t.Fatal("shuffle probe missing")
	}
	if _, ok := v["probe_unanswerable"]; ok {
		t.Fatal("NLI has no plausible wrong option; the unanswerable probe must be skipped")
	}
}
