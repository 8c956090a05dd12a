package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers/chrf"
)

const chrfData = "../../testdata/chrf/"

// The command's corpus score equals the golden chrF++ value (73.43..., from
// testdata/chrf/make_golden.py) printed at sacrebleu's default width.
func TestChrfCommandText(t *testing.T) {
	code, out, errOut := runCmd(chrfMain, "--hyp", chrfData+"hyps.txt", "--ref", chrfData+"refs.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "chrF2++|nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:" + chrf.SacrebleuVersion + " = "
	if !strings.HasPrefix(out, want) {
		t.Fatalf("output %q, want prefix %q", out, want)
	}
	code, out, _ = runCmd(chrfMain, "--hyp", chrfData+"hyps.txt", "--ref", chrfData+"refs.txt", "--ref", chrfData+"refs2.txt", "--word-order", "0", "--sentence")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 41 {
		t.Fatalf("exit %d, %d lines, want 41", code, len(lines))
	}
	if !strings.HasPrefix(lines[40], "chrF2|nrefs:var|") || !strings.HasPrefix(lines[5], "chrF2|nrefs:1|") || !strings.HasPrefix(lines[0], "chrF2|nrefs:2|") {
		t.Errorf("nrefs in signatures: %q / %q / %q", lines[0], lines[5], lines[40])
	}
}

func TestChrfCommandJSON(t *testing.T) {
	code, out, errOut := runCmd(chrfMain, "--hyp", chrfData+"hyps.txt", "--ref", chrfData+"refs.txt", "--json", "--width", "4", "--sentence")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Name      string    `json:"name"`
		Score     float64   `json:"score"`
		Signature string    `json:"signature"`
		NW        string    `json:"nw"`
		Version   string    `json:"version"`
		Sentences []float64 `json:"sentences"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	hyps := strings.Split(strings.TrimSuffix(readFile(t, chrfData+"hyps.txt"), "\n"), "\n")
	refs := strings.Split(strings.TrimSuffix(readFile(t, chrfData+"refs.txt"), "\n"), "\n")
	want := chrf.New(chrf.ChrFPlusPlus).Corpus(hyps, [][]string{refs})
	if got.Name != "chrF2++" || got.NW != "2" || got.Version != chrf.SacrebleuVersion || len(got.Sentences) != 40 {
		t.Errorf("got %+v", got)
	}
	if d := got.Score - want.Score; d > 5e-5 || d < -5e-5 {
		t.Errorf("score %v, want %v", got.Score, want.Score)
	}
}

func TestChrfCommandErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.txt")
	emptyRef := filepath.Join(dir, "empty.txt")
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(short, []byte("a\nb\n"), 0o644)
	os.WriteFile(emptyRef, []byte("x\n\n"), 0o644)
	os.WriteFile(bad, []byte("ok\n\xff\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hyp", chrfData + "hyps.txt", "--ref", short}, "hyps.txt has 40 lines but " + short + " has 2"},
		{[]string{"--hyp", short, "--ref", emptyRef}, "line 2: empty reference in " + emptyRef},
		{[]string{"--hyp", short, "--ref", bad}, bad + ":2: not valid UTF-8"},
		{[]string{"--hyp", short, "--ref", filepath.Join(dir, "missing.txt")}, "missing.txt"},
		{[]string{"--hyp", short}, "at least one --ref"},
		{[]string{"--hyp", short, "--ref", short, "--word-order", "-1"}, "not negative"},
	} {
		code, _, errOut := runCmd(chrfMain, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to contain %q", tc.args, code, errOut, tc.want)
		}
	}
}
