package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/infra/results/release"
	"github.com/glossobench/glossobench/infra/results/spotcheck"
)

// TestSpotcheckThenCalibrate fills in the worksheet as a reviewer would and
// feeds it back to calibrate.
func TestSpotcheckThenCalibrate(t *testing.T) {
	runDir := fakeRunDir(t, t.TempDir(), fakerun.Options{})
	ws := filepath.Join(t.TempDir(), "ws.csv")
	code, _, errs := runCmd(spotcheckMain, runDir, "--n", "12", "--out", ws)
	if code != 0 {
		t.Fatalf("spotcheck exit %d: %s", code, errs)
	}
	f, _ := os.Open(ws)
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 13 || strings.Join(recs[0], ",") != strings.Join(spotcheck.Header, ",") {
		t.Fatalf("worksheet has %d lines, header %v", len(recs), recs[0])
	}
	col := func(name string) int {
		for i, h := range recs[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	ed, reasons := col("expected_difficulty"), col("reasons")
	run0, err := release.LoadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	// The fake run has cloze/generate disagreements: they rank first.
	if !strings.Contains(recs[1][reasons], spotcheck.ReasonDisagree) {
		t.Errorf("top item reasons %q", recs[1][reasons])
	}
	// Ranked by leverage, never rising.
	prev := 1 << 30
	for _, r := range recs[1:] {
		if r[ed] != "" {
			t.Errorf("expected_difficulty prefilled: %q", r[ed])
		}
		lev := 0
		for _, why := range strings.Split(r[reasons], ";") {
			lev += spotcheck.ReasonWeight[why]
		}
		if lev == 0 || lev > prev {
			t.Errorf("item %s leverage %d after %d", r[1], lev, prev)
		}
		prev = lev
		if r[col("axis")] == "knowledge" && strings.HasPrefix(r[1], "global_mmlu_ms/") && strings.Contains(r[reasons], spotcheck.ReasonNotValidated) {
			t.Errorf("%s: global_mmlu_ms is human_validated in the config", r[1])
		}
	}
	_ = run0
	// Same seed, same sheet; the reviewer marks easy the items the model got right.
	code, out2, _ := runCmd(spotcheckMain, runDir, "--n", "12")
	want, _ := os.ReadFile(ws)
	if code != 0 || out2 != string(want) {
		t.Error("spotcheck is not reproducible for a fixed seed")
	}
	for _, r := range recs[1:] {
		if r[col("correct")] == "yes" {
			r[ed] = "easy"
		} else {
			r[ed] = "hard"
		}
	}
	filled := filepath.Join(t.TempDir(), "filled.csv")
	g, _ := os.Create(filled)
	w := csv.NewWriter(g)
	w.WriteAll(recs)
	g.Close()
	code, out, errs := runCmd(calibrateMain, runDir, "--anchors", filled)
	if code != 0 || !strings.Contains(out, "easy→hard: monotone") {
		t.Errorf("calibrate exit %d:\n%s%s", code, out, errs)
	}
	// Swapped labels: hard items all right, easy all wrong → exit 2.
	for _, r := range recs[1:] {
		r[ed] = map[string]string{"easy": "hard", "hard": "easy"}[r[ed]]
	}
	g, _ = os.Create(filled)
	w = csv.NewWriter(g)
	w.WriteAll(recs)
	g.Close()
	code, out, _ = runCmd(calibrateMain, runDir, "--anchors", filled)
	if code != 2 || !strings.Contains(out, "not monotone") {
		t.Errorf("swapped: exit %d\n%s", code, out)
	}
	code, _, errs = runCmd(calibrateMain, runDir, "--anchors", writeTemp(t, "bad.csv", "x,easy\ny,impossible\n"))
	if code != 1 || !strings.Contains(errs, "bad.csv:2: field expected_difficulty") {
		t.Errorf("bad anchors: exit %d: %s", code, errs)
	}
}
