package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/elo"
)

// writeEloRun lays out a run folder as the store does: runs/<run>/result.json
// and runs/<run>/<axis>/scores.jsonl.
func writeEloRun(t *testing.T, root, run, model string, axes map[string]string, scores map[string][]float64) string {
	t.Helper()
	dir := filepath.Join(root, "runs", run)
	res := map[string]any{"run_id": run, "model_id": model, "axes": map[string]any{}}
	for axis, scorer := range axes {
		res["axes"].(map[string]any)[axis] = map[string]any{"scorer_type": scorer, "weight": 1, "discriminates": true, "scores_key": "runs/" + run + "/" + axis + "/scores.jsonl"}
		if err := os.MkdirAll(filepath.Join(dir, axis), 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, s := range scores[axis] {
			fmt.Fprintf(&b, `{"item_id": "%s/%d", "score": %v, "rating": 0, "label": false}`+"\n", axis, i, s)
		}
		if err := os.WriteFile(filepath.Join(dir, axis, "scores.jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(dir, "result.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A hand-checkable tournament on one exact-match axis of four items:
//
//	item  0 1 2 3
//	A     1 1 1 0
//	B     1 0 0 1
//
// Decisive items: 1, 2 (A wins), 3 (B wins); item 0 is a tie. A beats B 2–1,
// so Bradley–Terry gives p_A/p_B = 2 and ratings 1000 ± 200·log10(2).
func TestEloHandChecked(t *testing.T) {
	root := t.TempDir()
	ax := map[string]string{"knowledge": "deterministic-rule"}
	a := writeEloRun(t, root, "r1", "model-a", ax, map[string][]float64{"knowledge": {1, 1, 1, 0}})
	b := writeEloRun(t, root, "r2", "model-b", ax, map[string][]float64{"knowledge": {1, 0, 0, 1}})

	code, out, errs := runCmd(eloMain, "--bt", "--json", "--resamples", "50", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep elo.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err, out)
	}
	d := 200 * math.Log10(2)
	if rep.Matches != 3 || rep.Method != "bradley-terry" || len(rep.Players) != 2 {
		t.Fatalf("report %+v", rep)
	}
	pa, pb := rep.Players[0], rep.Players[1]
	if pa.Player != "model-a" || math.Abs(pa.Rating-(1000+d)) > 1e-6 || math.Abs(pb.Rating-(1000-d)) > 1e-6 {
		t.Errorf("BT ratings %+v %+v, want ±%v", pa, pb, d)
	}
	if pa.Wins != 2 || pa.Losses != 1 || pb.Wins != 1 || pa.Ties != 0 {
		t.Errorf("tallies %+v %+v", pa, pb)
	}
	// With ties, item 0 counts half to each: 2.5–1.5, ratio 5/3.
	_, out, _ = runCmd(eloMain, "--bt", "--json", "--ties", "--resamples", "50", a, b)
	rep = elo.Report{}
	json.Unmarshal([]byte(out), &rep)
	if d := 200 * math.Log10(5.0/3); rep.Matches != 4 || math.Abs(rep.Players[0].Rating-(1000+d)) > 1e-6 || rep.Players[0].Ties != 1 {
		t.Errorf("with ties: %+v", rep)
	}
	// Sequential Elo, K=32, from 1000 each: zero-sum, and the order is seeded.
	_, out1, _ := runCmd(eloMain, "--json", "--seed", "7", "--resamples", "50", a, b)
	_, out2, _ := runCmd(eloMain, "--json", "--seed", "7", "--resamples", "50", a, b)
	if out1 != out2 {
		t.Error("same seed, different output")
	}
	rep = elo.Report{}
	json.Unmarshal([]byte(out1), &rep)
	if s := rep.Players[0].Rating + rep.Players[1].Rating; math.Abs(s-2000) > 1e-9 || rep.Players[0].Player != "model-a" {
		t.Errorf("elo %+v (sum %v)", rep.Players, s)
	}
	for _, p := range rep.Players {
		if p.Lo > p.Hi {
			t.Errorf("CI %+v", p)
		}
	}
	// One decisive match: expected score 1/2, so the winner gains K/2 = 16.
	one := t.TempDir()
	x := writeEloRun(t, one, "x", "x", ax, map[string][]float64{"knowledge": {1, 1}})
	y := writeEloRun(t, one, "y", "y", ax, map[string][]float64{"knowledge": {0, 1}})
	_, out, _ = runCmd(eloMain, "--json", "--resamples", "10", x, y)
	rep = elo.Report{}
	json.Unmarshal([]byte(out), &rep)
	if rep.Matches != 1 || rep.Players[0].Rating != 1016 || rep.Players[1].Rating != 984 {
		t.Errorf("one match: %+v", rep)
	}
}

// Three models over a store root: an exact-match axis, a chrF axis (not
// exact match: skipped with a note) and a judged MT axis.
func TestEloStoreRootAndAxes(t *testing.T) {
	root := t.TempDir()
	ax := map[string]string{"nlu": "deterministic-rule", "nlg": "deterministic-rule", "mt": "llm-judge", "safety": "classification"}
	writeEloRun(t, root, "r1", "strong", ax, map[string][]float64{"nlu": {1, 1, 1, 1, 0}, "nlg": {0.5, 0.6}, "mt": {0.9, 0.8}, "safety": {1, 1}})
	writeEloRun(t, root, "r2", "middle", ax, map[string][]float64{"nlu": {1, 1, 0, 0, 1}, "nlg": {0.4, 0.2}, "mt": {0.5, 0.9}, "safety": {0, 0}})
	writeEloRun(t, root, "r3", "weak", ax, map[string][]float64{"nlu": {0, 1, 0, 0, 0}, "nlg": {0.1, 0.2}, "mt": {0.2, 0.3}, "safety": {0, 1}})
	code, out, errs := runCmd(eloMain, "--bt", "--prior", "0.5", "--json", "--resamples", "100", root)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep elo.Report
	json.Unmarshal([]byte(out), &rep)
	order := []string{}
	for _, p := range rep.Players {
		order = append(order, p.Player)
	}
	if strings.Join(order, ",") != "strong,middle,weak" {
		t.Errorf("order %v", order)
	}
	// nlu: strong–middle 3 decisive (items 2,3 strong; 4 middle), strong–weak 3, middle–weak 2; mt: 2+2+2.
	if rep.ByAxis["nlu"] != 8 || rep.ByAxis["mt"] != 6 || rep.ByAxis["nlg"] != 0 || rep.ByAxis["safety"] != 0 {
		t.Errorf("matches by axis %v", rep.ByAxis)
	}
	if !strings.Contains(strings.Join(rep.Notes, ";"), "axis nlg: scores are not 0/1") {
		t.Errorf("notes %v", rep.Notes)
	}
	_, out, _ = runCmd(eloMain, "--json", "--axes", "mt", "--resamples", "20", root)
	rep = elo.Report{}
	json.Unmarshal([]byte(out), &rep)
	if rep.Matches != 6 || len(rep.ByAxis) != 1 {
		t.Errorf("--axes mt: %+v", rep)
	}
	code, out, _ = runCmd(eloMain, "--resamples", "20", root)
	if code != 0 || !strings.Contains(out, "rank  model") || !strings.Contains(out, "strong") {
		t.Errorf("text output %d %q", code, out)
	}
}

func TestEloErrors(t *testing.T) {
	root := t.TempDir()
	ax := map[string]string{"knowledge": "deterministic-rule"}
	a := writeEloRun(t, root, "r1", "m", ax, map[string][]float64{"knowledge": {1, 0}})
	b := writeEloRun(t, root, "r2", "m", ax, map[string][]float64{"knowledge": {0, 1}})
	c := writeEloRun(t, root, "r3", "n", ax, map[string][]float64{"knowledge": {1, 0}})
	bad := filepath.Join(root, "runs", "bad")
	os.MkdirAll(filepath.Join(bad, "knowledge"), 0o755)
	os.WriteFile(filepath.Join(bad, "result.json"), []byte(`{"run_id":"bad","model_id":"x","axes":{"knowledge":{"scorer_type":"deterministic-rule","weight":1,"discriminates":true}}}`), 0o644)
	os.WriteFile(filepath.Join(bad, "knowledge", "scores.jsonl"), []byte("{\"item_id\":\"a\",\"score\":1}\n{oops\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{a}, "need at least two runs"},
		{[]string{a, b}, `model "m" appears in two runs`},
		{[]string{a, c}, "no pairwise matches"},
		{[]string{a, filepath.Join(root, "nowhere")}, "no result.json"},
		{[]string{a, bad}, "scores.jsonl:2:"},
	}
	for _, tc := range cases {
		code, _, errs := runCmd(eloMain, tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
	// Usage errors exit 2.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: glossobench elo"},
		{[]string{"--resamples", "0", a, c}, "--resamples must be at least 1"},
	} {
		code, _, errs := runCmd(eloMain, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	// A model that never loses has no BT maximum-likelihood estimate.
	d := writeEloRun(t, t.TempDir(), "r4", "always", ax, map[string][]float64{"knowledge": {1, 1}})
	code, _, errs := runCmd(eloMain, "--bt", a, d)
	if code != 1 || !strings.Contains(errs, "--prior") {
		t.Errorf("no MLE: exit %d %q", code, errs)
	}
}

// Elo ranks on item-level matches, not on the axes' published headlines;
// its printed summary says so (issue 14: a derived number names its statistic).
func TestEloNamesItsStatistic(t *testing.T) {
	root := t.TempDir()
	ax := map[string]string{"knowledge": "deterministic-rule"}
	a := writeEloRun(t, root, "r1", "model-a", ax, map[string][]float64{"knowledge": {1, 1, 1, 0}})
	b := writeEloRun(t, root, "r2", "model-b", ax, map[string][]float64{"knowledge": {1, 0, 0, 1}})
	code, out, errs := runCmd(eloMain, "--bt", "--resamples", "20", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, "item-level matches") || !strings.Contains(first, "not the axes' headlines") {
		t.Errorf("summary line does not name the statistic: %q", first)
	}
}
