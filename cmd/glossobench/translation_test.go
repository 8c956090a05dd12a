package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTranslationDelta(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "nlu"), 0o755)
	var b strings.Builder
	// 40 aligned rows: English right on all, Malay right on the first 30; one unpaired Malay row.
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, `{"item_id":"belebele_en/%d","score":1}`+"\n", i)
		ms := 0
		if i < 30 {
			ms = 1
		}
		fmt.Fprintf(&b, `{"item_id":"belebele_ms/%d","score":%d}`+"\n", i, ms)
	}
	b.WriteString(`{"item_id":"belebele_ms/99","score":1}` + "\n")
	os.WriteFile(filepath.Join(dir, "nlu", "scores.jsonl"), []byte(b.String()), 0o644)
	d, err := translationDeltaOf(dir, "nlu", "belebele_en", "belebele_ms", 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pairs != 40 || d.Unpaired != 1 || d.ScoreOrig != 1 || d.ScoreTrans != 0.75 || d.Delta != -0.25 {
		t.Fatalf("%+v", d)
	}
	if d.CI95[0] > -0.25 || d.CI95[1] < -0.25 || d.CI95[1] >= 0 {
		t.Fatalf("CI %v should bracket -0.25 and exclude 0", d.CI95)
	}
	os.WriteFile(filepath.Join(dir, "nlu", "scores.jsonl"), []byte(`{"item_id": 3`+"\n"), 0o644)
	if _, err := translationDeltaOf(dir, "nlu", "a", "b", 1); err == nil || !strings.Contains(err.Error(), "scores.jsonl:1") {
		t.Fatalf("malformed line: %v", err)
	}
}
