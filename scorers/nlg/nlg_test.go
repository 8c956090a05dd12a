package nlg

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/backendtest"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/chrf"
	"github.com/glossobench/glossobench/scorers/chrf/chrftest"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

const data = "../../testdata/nlg"

func seahelmConfig(fewshot int) scorers.AxisConfig {
	cfg := scorers.AxisConfig{
		BaseDir: data,
		Datasets: []scorers.DatasetConfig{{
			Name: "flores_en_id", Path: "flores200_devtest_en_to_ind_Latn.sample.jsonl", Format: FormatSeaHelm,
		}},
	}
	if fewshot > 0 {
		cfg.Options = map[string]any{"fewshot": fewshot, "examples": map[string]any{"flores_en_id": "flores200_dev_en_to_ind_Latn_examples.jsonl"}}
	}
	return cfg
}

func TestLoadPassages(t *testing.T) {
	cfg := scorers.AxisConfig{BaseDir: data, Datasets: []scorers.DatasetConfig{{
		Name: "passages", Path: "flores_passages_eng_zsm_from_belebele.sample.jsonl", Format: FormatPassages, Limit: 5,
	}}}
	items := scorerstest.Load(t, NewAxis(), cfg)
	if len(items) != 10 {
		t.Fatalf("%d items, want 10 (5 passages x 2 directions)", len(items))
	}
	it := items[0]
	var ex extra
	json.Unmarshal(it.Extra, &ex)
	if it.ID != "passages/en-ms/0" || ex.Direction != "en-ms" || it.Lang != "ms" || it.TaskID != "passages/0" || it.Line != 1 {
		t.Errorf("first item %+v, extra %+v", it, ex)
	}
	if !strings.HasPrefix(it.References[0], "Pastikan tangan anda") || !strings.Contains(it.Prompt, "Make sure your hand") ||
		!strings.Contains(it.Prompt, "Bahasa Melayu") || ex.AnswerTag != "Terjemahan:" || ex.MaxTokens != passageMaxTokens {
		t.Errorf("en-ms item: prompt %q, ref %q, extra %+v", it.Prompt, it.References[0], ex)
	}
	back := items[1]
	if back.ID != "passages/ms-en/0" || !strings.HasPrefix(back.References[0], "Make sure") || !strings.Contains(back.Prompt, "Bahasa Inggeris") {
		t.Errorf("ms-en item %+v", back)
	}

	cfg.Options = map[string]any{"directions": []any{"ms-en"}}
	items, err := NewAxis().Load(cfg)
	if err != nil || len(items) != 5 || !strings.Contains(items[0].ID, "ms-en") {
		t.Errorf("directions [ms-en]: %d items, err %v", len(items), err)
	}
}

func TestLoadSeaHelm(t *testing.T) {
	items := scorerstest.Load(t, NewAxis(), seahelmConfig(0))
	if len(items) != 40 {
		t.Fatalf("%d items, want 40", len(items))
	}
	var ex extra
	json.Unmarshal(items[0].Extra, &ex)
	if ex.Direction != "en-id" || ex.AnswerTag != "Terjemahan:" || items[0].Lang != "id" || items[0].ID != "flores_en_id/1" {
		t.Errorf("item %+v extra %+v", items[0], ex)
	}
	want := "Terjemahkan teks berikut ini ke dalam bahasa Indonesia.\n\nJawablah dengan hanya menggunakan format berikut ini:\nTerjemahan: $TRANSLATION\nGanti $TRANSLATION dengan teks yang telah diterjemahkan.\n\nTeks: \"We now have 4-month-old mice that are non-diabetic that used to be diabetic,\" he added."
	if items[0].Prompt != want {
		t.Errorf("prompt\n%q\nwant\n%q", items[0].Prompt, want)
	}
	if items[0].References[0] != "\"Saat ini ada mencit umur 4 bulan nondiabetes yang dulunya diabetes,\" tambahnya." {
		t.Errorf("reference %q", items[0].References[0])
	}

	items = scorerstest.Load(t, NewAxis(), seahelmConfig(2))
	p := items[0].Prompt
	shot := "\n\nTeks: The War of Spanish Succession marked the first war whose central issue was the balance of power.\nTerjemahan: Perang Penerus Spanyol menandai perang pertama dengan isu sentral berupa keseimbangan kekuatan."
	if !strings.Contains(p, "diterjemahkan."+shot+"\n\nTeks: ") || strings.Count(p, "\nTerjemahan: ") != 3 || !strings.HasSuffix(p, "he added.") {
		t.Errorf("two-shot prompt:\n%s", p)
	}
}

func TestLoadSeaHelmReverse(t *testing.T) {
	items, err := NewAxis().Load(scorers.AxisConfig{BaseDir: data, Datasets: []scorers.DatasetConfig{{
		Name: "flores_id_en", Path: "flores200_devtest_ind_Latn_to_en.sample.jsonl", Format: FormatSeaHelm,
	}}, Options: map[string]any{"fewshot": 5, "examples": map[string]any{"flores_id_en": "flores200_dev_ind_Latn_to_en_examples.jsonl"}}})
	if err != nil {
		t.Fatal(err)
	}
	var ex extra
	json.Unmarshal(items[0].Extra, &ex)
	if len(items) != 10 || ex.Direction != "id-en" || !strings.Contains(items[0].Prompt, "bahasa Inggris") ||
		strings.Count(items[0].Prompt, "\nTerjemahan: ") != 6 || !strings.HasPrefix(items[0].References[0], "\"We now have") {
		t.Errorf("%d items, extra %+v, prompt:\n%s", len(items), ex, items[0].Prompt)
	}
}

// Both passage directions score separately in by_direction; a perfect
// answer scores 1.
func TestScorePassagesByDirection(t *testing.T) {
	items, err := NewAxis().Load(scorers.AxisConfig{BaseDir: data, Datasets: []scorers.DatasetConfig{{
		Name: "passages", Path: "flores_passages_eng_zsm_from_belebele.sample.jsonl", Format: FormatPassages,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		text := "Terjemahan: " + it.References[0]
		if strings.Contains(it.ID, "/ms-en/") {
			text = "Here you go:\nTranslation: " + it.References[0][:len(it.References[0])/2]
		}
		preds[i] = scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: text, FinishReason: "stop"}}}
	}
	res, err := NewAxis().Score(items, preds, scorers.ScoreOptions{Seed: 1, BootstrapResamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	dirs := res.Secondary["by_direction"].(map[string]any)
	enms, msen := dirs["en-ms"].(map[string]any), dirs["ms-en"].(map[string]any)
	if enms["score"] != 1.0 || enms["n"] != 12 || msen["score"].(float64) >= 0.9 || msen["n"] != 12 {
		t.Errorf("by_direction %v", dirs)
	}
	if cp := res.Secondary["copy_source_chrf++"].(float64); cp <= 0 || cp >= 0.5 {
		t.Errorf("copy-source baseline %v", cp)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	for _, tc := range []struct {
		name string
		cfg  scorers.AxisConfig
		want string
	}{
		{"missing zsm", scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "p", Format: FormatPassages,
			Path: write("p.jsonl", `{"pair_id": 0, "eng_Latn": "x", "zsm_Latn": "y"}`+"\n"+`{"pair_id": 1, "eng_Latn": "x"}`)}}},
			"p.jsonl:2: field zsm_Latn: missing (fields.references)"},
		{"bad json", scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "p", Format: FormatPassages,
			Path: write("bad.jsonl", "\n{\"pair_id\": 0,")}}}, "bad.jsonl:2: invalid JSON"},
		{"no label", scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "s", Format: FormatSeaHelm,
			Path: write("x_en_to_ind_Latn.jsonl", `{"prompts": [{"text": "hi"}]}`)}}}, "x_en_to_ind_Latn.jsonl:1: field label: missing (fields.references)"},
		{"no source", scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "s", Format: FormatSeaHelm,
			Path: write("y_en_to_ind_Latn.jsonl", `{"label": "hai", "prompts": []}`)}}}, "y_en_to_ind_Latn.jsonl:1: field prompts.0.text: missing (fields.text)"},
		{"no direction", scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "s", Format: FormatSeaHelm,
			Path: write("flores.jsonl", `{"label": "a", "prompts": [{"text": "b"}]}`)}}}, "cannot tell the translation direction"},
		{"unknown format", scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "s", Format: "csv", Path: "z"}}}, `unknown format "csv"`},
		{"unknown option", scorers.AxisConfig{Options: map[string]any{"word_order": 0}, Datasets: []scorers.DatasetConfig{{Name: "s"}}}, `unknown option "word_order"`},
		{"bad direction", scorers.AxisConfig{Options: map[string]any{"directions": []any{"en-th"}}, Datasets: []scorers.DatasetConfig{{Name: "s"}}}, "unknown direction en-th"},
		{"missing examples", scorers.AxisConfig{Options: map[string]any{"fewshot": 1}, Datasets: []scorers.DatasetConfig{{Name: "s", Format: FormatSeaHelm,
			Path: write("devtest_en_to_ind_Latn.jsonl", `{"label": "a", "prompts": [{"text": "b"}]}`)}}}, "dev_en_to_ind_Latn_examples.jsonl"},
	} {
		if tc.cfg.BaseDir == "" {
			tc.cfg.BaseDir = dir
		}
		_, err := NewAxis().Load(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestExtractTranslation(t *testing.T) {
	for _, tc := range []struct {
		resp, tag, want string
		found           bool
	}{
		{"Terjemahan: Saya makan nasi.", "Terjemahan:", "Saya makan nasi.", true},
		{"Berikut terjemahannya.\n\nTerjemahan: Saya makan nasi.\n\nCatatan: ...", "Terjemahan:", "Saya makan nasi.", true},
		{"Terjemahan:\n```\nSaya makan nasi.\n```", "Terjemahan:", "Saya makan nasi.", true},
		{"**Terjemahan:** Saya makan nasi.", "Terjemahan:", "Saya makan nasi.", true},
		{"translation: I eat rice.", "Terjemahan:", "I eat rice.", true},
		{"  Saya makan nasi.  ", "Terjemahan:", "Saya makan nasi.", false},
		{"```\nSaya makan nasi.\n```", "Terjemahan:", "Saya makan nasi.", false},
		{"Terjemahan:", "Terjemahan:", "", true},
		{"", "Terjemahan:", "", false},
	} {
		got, found := ExtractTranslation(tc.resp, tc.tag)
		if got != tc.want || found != tc.found {
			t.Errorf("ExtractTranslation(%q) = %q, %v; want %q, %v", tc.resp, got, found, tc.want, tc.found)
		}
	}
}

func FuzzExtractTranslation(f *testing.F) {
	for _, s := range []string{"Terjemahan: x", "TRANSLATION:\n```y", "İTranslation:z", "\xffterjemahan:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, resp string) {
		got, _ := ExtractTranslation(resp, "Terjemahan:")
		if strings.Contains(got, "\n") && strings.Contains(strings.ToLower(resp), "terjemahan:") {
			t.Fatalf("ExtractTranslation(%q) = %q spans lines", resp, got)
		}
	})
}

// goldenCorpus returns the chrF++ single-reference corpus score recorded by
// testdata/chrf/make_golden.py.
func goldenCorpus(t *testing.T) float64 {
	for _, g := range chrftest.Golden(t) {
		if g.Config.Name == "chrf++" && g.Refs == "1ref" {
			return g.Corpus
		}
	}
	t.Fatal("no chrf++ golden record")
	return 0
}

// TestScoreGolden runs the axis end to end on the 40 SEA-HELM en->id rows
// with the perturbed hypotheses of testdata/chrf (answered in the prompt's
// "Terjemahan: ..." format), and checks the headline against the Python
// reference's corpus chrF++.
func TestScoreGolden(t *testing.T) {
	items := scorerstest.Load(t, NewAxis(), seahelmConfig(0))
	hyps := chrftest.Lines(t, "hyps.txt")
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		if it.References[0] != chrftest.Lines(t, "refs.txt")[i] {
			t.Fatalf("item %d reference differs from testdata/chrf/refs.txt", i)
		}
		preds[i] = scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: "Terjemahan: " + hyps[i], FinishReason: "stop"}}}
	}
	preds[7].Generations[0].FinishReason = "length"
	res, err := NewAxis().Score(items, preds, scorers.ScoreOptions{Seed: 7, BootstrapResamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	want := goldenCorpus(t) / 100
	if res.Score == nil || math.Abs(*res.Score-want) > 1e-12 {
		t.Fatalf("score %v, want %v", res.Score, want)
	}
	if res.CI95 == nil || res.CI95[0] > *res.Score || res.CI95[1] < *res.Score || res.CI95[1]-res.CI95[0] > 0.2 {
		t.Errorf("CI95 %v around %v", res.CI95, *res.Score)
	}
	again, _ := NewAxis().Score(items, preds, scorers.ScoreOptions{Seed: 7, BootstrapResamples: 200})
	if *again.CI95 != *res.CI95 {
		t.Errorf("same seed, different CI: %v vs %v", again.CI95, res.CI95)
	}
	if res.Metric != "chrf++" || res.N != 40 || res.TruncationRate != 1.0/40 || len(res.Items) != 40 {
		t.Errorf("result %+v", res)
	}
	m := chrf.New(chrf.ChrFPlusPlus)
	for i, is := range res.Items {
		s := m.Sentence(hyps[i], items[i].References).Score / 100
		if math.Abs(is.Score-s) > 1e-12 || is.Label != (s >= LabelThreshold) {
			t.Errorf("item %d: score %v label %v, want %v", i, is.Score, is.Label, s)
		}
	}
	if res.Items[3].Flagged != "empty" || res.Items[7].Flagged != "truncated" {
		t.Errorf("flags: %q %q", res.Items[3].Flagged, res.Items[7].Flagged)
	}
	if got := res.Secondary["chrf++_sacrebleu"].(float64); math.Abs(got-100*want) > 1e-9 {
		t.Errorf("chrf++_sacrebleu %v", got)
	}
	if sig := res.Secondary["signature"].(string); sig != "chrF2++|nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:"+chrf.SacrebleuVersion {
		t.Errorf("signature %q", sig)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "metricx not configured; chrF++ only") {
		t.Errorf("notes %q", res.Notes)
	}
	dirs := res.Secondary["by_direction"].(map[string]any)
	if d := dirs["en-id"].(map[string]any); d["n"] != 40 || math.Abs(d["score"].(float64)-want) > 1e-12 {
		t.Errorf("by_direction %v", dirs)
	}
}

func TestScoreMismatch(t *testing.T) {
	items, _ := NewAxis().Load(seahelmConfig(0))
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		preds[i].ItemID = it.ID
	}
	preds[2].ItemID = "other"
	if _, err := NewAxis().Score(items, preds, scorers.ScoreOptions{}); err == nil || !strings.Contains(err.Error(), `prediction 2 is for item "other"`) {
		t.Errorf("err %v", err)
	}
	if _, err := NewAxis().Score(items, preds[:3], scorers.ScoreOptions{}); err == nil {
		t.Error("length mismatch accepted")
	}
	// No output at all: scored 0, flagged, not an error.
	preds[2].ItemID = items[2].ID
	preds[0].Unsupported = true
	res, err := NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
	if err != nil || *res.Score != 0 || res.Items[0].Flagged != "no_output" {
		t.Errorf("empty predictions: %v, %v", res.Score, err)
	}
}

func TestPredict(t *testing.T) {
	items, _ := NewAxis().Load(seahelmConfig(0))
	raw := &backendtest.Fixed{Text: "Terjemahan: halo"}
	p, err := NewAxis().Predict(context.Background(), raw, items[0], scorers.PredictOptions{Seed: 3})
	if err != nil || p.ItemID != items[0].ID || len(p.Generations) != 1 {
		t.Fatalf("pred %+v err %v", p, err)
	}
	r := raw.Requests[0]
	if r.Prompt != items[0].Prompt || r.Messages != nil || r.MaxTokens != defaultMaxTokens || r.Temperature != 0 || r.Seed != 3 {
		t.Errorf("raw request %+v", r)
	}
	chat := &backendtest.Fixed{Text: "Terjemahan: halo", Caps: backends.Capabilities{Chat: true}}
	NewAxis().Predict(context.Background(), chat, items[0], scorers.PredictOptions{})
	if r := chat.Requests[0]; r.Prompt != "" || len(r.Messages) != 1 || r.Messages[0].Content != items[0].Prompt {
		t.Errorf("chat request %+v", r)
	}
}

// The few-shot file name is derived from the devtest one, as the staged
// SEA-HELM files are named.
func TestDerivedExamplesPath(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"flores200_devtest_en_to_ind_Latn.sample.jsonl", "flores200_dev_en_to_ind_Latn_examples.jsonl"} {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, strings.Replace(name, ".sample", "", 1)), b, 0o644)
	}
	items, err := NewAxis().Load(scorers.AxisConfig{BaseDir: dir, Options: map[string]any{"fewshot": 3},
		Datasets: []scorers.DatasetConfig{{Name: "f", Path: "flores200_devtest_en_to_ind_Latn.jsonl", Format: FormatSeaHelm}}})
	if err != nil || strings.Count(items[0].Prompt, "\nTerjemahan: ") != 4 {
		t.Fatalf("err %v", err)
	}
}

// TestLoadSharedData loads the full staged datasets when they are present.
func TestLoadSharedData(t *testing.T) {
	const dir = "/work/shared/data/nlg_translation"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("shared data not present")
	}
	items, err := NewAxis().Load(scorers.AxisConfig{BaseDir: dir, Options: map[string]any{"fewshot": 5}, Datasets: []scorers.DatasetConfig{
		{Name: "passages", Path: "flores_passages_eng_zsm_from_belebele.jsonl", Format: FormatPassages},
		{Name: "en_id", Path: "flores200_devtest_en_to_ind_Latn.jsonl", Format: FormatSeaHelm},
		{Name: "id_en", Path: "flores200_devtest_ind_Latn_to_en.jsonl", Format: FormatSeaHelm},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*488 + 2*1012; len(items) != want {
		t.Errorf("%d items, want %d", len(items), want)
	}
}

type fakeMetricX struct{}

func (f fakeMetricX) Score(_ context.Context, src, hyp, ref []string) ([]float64, error) {
	out := make([]float64, len(hyp))
	for i := range hyp {
		if hyp[i] != ref[i] {
			out[i] = 5
		}
	}
	return out, nil
}

// MetricX-24 is opened lazily, only when a run names it, and reported as a
// secondary metric; an unregistered name leaves chrF++ alone with a note.
func TestMetricX(t *testing.T) {
	opened := 0
	RegisterMetricX("fake", func() (MetricX, error) { opened++; return fakeMetricX{}, nil })
	cfg := seahelmConfig(0)
	cfg.Options = map[string]any{"metricx": "fake"}
	items := scorerstest.Load(t, NewAxis(), cfg)
	if opened != 0 {
		t.Fatal("MetricX opened at load time")
	}
	preds := make([]scorers.Prediction, len(items))
	for i, it := range items {
		text := "Terjemahan: " + it.References[0]
		if i%4 == 0 {
			text = "Terjemahan: salah"
		}
		preds[i] = scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: text}}}
	}
	for range 2 {
		res, err := NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
		if err != nil {
			t.Fatal(err)
		}
		if res.Secondary["metricx24"] != 1.25 || res.Secondary["metricx24_normalized"] != 0.95 || res.Items[0].Fields["metricx24"] != 5.0 {
			t.Errorf("metricx secondary %v %v", res.Secondary["metricx24"], res.Secondary["metricx24_normalized"])
		}
	}
	if opened != 1 {
		t.Errorf("opened %d times, want 1", opened)
	}
	cfg.Options = map[string]any{"metricx": "absent"}
	items, _ = NewAxis().Load(cfg)
	res, _ := NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
	if _, ok := res.Secondary["metricx24"]; ok || !strings.Contains(strings.Join(res.Notes, "|"), `metricx unavailable (no MetricX-24 implementation registered as "absent"); chrF++ only`) {
		t.Errorf("notes %q", res.Notes)
	}
}
