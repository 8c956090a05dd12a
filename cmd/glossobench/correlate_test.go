package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/inputs"
)

const oursJSON = `{"instrument": "glossobench-v1", "item_ids": ["belebele/1", "belebele/2"],
 "scores": [
  {"model_id": "m1", "score": 0.81},
  {"model_id": "m2", "score": 0.74},
  {"model_id": "m3", "score": 0.66},
  {"model_id": "m4", "score": 0.52},
  {"model_id": "m5", "score": 0.40},
  {"model_id": "m6", "score": 0.33}
 ]}`

func TestCorrelateExitCodes(t *testing.T) {
	ours := writeTemp(t, "ours.json", oursJSON)
	cases := []struct {
		name, ext   string
		args        []string
		code        int
		stdout, err string
	}{
		{"converged (map form)", `{"m1": 71.2, "m2": 69.0, "m3": 55.5, "m4": 58.0, "m5": 30.1, "m6": 22.0, "m9": 1}`, nil, 0, "verdict: converged", ""},
		// external ranks 3,1,2,6,4,5 against ours 1..6: Σd² = 12, ρ = 1 − 12/35 = 0.657;
		// 63 of the 720 pairings have Σd² ≤ 12, so the exact two-sided p is
		// 2·63/720 = 0.175 (spearmanr's t approximation says 0.1562).
		{"moderate (list form)", `[{"model_id":"m1","score":4},{"model_id":"m2","score":6},{"model_id":"m3","score":5},{"model_id":"m4","score":1},{"model_id":"m5","score":3},{"model_id":"m6","score":2}]`, nil, 0, "ρ = 0.6571 (p = 0.175), Kendall τ-b = 0.4667 (p = 0.2722); p-values exact (all 6! pairings)\nverdict: moderate", ""},
		{"divergent", `{"instrument":"seahelm","scores":[{"model_id":"m1","score":1},{"model_id":"m2","score":2},{"model_id":"m3","score":3},{"model_id":"m4","score":4},{"model_id":"m5","score":3.5},{"model_id":"m6","score":6}]}`, nil, 2, "verdict: divergent", ""},
		{"overlap-free, disjoint", `{"instrument":"seahelm","item_hashes":["` + inputs.HashItemID("other/1") + `"],"scores":[{"model_id":"m1","score":9},{"model_id":"m2","score":8},{"model_id":"m3","score":7}]}`,
			[]string{"--overlap-free"}, 0, "share no scored item", ""},
		{"overlap-free, shared item", `{"scores":[{"model_id":"m1","score":9},{"model_id":"m2","score":8},{"model_id":"m3","score":7,"item_ids":["belebele/2"]}]}`,
			[]string{"--overlap-free"}, 3, "", "belebele/2"},
		{"overlap-free, shared hash", `{"item_hashes":["` + strings.ToUpper(inputs.HashItemID("belebele/1")) + `"],"scores":[{"model_id":"m1","score":9},{"model_id":"m2","score":8},{"model_id":"m3","score":7}]}`,
			[]string{"--overlap-free"}, 3, "", inputs.HashItemID("belebele/1") + " (belebele/1)"},
		{"overlap-free, no items listed", `{"m1": 1, "m2": 2, "m3": 3}`, []string{"--overlap-free"}, 3, "", "cannot certify"},
	}
	for _, c := range cases {
		ext := writeTemp(t, "ext.json", c.ext)
		args := append([]string{"--ours", ours, "--external", ext}, c.args...)
		code, stdout, stderr := runCmd(correlateMain, args...)
		if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.err) {
			t.Errorf("%s: exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", c.name, code, c.code, stdout, stderr)
		}
	}
}

func TestCorrelateBadInput(t *testing.T) {
	ours := writeTemp(t, "ours.json", oursJSON)
	cases := []struct{ name, ext, want string }{
		// One reader error shows it reaches stderr with its file and line;
		// the reader's other errors are tested in infra/results/inputs.
		{"syntax", "{\"m1\": 1,\n \"m2\": }", "ext.json:2: invalid JSON"},
	}
	for _, c := range cases {
		ext := writeTemp(t, "ext.json", c.ext)
		code, _, stderr := runCmd(correlateMain, "--ours", ours, "--external", ext)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", c.name, code, stderr, c.want)
		}
	}
	if code, _, _ := runCmd(correlateMain, "--ours", ours); code != 1 {
		t.Errorf("missing --external: exit %d, want 1", code)
	}
}

// TestVerdictLinesHoldExactly: ρ exactly 0.5 and 0.7 (five models, Σd² = 10
// and 6) are on the line, not below it, though the float ρ of 0.5 comes out
// as 0.49999999999999994.
func TestVerdictLinesHoldExactly(t *testing.T) {
	ours := writeTemp(t, "ours.json", `{"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}`)
	for _, c := range []struct {
		ext, correlate, concord string
		code                    int
	}{
		{`{"a": 3, "b": 4, "c": 5, "d": 1, "e": 2}`, "verdict: moderate", "agreement: moderate", 0}, // ranks 3,2,1,5,4: ρ = 0.5
		{`{"a": 3, "b": 5, "c": 4, "d": 2, "e": 1}`, "verdict: converged", "agreement: strong", 0},  // ranks 3,1,2,4,5: ρ = 0.7
	} {
		ext := writeTemp(t, "ext.json", c.ext)
		code, stdout, stderr := runCmd(correlateMain, "--ours", ours, "--external", ext)
		if code != c.code || !strings.Contains(stdout, c.correlate) {
			t.Errorf("correlate %s: exit %d, want %d and %q\n%s%s", c.ext, code, c.code, c.correlate, stdout, stderr)
		}
		csvOurs := writeTemp(t, "ours.csv", "a,5\nb,4\nc,3\nd,2\ne,1\n")
		var m map[string]float64
		json.Unmarshal([]byte(c.ext), &m)
		var b strings.Builder
		for k, v := range m {
			fmt.Fprintf(&b, "%s,%g\n", k, v)
		}
		csvExt := writeTemp(t, "ext.csv", b.String())
		code, stdout, stderr = runCmd(concordMain, "--scores", csvOurs, "--external", csvExt, "--name", "x", "--out", filepath.Join(t.TempDir(), "c.json"))
		if code != 0 || !strings.Contains(stdout, c.concord) {
			t.Errorf("concord %s: exit %d, want %q\n%s%s", c.ext, code, c.concord, stdout, stderr)
		}
	}
}
