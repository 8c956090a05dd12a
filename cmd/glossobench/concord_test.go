package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/concord"
)

func TestConcordReport(t *testing.T) {
	ours := writeTemp(t, "ours.csv", "model_id,score\nm1,0.81\nm2,0.74\nm3,0.66\nm4,0.52\nm5,0.40\nm6,0.33\nonly_ours,0.9\n")
	ext := writeTemp(t, "ext.csv", "m1,71.2\nm2,69.0\nm3,55.5\nm4,58.0\n\nm5,30.1\nm6,22.0\nm9,10\n")
	out := filepath.Join(t.TempDir(), "c.json")
	stdout := runOK(t, concordMain, "--scores", ours, "--external", ext, "--name", "board-x", "--out", out)
	wantOutput(t, stdout, "6 shared models", "agreement: strong", "only in ours (1): only_ours", "only in external (1): m9", "permutation p")
	var rep concord.Report
	readJSON(t, out, &rep)
	// scipy.stats.spearmanr / kendalltau(method='exact') on these six pairs;
	// Spearman's p is exact: ρ ≥ 0.9429 over 6 models means Σd² ≤ 2 (the
	// identity and 5 adjacent swaps), 6 of 720 pairings, doubled for two
	// sides: 1/60 (spearmanr's t approximation says 0.0048).
	if rep.N != 6 || !near(rep.Spearman, 0.9428571428571428) || !near(rep.SpearmanP, 1.0/60) ||
		!near(rep.Kendall, 0.8666666666666666) || !near(rep.KendallP, 0.016666666666666666) {
		t.Errorf("report %+v", rep)
	}
	// Six models: the permutation p is the exact one, nothing sampled.
	if !near(rep.PermutationP, 1.0/60) || rep.Resamples != 0 {
		t.Errorf("permutation p %v over %d", rep.PermutationP, rep.Resamples)
	}
	wantOutput(t, stdout, "exact: all 6! pairings")
	if rep.Note != "" {
		t.Errorf("six models should carry no small-n note: %q", rep.Note)
	}
	m3 := rep.Models[2]
	if m3.ModelID != "m3" || m3.RankOurs != 3 || m3.RankExternal != 4 || m3.Delta != 1 {
		t.Errorf("rank row %+v", m3)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestConcordVerdictsAndSmallN(t *testing.T) {
	ours := writeTemp(t, "ours.csv", "a,1\nb,2\nc,3\nd,4\n")
	cases := []struct {
		ext, verdict string
	}{
		{"a,10\nb,20\nc,30\nd,40\n", "strong"},   // ρ = 1
		{"a,10\nb,30\nc,20\nd,40\n", "strong"},   // ρ = 0.8
		{"a,20\nb,10\nc,40\nd,30\n", "moderate"}, // ρ = 0.6
		{"a,40\nb,30\nc,20\nd,10\n", "weak"},     // ρ = -1
	}
	for _, c := range cases {
		ext := writeTemp(t, "ext.csv", c.ext)
		code, stdout, stderr := runCmd(concordMain, "--scores", ours, "--external", ext, "--name", "x")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "agreement: "+c.verdict) {
			t.Errorf("ext %q: want %s:\n%s", c.ext, c.verdict, stdout)
		}
		if !strings.Contains(stdout, "even ρ = 1 is not significant at 0.05") {
			t.Errorf("four models: missing small-n note:\n%s", stdout)
		}
	}
}

func TestConcordErrors(t *testing.T) {
	ours := writeTemp(t, "ours.csv", "a,1\nb,2\nc,3\nd,4\n")
	cases := []struct {
		name, ext, want string
	}{
		// One reader error shows it reaches stderr with its file and line;
		// the reader's other errors are tested in infra/results/inputs.
		{"not a number", "a,1\nb,x\n", "ext.csv:2: field score"},
		{"too few shared", "a,1\nb,2\nzz,3\n", "only 2 shared model_ids"},
		{"constant", "a,1\nb,1\nc,1\nd,1\n", "constant input"},
	}
	for _, c := range cases {
		ext := writeTemp(t, "ext.csv", c.ext)
		code, _, stderr := runCmd(concordMain, "--scores", ours, "--external", ext, "--name", "x")
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and %q", c.name, code, stderr, c.want)
		}
	}
	if code, _, _ := runCmd(concordMain, "--scores", ours); code != 2 {
		t.Errorf("missing flags: exit %d, want 2 (a usage error)", code)
	}
	if code, _, stderr := runCmd(concordMain, "--scores", t.TempDir(), "--external", ours, "--name", "x"); code != 1 || !strings.Contains(stderr, "no result.json") {
		t.Errorf("empty run dir: exit %d %q", code, stderr)
	}
}
