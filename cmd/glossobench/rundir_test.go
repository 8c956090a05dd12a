package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/results/sigtest"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

// writeRun lays out <root>/runs/<run>/result.json and <axis>/scores.jsonl
// as the EvalRun aggregate writes them, from the activities types.
func writeRun(t *testing.T, root, run, model string, ms float64, msAxes []string, axes map[string][]float64) string {
	return writeRunMeta(t, root, run, model, config.ModelMeta{}, ms, msAxes, axes)
}

func writeRunMeta(t *testing.T, root, run, model string, meta config.ModelMeta, ms float64, msAxes []string, axes map[string][]float64) string {
	t.Helper()
	dir := filepath.Join(root, "runs", run)
	res := runfiles.Result{RunID: run, ModelID: model, Axes: map[string]runfiles.AxisReport{}}
	if meta != (config.ModelMeta{}) {
		res.ModelMeta = &meta
	}
	res.Summary.MSPublic = &ms
	res.Summary.MSAxes = msAxes
	for axis, scores := range axes {
		var rep runfiles.AxisReport
		rep.Axis = axis
		rep.Weight = 1
		rep.N = len(scores)
		rep.Tier, rep.Discriminates = "public", true
		rep.Metric = "acc_generate"
		mean := 0.0
		for _, v := range scores {
			mean += v / float64(len(scores))
		}
		rep.Score = &mean
		rep.ScoresKey = "runs/" + run + "/" + axis + "/scores.jsonl"
		res.Axes[axis] = rep
		var b strings.Builder
		for i, s := range scores {
			line, _ := json.Marshal(scorers.ItemScore{ItemID: fmt.Sprintf("%s/%d", axis, i), Score: s, Label: s > 0.5})
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.MkdirAll(filepath.Join(dir, axis, "shards", "0000"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, axis, "scores.jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunDirectories(t *testing.T) {
	root := t.TempDir()
	ones := func(n, every int) []float64 {
		v := make([]float64, n)
		for i := range v {
			if i%every == 0 {
				v[i] = 1
			}
		}
		return v
	}
	runA := writeRun(t, root, "r1", "m1", 0.8, []string{"knowledge", "nlu"}, map[string][]float64{"knowledge": ones(100, 1), "nlu": ones(50, 2), "cultural": ones(20, 3)})
	runB := writeRun(t, root, "r2", "m2", 0.6, []string{"knowledge", "nlu"}, map[string][]float64{"knowledge": ones(100, 3), "nlu": ones(50, 2), "cultural": ones(20, 3)})
	writeRun(t, root, "r3", "m3", 0.4, []string{"knowledge"}, map[string][]float64{"knowledge": ones(100, 5)})

	// concord --scores <store>: every run's ms_public.
	ext := writeTemp(t, "ext.csv", "model_id,score\nm1,3\nm2,2\nm3,1\n")
	code, stdout, stderr := runCmd(concordMain, "--scores", root, "--external", ext, "--name", "x")
	if code != 0 || !strings.Contains(stdout, "3 shared models") || !strings.Contains(stdout, "agreement: strong") {
		t.Errorf("concord over runs: exit %d\n%s%s", code, stdout, stderr)
	}

	// correlate --overlap-free reads the runs' item ids.
	disjoint := writeTemp(t, "d.json", `{"item_ids": ["other/1"], "scores": [{"model_id":"m1","score":3},{"model_id":"m2","score":2},{"model_id":"m3","score":1}]}`)
	if code, stdout, stderr := runCmd(correlateMain, "--ours", root, "--external", disjoint, "--overlap-free"); code != 0 || !strings.Contains(stdout, "share no scored item") {
		t.Errorf("correlate over runs, disjoint: exit %d\n%s%s", code, stdout, stderr)
	}
	shared := writeTemp(t, "s.json", `{"item_ids": ["nlu/7"], "scores": [{"model_id":"m1","score":3},{"model_id":"m2","score":2},{"model_id":"m3","score":1}]}`)
	if code, _, stderr := runCmd(correlateMain, "--ours", root, "--external", shared, "--overlap-free"); code != 3 || !strings.Contains(stderr, "(nlu/7)") {
		t.Errorf("correlate over runs, shared item: exit %d\n%s", code, stderr)
	}

	// sigtest on two runs: MS over the shared ms_public axes only.
	out := filepath.Join(t.TempDir(), "s.json")
	code, stdout, stderr = runCmd(sigtestMain, runA, runB, "--out", out)
	if code != 0 {
		t.Fatalf("sigtest over runs: exit %d\n%s", code, stderr)
	}
	var rep sigtest.Report
	readJSON(t, out, &rep)
	if len(rep.Axes) != 3 || rep.MS.N != 150 || !strings.Contains(stdout, "MS leaves out cultural (not in both") {
		t.Errorf("sigtest over runs: %+v\n%s", rep, stdout)
	}
	wantMS := ((1 - 34.0/100) + 0) / 2
	if !near(rep.MS.Delta, wantMS) {
		t.Errorf("MS delta %v, want %v", rep.MS.Delta, wantMS)
	}

	// A broken result.json is named.
	os.WriteFile(filepath.Join(runB, "result.json"), []byte("{\n\"model_id\": 3}"), 0o644)
	if code, _, stderr := runCmd(concordMain, "--scores", root, "--external", ext, "--name", "x"); code != 1 || !strings.Contains(stderr, "result.json:2: field model_id") {
		t.Errorf("broken result.json: exit %d %q", code, stderr)
	}
}

func TestSigtestStrictParity(t *testing.T) {
	root := t.TempDir()
	axes := map[string][]float64{"nlu": {1, 0, 1, 1}}
	on := writeRunMeta(t, root, "on", "m1", config.ModelMeta{ReasoningMode: "on"}, 0.7, []string{"nlu"}, axes)
	on2 := writeRunMeta(t, root, "on2", "m2", config.ModelMeta{ReasoningMode: "on"}, 0.7, []string{"nlu"}, axes)
	off := writeRunMeta(t, root, "off", "m3", config.ModelMeta{ReasoningMode: "off"}, 0.7, []string{"nlu"}, axes)
	plain := writeRun(t, root, "plain", "m4", 0.7, []string{"nlu"}, axes)
	jsonl := writeTemp(t, "a.jsonl", itemLines("nlu", 1, 0, 1, 1))
	cases := []struct {
		a, b string
		code int
		want string
	}{
		{on, on2, 0, ""},
		{on, off, 3, `is "on"`},
		{off, plain, 3, `"unrecorded"`},
		{on, jsonl, 3, "not a run directory"},
	}
	for _, c := range cases {
		code, _, stderr := runCmd(sigtestMain, "--strict-parity", c.a, c.b)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s vs %s: exit %d %q, want %d and %q", filepath.Base(c.a), filepath.Base(c.b), code, stderr, c.code, c.want)
		}
	}
	// Without the flag the mismatch is compared anyway.
	if code, _, stderr := runCmd(sigtestMain, on, off); code != 0 {
		t.Errorf("without --strict-parity: exit %d %q", code, stderr)
	}
}
