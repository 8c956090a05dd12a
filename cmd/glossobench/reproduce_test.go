package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReproduceCommand: a run compared with a copy of itself reproduces
// (exit 0); a rerun whose headline left the earlier CI is non-determinism
// (exit 2), named per axis.
func TestReproduceCommand(t *testing.T) {
	earlier := filepath.Join("..", "..", "testdata", "runs", "quickstart-tiny-llama")
	if code, out, errs := runCmd(reproduceMain, earlier, earlier); code != 0 || !strings.Contains(out, "ms_public") || strings.Contains(out, "NON-DETERMINISM") {
		t.Fatalf("itself: exit %d\n%s%s", code, out, errs)
	}
	data, err := os.ReadFile(filepath.Join(earlier, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The rerun: the same pins, ms_public far outside the earlier interval.
	rerun := t.TempDir()
	s := string(data)
	i := strings.Index(s, `"ms_public":`)
	j := i + strings.IndexAny(s[i:], ",}")
	os.WriteFile(filepath.Join(rerun, "result.json"), []byte(s[:i]+`"ms_public": 0.999`+s[j:]), 0o644)
	code, out, errs := runCmd(reproduceMain, earlier, rerun)
	if code != 2 || !strings.Contains(out, "ms_public") || !strings.Contains(out, "NON-DETERMINISM") {
		t.Fatalf("drifted rerun: exit %d\n%s%s", code, out, errs)
	}
}
