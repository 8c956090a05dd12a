package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/activities/fakerun"
	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/results/release"
	"github.com/glossobench/glossobench/infra/store"
)

func fakeRunDir(t *testing.T, storeDir string, o fakerun.Options) string {
	t.Helper()
	dir, err := fakerun.WriteRun(storeDir, o)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReleaseThenRescore(t *testing.T) {
	runDir := fakeRunDir(t, t.TempDir(), fakerun.Options{})
	bundle := filepath.Join(t.TempDir(), "bundle")
	code, out, errs := runCmd(releaseMain, runDir, "--out", bundle)
	if code != 0 {
		t.Fatalf("release exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "most restrictive dataset licence: CC-BY-NC-SA-4.0 (of the known licences; 4 unknown)\n") {
		t.Errorf("release output:\n%s", out)
	}
	// The fake run's config states no licence for global_mmlu_ms and there is
	// no SOURCE note beside it: unknown, never guessed from the name.
	if !strings.Contains(errs, "warning: dataset global_mmlu_ms (axis knowledge): licence unknown (the config states no licence") {
		t.Errorf("release warnings:\n%s", errs)
	}
	code, out, errs = runCmd(rescoreMain, bundle)
	if code != 0 || !strings.Contains(out, "result: reproduced") || strings.Contains(out, release.StatusDiffers) {
		t.Fatalf("rescore exit %d:\n%s%s", code, out, errs)
	}
	for _, axis := range []string{"knowledge", "nlu", "nlg", "if", "cultural", "ms_public", "ms_pooled"} {
		if !strings.Contains(out, axis) {
			t.Errorf("rescore does not list %s", axis)
		}
	}

	// Move one nlg item's statistics: the corpus chrF++ no longer matches.
	items := filepath.Join(bundle, release.ItemsFile)
	data, _ := os.ReadFile(items)
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"axis":"nlg"`) {
			lines[i] = strings.Replace(l, `"chrf_stats":[`, `"chrf_stats":[1000,`, 1)
			lines[i] = strings.Replace(lines[i], `,`+lastNumber(lines[i])+`]`, `]`, 1)
			break
		}
	}
	data = []byte(strings.Join(lines, "\n"))
	os.WriteFile(items, data, 0o644)
	var m release.Manifest
	mdata, _ := os.ReadFile(filepath.Join(bundle, release.ManifestFile))
	json.Unmarshal(mdata, &m)
	sum := sha256.Sum256(data)
	m.ItemsSHA256 = hex.EncodeToString(sum[:])
	mdata, _ = json.Marshal(&m)
	os.WriteFile(filepath.Join(bundle, release.ManifestFile), mdata, 0o644)
	code, out, _ = runCmd(rescoreMain, bundle)
	if code != 1 || !strings.Contains(out, "DIFFERS") {
		t.Errorf("tampered nlg stats: exit %d\n%s", code, out)
	}
}

// lastNumber returns the last number of the chrf_stats array on a line.
func lastNumber(l string) string {
	i := strings.Index(l, `"chrf_stats":[`)
	j := strings.Index(l[i:], "]")
	nums := strings.Split(l[i+len(`"chrf_stats":[`):i+j], ",")
	return nums[len(nums)-1]
}

func TestReleaseBadInput(t *testing.T) {
	runDir := fakeRunDir(t, t.TempDir(), fakerun.Options{})
	p := filepath.Join(runDir, "knowledge", "scores.jsonl")
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte(`{"item_id":"a","score":1}`+"\n"+`{"item_id":"b","score":true}`+"\n"), 0o644)
	code, _, errs := runCmd(releaseMain, runDir, "--out", t.TempDir())
	if code != 1 || !strings.Contains(errs, "scores.jsonl:2: field score") {
		t.Errorf("exit %d: %s", code, errs)
	}
	code, _, errs = runCmd(releaseMain, t.TempDir(), "--out", t.TempDir())
	if code != 1 || !strings.Contains(errs, "result.json") {
		t.Errorf("no result.json: exit %d: %s", code, errs)
	}
	code, _, _ = runCmd(releaseMain, runDir)
	if code != 2 {
		t.Errorf("missing --out: exit %d, want 2 (a usage error)", code)
	}
	code, _, errs = runCmd(rescoreMain, t.TempDir())
	if code != 1 || !strings.Contains(errs, "manifest.json") {
		t.Errorf("rescore of an empty folder: exit %d: %s", code, errs)
	}
}

func TestReportCommand(t *testing.T) {
	runDir := fakeRunDir(t, t.TempDir(), fakerun.Options{})
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errs := runCmd(reportMain, runDir, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, _ := os.ReadFile(out)
	if !bytes.Contains(data, []byte(`data-field="summary.ms_public"`)) {
		t.Error("report has no ms_public")
	}
	os.Chmod(filepath.Join(runDir, "result.json"), 0o644)
	os.WriteFile(filepath.Join(runDir, "result.json"), []byte("{\n \"axes\": []\n}"), 0o644)
	code, _, errs = runCmd(reportMain, runDir, "--out", out)
	if code != 1 || !strings.Contains(errs, "result.json:2: field axes") {
		t.Errorf("bad result.json: exit %d: %s", code, errs)
	}
}

func TestLeaderboardAppendShowCompare(t *testing.T) {
	st := t.TempDir()
	a := fakeRunDir(t, st, fakerun.Options{RunID: "run-a", ModelID: "org/alpha", Class: "instruct"})
	b := fakeRunDir(t, st, fakerun.Options{RunID: "run-b", ModelID: "org/beta", Class: "base", Shift: 1})
	for _, dir := range []string{a, b} {
		if code, _, errs := runCmd(leaderboardMain, "append", dir); code != 0 {
			t.Fatalf("append %s: exit %d: %s", dir, code, errs)
		}
	}
	code, _, errs := runCmd(leaderboardMain, "append", a)
	if code != 1 || !strings.Contains(errs, "refused") {
		t.Errorf("duplicate append: exit %d: %s", code, errs)
	}
	code, out, errs := runCmd(leaderboardMain, "show", "--store", st, "--class", "instruct")
	if code != 0 || !strings.Contains(out, "org/alpha") || strings.Contains(out, "org/beta") {
		t.Errorf("show instruct: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCmd(leaderboardMain, "show", "--store", st)
	if code != 0 || !strings.Contains(out, "class base") || !strings.Contains(out, "class instruct") {
		t.Errorf("show all:\n%s", out)
	}

	// A v2 board: alpha re-measured (same reasoning mode), beta in another mode.
	ctx := context.Background()
	s, err := store.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := leaderboard.Read(ctx, s, "ms", 1)
	if err != nil || len(rows) != 2 {
		t.Fatalf("v1 rows %d, %v", len(rows), err)
	}
	for _, r := range rows {
		r.Pins["bench_version"] = "glossobench-v2"
		r.AppendedAt = r.AppendedAt.Add(1)
		r.Scores["knowledge"] += 0.125
		r.MS += 0.0625
		if r.ModelID == "org/beta" {
			r.ReasoningMode = "on"
		}
		if err := leaderboard.Append(ctx, s, "ms", 2, r); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = runCmd(compareMain, "v1", "v2", "--store", st)
	if code != 0 || !strings.Contains(out, "+0.1250") || !strings.Contains(out, "+0.0625") || !strings.Contains(out, "warning: reasoning mode differs for org/beta (off vs on)") {
		t.Errorf("compare: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = runCmd(compareMain, "v1", "v2", "--store", st, "--strict-parity")
	if code != 1 || !strings.Contains(errs, "org/beta") {
		t.Errorf("compare --strict-parity: exit %d: %s", code, errs)
	}
	code, _, errs = runCmd(compareMain, "v1", "vx", "--store", st)
	if code != 1 || !strings.Contains(errs, "vx") {
		t.Errorf("bad version: exit %d: %s", code, errs)
	}
}

func TestBenchMajor(t *testing.T) {
	for v, want := range map[string]int{"glossobench-v1": 1, "glossobench-v2.3": 2, "v7": 7, "12": 12} {
		if got, err := leaderboard.BenchMajor(v); err != nil || got != want {
			t.Errorf("BenchMajor(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"", "glossobench", "glossobench-v0"} {
		if _, err := leaderboard.BenchMajor(v); err == nil {
			t.Errorf("BenchMajor(%q) accepted", v)
		}
	}
}
