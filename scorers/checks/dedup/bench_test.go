package dedup

import (
	"testing"

	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
)

// BenchmarkNewIndex50k indexes the 50,000 items of the synthetic benchmark
// (the screening benchmarks are infra/corpus's).
func BenchmarkNewIndex50k(b *testing.B) {
	items, _ := deduptest.Synth(1, 50000, 64<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := NewIndex(items, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
