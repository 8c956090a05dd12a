package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/sigtest"
)

func itemLines(axis string, scores ...float64) string {
	var b strings.Builder
	for i, s := range scores {
		fmt.Fprintf(&b, "{\"axis\":%q,\"item_id\":\"%s/%d\",\"score\":%v}\n", axis, axis, i, s)
	}
	return b.String()
}

func TestSigtest(t *testing.T) {
	var a, b []float64
	for i := range 200 {
		a = append(a, float64(i%5/4))     // 0.2
		b = append(b, float64((i%5+1)/5)) // 0.2, on other items
	}
	var strongA, strongB []float64
	for i := range 300 {
		strongA = append(strongA, float64(i%10/3%2)) // mostly 1s
		strongB = append(strongB, 0)
	}
	aPath := writeTemp(t, "a.jsonl", itemLines("knowledge", strongA...)+itemLines("nlu", a...)+"{\"axis\":\"nlu\",\"item_id\":\"extra\",\"score\":1}\n")
	bPath := writeTemp(t, "b.jsonl", itemLines("knowledge", strongB...)+"\n"+itemLines("nlu", b...)+itemLines("mt", 0.5))
	out := filepath.Join(t.TempDir(), "s.json")
	stdout := runOK(t, sigtestMain, aPath, bPath, "--out", out, "--weights", "nlu=3")
	wantOutput(t, stdout, "knowledge", "nlu", "MS", "1 item(s) only A scored", "axis mt only in B")
	var rep sigtest.Report
	readJSON(t, out, &rep)
	k, n := rep.Axes[0], rep.Axes[1]
	if k.Name != "knowledge" || k.N != 300 || k.P > 0.001 || k.Lo <= 0 {
		t.Errorf("knowledge: %+v", k)
	}
	if n.Name != "nlu" || n.N != 200 || n.Delta != 0 || n.P < 0.9 {
		t.Errorf("nlu (equal means on shared items): %+v", n)
	}
	if want := (k.Delta + 3*n.Delta) / 4; !near(rep.MS.Delta, want) || rep.MS.N != 500 {
		t.Errorf("MS %+v, want delta %v", rep.MS, want)
	}
	// Same flags, same numbers.
	out2 := filepath.Join(t.TempDir(), "s2.json")
	runCmd(sigtestMain, "--a", aPath, "--b", bPath, "--out", out2, "--weights", "nlu=3")
	if readFile(t, out) != readFile(t, out2) {
		t.Error("two runs with one seed differ")
	}
}

func TestSigtestErrors(t *testing.T) {
	good := writeTemp(t, "a.jsonl", itemLines("nlu", 1, 0, 1))
	cases := []struct{ name, b, want string }{
		// One reader error shows it reaches stderr with its file and line;
		// the reader's other errors are tested in infra/results/inputs.
		{"missing score", "\n" + `{"axis":"nlu","item_id":"nlu/0"}`, "b.jsonl:2: field score is missing"},
		{"no shared", itemLines("mt", 1), "share no scored item"},
	}
	for _, c := range cases {
		b := writeTemp(t, "b.jsonl", c.b)
		code, _, stderr := runCmd(sigtestMain, good, b)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", c.name, code, stderr, c.want)
		}
	}
	if code, _, stderr := runCmd(sigtestMain, good, good, "--weights", "mt=2"); code != 1 || !strings.Contains(stderr, "mt") {
		t.Errorf("weight for a missing axis: exit %d %q", code, stderr)
	}
	if code, _, _ := runCmd(sigtestMain, good); code != 2 {
		t.Errorf("one file: exit %d, want 2 (a usage error)", code)
	}
}
