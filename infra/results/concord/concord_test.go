package concord

import (
	"fmt"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/stats"
)

// BenchmarkConcord50 is the budget: a 50-model concord with 10,000
// permutations, under 1 s.
func BenchmarkConcord50(b *testing.B) {
	ours := map[string]inputs.ModelScore{}
	ext := map[string]inputs.ModelScore{}
	for i := range 50 {
		id := fmt.Sprintf("model-%02d", i)
		ours[id] = inputs.ModelScore{Score: float64(i)}
		ext[id] = inputs.ModelScore{Score: float64((i * 37) % 50)}
	}
	for b.Loop() {
		rep, err := Compare(ours, ext)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := stats.SpearmanPermutation(rep.oursVec, rep.extVec, 10000, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompareRanksTiesAndNotesSmallN: tied scores share the average rank,
// the delta is external rank − ours, and three models carry the small-n
// note with the smallest possible p, 2/3!.
func TestCompareRanksTiesAndNotesSmallN(t *testing.T) {
	ours := map[string]inputs.ModelScore{"a": {Score: 1}, "b": {Score: 1}, "c": {Score: 0}, "only": {Score: 5}}
	ext := map[string]inputs.ModelScore{"a": {Score: 3}, "b": {Score: 2}, "c": {Score: 1}}
	rep, err := Compare(ours, ext)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{"a", 1, 3, 1.5, 1, -0.5}, {"b", 1, 2, 1.5, 2, 0.5}, {"c", 0, 1, 3, 3, 0}}
	if fmt.Sprint(rep.Models) != fmt.Sprint(want) || rep.N != 3 || fmt.Sprint(rep.OnlyOurs) != "[only]" {
		t.Errorf("rows %v, n %d, only ours %v; want %v", rep.Models, rep.N, rep.OnlyOurs, want)
	}
	if !strings.Contains(rep.Note, "2/3! = 0.333") {
		t.Errorf("note %q", rep.Note)
	}
	if _, err := Compare(map[string]inputs.ModelScore{"a": {}, "b": {}}, ext); err == nil || !strings.Contains(err.Error(), "only 2 shared model_ids (a, b)") {
		t.Errorf("two shared models: %v", err)
	}
}

// TestReachesHoldsTheLine: ρ computed as 0.49999999999999994 reaches 0.5,
// a ρ visibly below does not.
func TestReachesHoldsTheLine(t *testing.T) {
	if !Reaches(0.49999999999999994, RhoDivergent) || Reaches(0.4999, RhoDivergent) {
		t.Error("Reaches misreads the line")
	}
}
