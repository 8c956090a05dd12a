package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers/dedup"
)

func captureStdout(t *testing.T, f func() int) (string, int) {
	t.Helper()
	old := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	code := f()
	w.Close()
	os.Stdout = old
	return <-done, code
}

func TestDedupCommand(t *testing.T) {
	dir := t.TempDir()
	items := filepath.Join(dir, "items.jsonl")
	os.WriteFile(items, []byte(`{"id":"k/1","axis":"knowledge","prompt":"Apakah nama gunung yang paling tinggi di Malaysia dan di negeri manakah ia terletak?"}
{"id":"k/2","axis":"knowledge","task_id":"t","prompt":"Siapakah yang menulis novel Salina dan pada tahun berapakah novel itu diterbitkan?"}
{"id":"k/3","axis":"knowledge","task_id":"t","prompt":"Nyatakan dua sebab utama hujan lebat berlaku semasa musim tengkujuh di pantai timur."}
{"id":"m/1","axis":"mt","prompt":"Selamat pagi"}
`), 0o644)
	os.MkdirAll(filepath.Join(dir, "corpus", "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "corpus", "a.txt"), []byte("Pengenalan.\n\nSOALAN: Siapakah yang menulis  novel Salina dan pada tahun berapakah novel itu diterbitkan? Jawapan: A. Samad Said.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "corpus", "sub", "b.jsonl"), []byte(`{"text":"selamat   PAGI"}`+"\n"), 0o644)

	out, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", items, "--corpus", filepath.Join(dir, "corpus"), "--json"})
	})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var rep dedup.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Items != 4 || rep.Kept != 1 || rep.Dropped != 3 || len(rep.Corpus) != 2 || len(rep.Corpus[0].SHA256) != 64 {
		t.Fatalf("report: %+v", rep)
	}
	if want := dedup.KeptSHA256([]string{"k/1"}); rep.KeptSHA256 != want {
		t.Fatalf("kept sha %s, want %s", rep.KeptSHA256, want)
	}
	kinds := map[string]string{}
	for _, d := range rep.Drops {
		kinds[d.ItemID] = d.Kind
	}
	if kinds["k/2"] != "exact" || kinds["k/3"] != "task" || kinds["m/1"] != "whole" {
		t.Fatalf("drops %v", kinds)
	}

	text, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", items, filepath.Join(dir, "corpus", "*.txt")})
	})
	if code != 0 || !strings.Contains(text, "kept 2, dropped 2") || !strings.Contains(text, "task t: k/2 matched") {
		t.Fatalf("exit %d, text report:\n%s", code, text)
	}

	// Errors: exit 1 with a message naming the file; usage errors exit 2.
	os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{\"id\":\"x\"}\n"), 0o644)
	if _, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", filepath.Join(dir, "bad.jsonl"), "--corpus", filepath.Join(dir, "corpus")})
	}); code != 1 {
		t.Errorf("bad items: exit %d", code)
	}
	if _, code := captureStdout(t, func() int { return runDedup([]string{"--items", items}) }); code != 2 {
		t.Errorf("no corpus: exit %d", code)
	}
	if _, code := captureStdout(t, func() int {
		return runDedup([]string{"--items", items, "--corpus", filepath.Join(dir, "nothing*")})
	}); code != 1 {
		t.Errorf("missing corpus: exit %d", code)
	}
}
