package leaderboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadRunDirNamesTheRunsStore: a folder <store>/runs/<run_id> gets the
// store as run_store and a store key as result_ref; a copy elsewhere gets
// its result.json's absolute path and no store, and StoreOfRunDir refuses it.
func TestReadRunDirNamesTheRunsStore(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "release", "store", "runs", "fake-run")
	rd, err := ReadRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs(filepath.Join(dir, "..", ".."))
	if rd.Major != 1 || rd.Row.RunStore != "file:"+root || rd.Row.ResultRef != "file:"+root+"/runs/fake-run/result.json" {
		t.Errorf("major %d, run_store %q, result_ref %q", rd.Major, rd.Row.RunStore, rd.Row.ResultRef)
	}
	if got, err := StoreOfRunDir(dir); err != nil || got != root {
		t.Errorf("StoreOfRunDir = %q, %v; want %q", got, err, root)
	}
	other := filepath.Join(t.TempDir(), "elsewhere")
	os.MkdirAll(other, 0o755)
	data, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	os.WriteFile(filepath.Join(other, "result.json"), data, 0o644)
	rd, err = ReadRunDir(other)
	if err != nil {
		t.Fatal(err)
	}
	if rd.Row.RunStore != "" || rd.Row.ResultRef != filepath.Join(other, "result.json") || rd.Language != "" {
		t.Errorf("run_store %q, result_ref %q, language %q", rd.Row.RunStore, rd.Row.ResultRef, rd.Language)
	}
	if _, err := StoreOfRunDir(other); err == nil || !strings.Contains(err.Error(), "is not <store>/runs/<run_id>") {
		t.Errorf("StoreOfRunDir of a stray folder: %v", err)
	}
}
