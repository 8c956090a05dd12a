package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// writeBoardRun writes a finished run's result.json under root/runs/run,
// enough for `leaderboard append`.
func writeBoardRun(t *testing.T, root, run, model string, ms float64) string {
	t.Helper()
	dir := filepath.Join(root, "runs", run)
	ax := runfiles.AxisReport{Weight: 1, Tier: "public", Discriminates: true}
	ax.Score = &ms
	res := runfiles.Result{RunID: run, ModelID: model, BenchVersion: "glossobench-v1", ConfigHash: "c0ffee",
		Axes: map[string]runfiles.AxisReport{"knowledge": ax}}
	res.Summary.MSPublic = &ms
	b, _ := json.Marshal(res)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLeaderboardShowSeesARehashedNewestRow: the newest row is not named by
// any later slot, so an edit that also re-hashes its object and repoints its
// slot passed the chain check (show printed the edited ms_public with exit
// 0). The row's hash kept in its run's folder (anchors/) now tells the edit.
func TestLeaderboardShowSeesARehashedNewestRow(t *testing.T) {
	root := t.TempDir()
	for i, m := range []string{"m0", "m1"} {
		dir := writeBoardRun(t, root, m+"-run", m, 0.4+0.1*float64(i))
		runOK(t, leaderboardMain, "append", dir)
	}
	out := runOK(t, leaderboardMain, "show", "--store", root)
	wantOutput(t, out, "0.5000")
	if strings.Contains(out, "warning") {
		t.Errorf("an anchored board warns:\n%s", out)
	}

	// The edit: row 1's fields changed, its object re-hashed under the new
	// name, its slot repointed at it.
	boardDir := filepath.Join(root, "leaderboard", "ms", "v1")
	slots, _ := filepath.Glob(filepath.Join(boardDir, "rows", "000001-*.json"))
	if len(slots) != 1 {
		t.Fatalf("slots %q", slots)
	}
	var sl struct {
		RowSHA256 string `json:"row_sha256"`
	}
	readJSON(t, slots[0], &sl)
	old := filepath.Join(boardDir, "by-hash", sl.RowSHA256+".json")
	data := []byte(readFile(t, old))
	edited := bytes.Replace(data, []byte(`"ms":0.5`), []byte(`"ms":0.9383`), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("row 1 holds no ms 0.5: %s", data)
	}
	sum := sha256.Sum256(edited)
	hexSum := hex.EncodeToString(sum[:])
	os.WriteFile(filepath.Join(boardDir, "by-hash", hexSum+".json"), edited, 0o644)
	os.Remove(old)
	os.WriteFile(slots[0], []byte(`{"row_sha256":"`+hexSum+`"}`), 0o644)

	for _, sub := range []string{"show", "verify"} {
		code, out, errs := runCmd(leaderboardMain, sub, "--store", root)
		if code == 0 || strings.Contains(out, "0.9383") || !strings.Contains(errs, "rewritten after it was appended") {
			t.Errorf("%s of a re-hashed newest row: exit %d\n%s%s", sub, code, out, errs)
		}
	}
	// The untouched board verifies.
	root2 := t.TempDir()
	runOK(t, leaderboardMain, "append", writeBoardRun(t, root2, "m0-run", "m0", 0.4))
	out = runOK(t, leaderboardMain, "verify", "--store", root2)
	wantOutput(t, out, "1 rows, chain intact, no row differs from its run's anchor")
}

// TestLeaderboardShowNamesUnanchoredRows: a row whose run keeps no anchor
// (appended before anchors) is shown, with a warning naming it.
func TestLeaderboardShowNamesUnanchoredRows(t *testing.T) {
	root := t.TempDir()
	dir := writeBoardRun(t, root, "m0-run", "m0", 0.4)
	runOK(t, leaderboardMain, "append", dir)
	os.RemoveAll(filepath.Join(dir, "anchors"))
	out := runOK(t, leaderboardMain, "show", "--store", root)
	wantOutput(t, out, "warning: 1 of 1 rows are not anchored", "row 0 (m0): run m0-run in file:"+root+" has no anchor for it", "0.4000")
	// A row whose run store is gone is named, and not created by reading.
	gone := filepath.Join(t.TempDir(), "gone")
	dir = writeBoardRun(t, gone, "m1-run", "m1", 0.5)
	runOK(t, leaderboardMain, "append", dir, "--store", root)
	os.RemoveAll(gone)
	out = runOK(t, leaderboardMain, "show", "--store", root)
	wantOutput(t, out, "warning: 2 of 2 rows are not anchored", "row 1 (m1): run store file:"+gone+" cannot be opened")
	if _, err := os.Stat(gone); err == nil {
		t.Errorf("show created the gone run store %s", gone)
	}
}
