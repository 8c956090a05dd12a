// Package fakerun writes a small but genuine run folder for the tests of
// the release, report and leaderboard tools. The per-axis results come from
// the real axis scorers over made-up predictions, and result.json from the
// real Aggregate activity, so the fake run always has the current format.
package fakerun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/ifeval"
	"github.com/glossobench/glossobench/scorers/mcq"
	"github.com/glossobench/glossobench/scorers/nlg"
	"github.com/rs/zerolog"
)

// ScriptNote is a note planted in the fake run to check that reports show
// model- and data-provided text as text.
const ScriptNote = `<script>document.documentElement.setAttribute("data-pwned","yes")</script> planted note & "quotes"`

// Options vary the fake run.
type Options struct {
	RunID   string // default "fake-run"
	ModelID string // default "fake/model-7b"
	Class   string // model_class, default "instruct"
	Reason  string // reasoning_mode, default "off"
	Shift   int    // rotates the model's answers, so two runs differ
}

// WriteRun writes a finished run into the local store folder storeDir and
// returns its run folder, storeDir/runs/<run_id>.
func WriteRun(storeDir string, o Options) (string, error) {
	if o.RunID == "" {
		o.RunID = "fake-run"
	}
	if o.ModelID == "" {
		o.ModelID = "fake/model-7b"
	}
	if o.Class == "" {
		o.Class = "instruct"
	}
	if o.Reason == "" {
		o.Reason = "off"
	}
	runDir := filepath.Join(storeDir, "runs", o.RunID)
	cfg := &config.Config{
		BenchVersion: config.BenchVersion, Language: "ms",
		Run: config.Run{Seed: 1234, BootstrapResamples: 200, NearChanceEps: 0.05},
		Model: config.Model{Spec: "gguf:fake.gguf", ID: o.ModelID,
			Meta: config.ModelMeta{Family: "fake", ModelClass: o.Class, Params: "7B", ReasoningMode: o.Reason}},
		Store: config.Store{URI: storeDir},
		Axes: map[string]scorers.AxisConfig{
			"knowledge": {ScoringMode: "both", Weight: weight(1), Datasets: []scorers.DatasetConfig{
				{Name: "global_mmlu_ms", Format: "global_mmlu", Path: "data/global_mmlu_ms_test.jsonl.gz", HumanValidated: true},
				{Name: "kalahi", Format: "kalahi", Path: "data/tl_kalahi_mc.jsonl", License: "CC-BY-4.0"}}},
			"nlu": {ScoringMode: "cloze", Weight: weight(2), Datasets: []scorers.DatasetConfig{
				{Name: "belebele_ms", Format: "belebele", Path: "data/ms_belebele.jsonl"}}},
			"nlg": {Weight: weight(1), Datasets: []scorers.DatasetConfig{
				{Name: "flores_passages", Format: "flores_passages", Path: "data/flores.jsonl"}}},
			"if": {Weight: weight(1), Datasets: []scorers.DatasetConfig{
				{Name: "ifeval", Format: "ifeval", Path: "data/input_data.jsonl", HumanValidated: true}}},
			"cultural": {ScoringMode: "generate", Weight: weight(1), Tier: scorers.TierSelfbuilt, Datasets: []scorers.DatasetConfig{
				{Name: "ms_cultural_selfbuilt", Format: "kalahi", Path: "data/cultural.jsonl", License: "CC-BY-NC-SA-4.0"}}},
		},
	}
	plan := activities.Plan{RunID: o.RunID, StoreURI: storeDir, BenchVersion: config.BenchVersion,
		SchemaVersion: config.SchemaVersion, ConfigHash: "sha256:fakeconfig", ModelID: o.ModelID}

	type axisRun struct {
		name, mode string
		items      []scorers.Item
		preds      []scorers.Prediction
		score      func([]scorers.Item, []scorers.Prediction, scorers.ScoreOptions) (scorers.AxisResult, error)
	}
	know := mcqRun("knowledge", []string{"global_mmlu_ms", "kalahi"}, 12, o.Shift, true)
	nlu := mcqRun("nlu", []string{"belebele_ms"}, 9, o.Shift+1, false)
	cult := mcqRun("cultural", []string{"ms_cultural_selfbuilt"}, 6, o.Shift+2, true)
	nlgItems, nlgPreds := nlgRun(o.Shift)
	ifItems, ifPreds := ifRun(o.Shift)
	runs := []axisRun{
		{"knowledge", "both", know.items, know.preds, mcq.NewAxis("knowledge").Score},
		{"nlu", "cloze", nlu.items, nlu.preds, mcq.NewAxis("nlu").Score},
		{"nlg", "", nlgItems, nlgPreds, nlg.NewAxis().Score},
		{"if", "", ifItems, ifPreds, ifeval.NewAxis().Score},
		{"cultural", "generate", cult.items, cult.preds, mcq.NewAxis("cultural").Score},
	}
	in := activities.AggregateInput{
		RunRef: activities.RunRef{RunID: o.RunID, StoreURI: storeDir},
		Notes:  []string{ScriptNote},
	}
	dd := runfiles.DedupResult{Corpus: "1 file, 3 documents",
		KeptSHA256: "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab"}
	in.Skipped = []runfiles.Skip{{Axis: "safety", Reason: "skipped_no_judge: no judge configured"}}
	plan.Skipped = in.Skipped
	for _, r := range runs {
		ac := cfg.Axes[r.name]
		res, err := r.score(r.items, r.preds, scorers.ScoreOptions{ScoringMode: r.mode, Seed: cfg.Run.Seed, BootstrapResamples: cfg.Run.BootstrapResamples})
		if err != nil {
			return "", fmt.Errorf("fakerun: %s: %w", r.name, err)
		}
		if err := writeJSONL(filepath.Join(runDir, r.name, "items.jsonl"), r.items); err != nil {
			return "", err
		}
		if err := writeJSONL(filepath.Join(runDir, r.name, "scores.jsonl"), res.Items); err != nil {
			return "", err
		}
		if err := writeJSONL(filepath.Join(runDir, r.name, "shards", "0000", "pred-00000.jsonl"), r.preds); err != nil {
			return "", err
		}
		tier := ac.Tier
		if tier == "" {
			tier = scorers.TierPublic
		}
		plan.Axes = append(plan.Axes, activities.AxisPlan{Name: r.name, Version: res.Version, Items: len(r.items), Weight: *ac.Weight, Tier: tier, ScoringMode: r.mode})
		rate := 0.125 * float64(len(r.name)%3)
		dd.Axes = append(dd.Axes, runfiles.AxisDedup{Axis: r.name, Kept: len(r.items), ContaminationRate: &rate, Shards: []int{len(r.items)}})
		out := activities.AxisOutcome{Result: res, Weight: *ac.Weight, Tier: tier}
		if r.name == "knowledge" {
			h, l := 0.62, 1.1
			out.Audit = &runfiles.AuditSummary{Verdict: "no leakage detected", Sources: 2, Headline: &h, L: &l, Line: "L 1.10 <" + "b>bold?</b>"}
		}
		in.Outcomes = append(in.Outcomes, out)
	}
	in.Plan = plan
	if err := writeJSON(filepath.Join(runDir, "manifest.json"), map[string]any{"config": cfg, "plan": plan}); err != nil {
		return "", err
	}
	if err := writeJSON(filepath.Join(runDir, runfiles.DedupName), dd); err != nil {
		return "", err
	}
	a := activities.New(zerolog.Nop())
	if _, err := a.Aggregate(context.Background(), in); err != nil {
		return "", fmt.Errorf("fakerun: aggregate: %w", err)
	}
	return runDir, nil
}

type mcqData struct {
	items []scorers.Item
	preds []scorers.Prediction
}

// mcqRun makes n four-choice items; the model's cloze pick and generated
// letter follow shift, so some items disagree between the two.
func mcqRun(axis string, datasets []string, n, shift int, generate bool) mcqData {
	var d mcqData
	regs := []string{"HIGH", "MID", "LOW"}
	for i := range n {
		ds := datasets[i%len(datasets)]
		it := scorers.Item{ID: fmt.Sprintf("%s/%d", ds, i), Axis: axis, Dataset: ds, Line: i + 1, Source: ds, Lang: "ms",
			Prompt: fmt.Sprintf("Soalan %d: pilih jawapan <yang> betul.", i), Choices: []string{"satu", "dua", "tiga", "empat"}, Gold: i % 4}
		if axis == "nlu" {
			it.Register = regs[i%3]
		}
		clozePick := it.Gold
		if (i+shift)%3 == 0 {
			clozePick = (it.Gold + 1) % 4
		}
		p := scorers.Prediction{ItemID: it.ID}
		for j := range 4 {
			lp := -3.0 - float64(j)/10
			if j == clozePick {
				lp = -0.5
			}
			p.LogLiks = append(p.LogLiks, backends.LLResult{ID: fmt.Sprint(j), LogProb: lp})
		}
		if generate {
			genPick := it.Gold
			if (i+shift)%4 == 1 {
				genPick = (it.Gold + 2) % 4
			}
			p.Generations = []backends.Generation{{Text: fmt.Sprintf("Jawapan: %c", 'A'+genPick), FinishReason: "stop"}}
		}
		d.items = append(d.items, it)
		d.preds = append(d.preds, p)
	}
	return d
}

func nlgRun(shift int) ([]scorers.Item, []scorers.Prediction) {
	src := []string{"The cat sat on the mat.", "It is raining today.", "I like to read books.", "Where is the station?", "We ate rice for dinner."}
	ref := []string{"Kucing itu duduk di atas tikar.", "Hari ini hujan.", "Saya suka membaca buku.", "Di manakah stesen itu?", "Kami makan nasi untuk makan malam."}
	hyp := []string{"Kucing duduk di atas tikar.", "Hari ini sedang hujan.", "Saya suka baca buku.", "Stesen di mana?", "Kami makan nasi pada waktu malam."}
	var items []scorers.Item
	var preds []scorers.Prediction
	for i := range src {
		ex, _ := json.Marshal(map[string]string{"direction": "en-ms", "src_lang": "en", "tgt_lang": "ms", "source_text": src[i], "answer_tag": "Terjemahan:"})
		it := scorers.Item{ID: fmt.Sprintf("flores_passages/%d", i), Axis: "nlg", Dataset: "flores_passages", Line: i + 1, Lang: "en",
			Prompt: "Terjemahkan: " + src[i], Gold: -1, References: []string{ref[i]}, Extra: ex}
		h := hyp[(i+shift)%len(hyp)]
		if i%2 == 0 {
			h = hyp[i]
		}
		items = append(items, it)
		preds = append(preds, scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: "Terjemahan: " + h, FinishReason: "stop"}}})
	}
	return items, preds
}

func ifRun(shift int) ([]scorers.Item, []scorers.Prediction) {
	resp := []string{"Tiada koma di sini", "Ada, koma di sini", "Jawapan ringkas tanpa koma", "Satu, dua"}
	var items []scorers.Item
	var preds []scorers.Prediction
	for i := range resp {
		ex, _ := json.Marshal(map[string]any{"key": fmt.Sprint(1000 + i), "instruction_id_list": []string{"punctuation:no_comma"}, "kwargs": []map[string]any{{}}})
		it := scorers.Item{ID: fmt.Sprintf("ifeval/%d", i), Axis: "if", Dataset: "ifeval", Line: i + 1, Lang: "en",
			Prompt: "Answer without commas.", Gold: -1, Extra: ex}
		items = append(items, it)
		preds = append(preds, scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: resp[(i+shift)%len(resp)], FinishReason: "stop"}}})
	}
	return items, preds
}

func writeJSONL[T any](path string, rows []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b []byte
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	return os.WriteFile(path, b, 0o644)
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func weight(w float64) *float64 { return &w }
