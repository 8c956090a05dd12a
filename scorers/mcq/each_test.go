package mcq

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
)

// Each hands out exactly Load's items, in Load's order, and stops at the
// first error of the callback, which it returns unchanged.
func TestEachStreamsLoadsItems(t *testing.T) {
	cfg := scorers.AxisConfig{BaseDir: data, Datasets: []scorers.DatasetConfig{
		{Name: "b", Path: "belebele_ms_en/ms_belebele.jsonl", Format: "belebele", Limit: 40},
		{Name: "i", Path: "nli_indonli/id_indonli_lay_1000sample.jsonl", Format: "indonli", Limit: 25},
	}}
	ax := NewAxis("nlu")
	want, err := ax.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []scorers.Item
	if err := ax.Each(cfg, func(it scorers.Item) error { got = append(got, it); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(want) != 65 || !reflect.DeepEqual(got, want) {
		t.Fatalf("Each gave %d items, Load %d; equal: %v", len(got), len(want), reflect.DeepEqual(got, want))
	}
	stop := errors.New("the store is full")
	n := 0
	err = ax.Each(cfg, func(scorers.Item) error {
		if n++; n == 50 {
			return stop
		}
		return nil
	})
	if err != stop || n != 50 {
		t.Fatalf("Each after the callback failed on item 50: err %v, %d calls", err, n)
	}
}

// A duplicate id in a later dataset is refused while streaming, naming the
// file and line, as Load refuses it.
func TestEachRefusesDuplicateIDs(t *testing.T) {
	row := `{"question": "q", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"}` + "\n"
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte(row+row), 0o644)
	d := scorers.DatasetConfig{Name: "x", Path: p, Format: "global_mmlu"}
	cfg := scorers.AxisConfig{Datasets: []scorers.DatasetConfig{d, d}}
	n := 0
	err := NewAxis("knowledge").Each(cfg, func(scorers.Item) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), p+":1") || !strings.Contains(err.Error(), "duplicate") || n != 2 {
		t.Fatalf("err = %v after %d items, want a duplicate id at %s:1 after 2", err, n, p)
	}
}
