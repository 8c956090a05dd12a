package dedup

import (
	"bytes"
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

// BenchmarkMatcher444: the matcher and the reference (ref_test.go, the
// matcher that reads every word) on the same 64 MB of synthetic corpus
// against 444 items, documents in memory, in MB per CPU-second side by
// side: the matcher's share of a scan without the reader.
func BenchmarkMatcher444(b *testing.B) {
	items, data := deduptest.Synth(1, 444, 64<<20)
	docs := bytes.Split(data, []byte("\n\n"))
	idx, err := NewIndex(items, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ref, err := newRefIndex(items, Options{})
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, doc func([]byte, int64)) {
		b.SetBytes(int64(len(data)))
		c0 := cpuNow()
		defer func() { b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuNow()-c0).Seconds(), "MB/cpu-s") }()
		for i := 0; i < b.N; i++ {
			for _, d := range docs {
				doc(d, 0)
			}
		}
	}
	b.Run("matcher", func(b *testing.B) { run(b, NewMatcher(idx).Doc) })
	b.Run("reference", func(b *testing.B) { run(b, newRefMatcher(ref).Doc) })
}
