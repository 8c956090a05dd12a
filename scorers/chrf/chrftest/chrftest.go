// Package chrftest reads the chrF reference data of testdata/chrf (written
// by testdata/chrf/make_golden.py) for the tests of chrf and of the NLG axis.
package chrftest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Path is the file name of testdata/chrf, wherever the test runs.
func Path(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "chrf", name)
}

// Lines returns the lines of testdata/chrf/name (hyps.txt, refs.txt, refs2.txt).
func Lines(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(Path(name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// Config is the chrF configuration of a golden record.
type Config struct {
	Name         string `json:"name"`
	NC           int    `json:"nc"`
	NW           int    `json:"nw"`
	Beta         int    `json:"beta"`
	LC           bool   `json:"lc"`
	KeepSpace    bool   `json:"keep_space"`
	EpsSmoothing bool   `json:"eps_smoothing"`
}

// Record is one line of golden.jsonl: a configuration's corpus score and
// statistics over hyps.txt against refs.txt (1ref) or refs.txt and
// refs2.txt (2ref), and its sentence scores.
type Record struct {
	Config   Config    `json:"config"`
	Refs     string    `json:"refs"`
	Corpus   float64   `json:"corpus"`
	Stats    []int     `json:"stats"`
	Sentence []float64 `json:"sentence"`
}

// Golden reads golden.jsonl.
func Golden(t testing.TB) []Record {
	t.Helper()
	var out []Record
	for i, line := range Lines(t, "golden.jsonl") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("golden.jsonl:%d: %v", i+1, err)
		}
		out = append(out, r)
	}
	return out
}
