package concord

import (
	"fmt"
	"math"
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

// TestSmallNPValuesAreExact: four models in the same order are ρ = τ = 1
// with the exact two-sided p 2/4! (the t approximation printed p = 0), and
// three with 2/3!; concord's permutation p is the same exact number.
func TestSmallNPValuesAreExact(t *testing.T) {
	for _, n := range []int{3, 4} {
		ours := map[string]inputs.ModelScore{}
		ext := map[string]inputs.ModelScore{}
		for i := range n {
			id := fmt.Sprintf("m%d", i)
			ours[id] = inputs.ModelScore{Score: float64(i)}
			ext[id] = inputs.ModelScore{Score: float64(10 * i)}
		}
		rep, err := Concord(ours, ext, "x", 1000, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := 2 / stats.Factorial(n)
		if math.Abs(rep.Spearman-1) > 1e-12 || rep.SpearmanP != want || rep.KendallP != want || rep.PermutationP != want || rep.Resamples != 0 {
			t.Errorf("n=%d: ρ %v p %v, τ p %v, permutation p %v over %d; want p %v exact", n, rep.Spearman, rep.SpearmanP,
				rep.KendallP, rep.PermutationP, rep.Resamples, want)
		}
		if !strings.HasPrefix(rep.PMethod, "exact") {
			t.Errorf("n=%d: p method %q", n, rep.PMethod)
		}
	}
}

// TestLowerIsBetterRanksItsWay: a HELM column marked lower_is_better (an
// inference time) ranks its smallest value first; the same order as ours
// is then full agreement, not ρ = -1, and the report says each direction.
func TestLowerIsBetterRanksItsWay(t *testing.T) {
	ours := map[string]inputs.ModelScore{"a": {Score: 0.9}, "b": {Score: 0.5}, "c": {Score: 0.1}, "d": {Score: 0.3}}
	ext := map[string]inputs.ModelScore{}
	for id, secs := range map[string]float64{"a": 1.2, "b": 3.4, "c": 9.9, "d": 5.0} {
		ext[id] = inputs.ModelScore{Score: secs, LowerIsBetter: true}
	}
	rep, err := Compare(ours, ext)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.Spearman-1) > 1e-12 || math.Abs(rep.Kendall-1) > 1e-12 || rep.ExternalDirection != "lower is better" || rep.OursDirection != "higher is better" {
		t.Errorf("ρ %v τ %v directions %q/%q", rep.Spearman, rep.Kendall, rep.OursDirection, rep.ExternalDirection)
	}
	if r := rep.Models[0]; r.ModelID != "a" || r.External != 1.2 || r.RankExternal != 1 {
		t.Errorf("first row %+v: want a, 1.2 s, external rank 1", r)
	}
	var b strings.Builder
	rep.Print(&b)
	if !strings.Contains(b.String(), "rank direction: ours higher is better, external lower is better") {
		t.Errorf("printout lacks the rank direction:\n%s", b.String())
	}
}
