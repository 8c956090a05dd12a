package dedup

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
)

// BenchmarkTokenize: the tokenizer alone over 64 MB of the synthetic corpus
// (documents cut at blank lines, as the text reader cuts them), in MB per
// CPU-second: about three quarters of a scan with few items is here.
func BenchmarkTokenize(b *testing.B) {
	_, data := deduptest.Synth(1, 444, 64<<20)
	docs := bytes.Split(data, []byte("\n\n"))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	c0 := cpuNow()
	defer func() { b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuNow()-c0).Seconds(), "MB/cpu-s") }()
	var t tokenizer
	nw := 0
	for i := 0; i < b.N; i++ {
		for _, d := range docs {
			t.run(d, false)
			nw += len(t.words)
		}
	}
	b.ReportMetric(float64(nw)/float64(b.N), "words")
}

// cpuNow is this process's user+system CPU time: the machine is shared, so
// MB per CPU-second is the per-core figure.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
