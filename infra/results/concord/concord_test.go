package concord

import (
	"fmt"
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
