package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
)

var (
	benchOnce  sync.Once
	benchIdx   *dedup.Index
	benchData  []byte
	benchItems []scorers.Item

	bench444Once sync.Once
	bench444Idx  *dedup.Index
	bench444Data []byte
)

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		benchItems, benchData = deduptest.Synth(1, 50000, 64<<20)
		var err error
		benchIdx, err = dedup.NewIndex(benchItems, dedup.Options{})
		if err != nil {
			panic(err)
		}
	})
}

// bench444Setup is the quick start's scale: 444 items (the needle count
// of the ripgrep comparison in testdata/dedup/README.md).
func bench444Setup(b *testing.B) {
	bench444Once.Do(func() {
		var items []scorers.Item
		items, bench444Data = deduptest.Synth(1, 444, 64<<20)
		var err error
		bench444Idx, err = dedup.NewIndex(items, dedup.Options{})
		if err != nil {
			panic(err)
		}
	})
}

func reportCPU(b *testing.B, start time.Duration, n int) {
	if d := CPUTime() - start; d > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/1e6/d.Seconds(), "MB/cpu-s")
	}
}

func memOpener(data []byte) Opener {
	return func(ctx context.Context, _ Source, off, _ int64) (io.ReadCloser, int64, error) {
		return io.NopCloser(bytes.NewReader(data[off:])), int64(len(data)), nil
	}
}

// BenchmarkScan: one core, 64 MB of synthetic corpus in memory against
// 50,000 indexed items.
func BenchmarkScan(b *testing.B) {
	benchSetup(b)
	src := Source{URI: "mem", Size: int64(len(benchData)), Format: FormatText}
	sc := Scanner{Index: benchIdx, Open: memOpener(benchData)}
	b.SetBytes(int64(len(benchData)))
	b.ResetTimer()
	t0 := CPUTime()
	defer reportCPU(b, t0, len(benchData))
	for i := 0; i < b.N; i++ {
		res, err := sc.ScanShard(context.Background(), Shard{Source: src, End: src.Size}, Checkpoint{}, nil)
		if err != nil || len(res.Matches) == 0 {
			b.Fatal(err, len(res.Matches))
		}
	}
}

// BenchmarkScan444: BenchmarkScan with 444 indexed items.
func BenchmarkScan444(b *testing.B) {
	bench444Setup(b)
	src := Source{URI: "mem", Size: int64(len(bench444Data)), Format: FormatText}
	sc := Scanner{Index: bench444Idx, Open: memOpener(bench444Data)}
	b.SetBytes(int64(len(bench444Data)))
	b.ResetTimer()
	t0 := CPUTime()
	defer reportCPU(b, t0, len(bench444Data))
	for i := 0; i < b.N; i++ {
		if _, err := sc.ScanShard(context.Background(), Shard{Source: src, End: src.Size}, Checkpoint{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanParallel splits the corpus into 4 MB shards screened by
// GOMAXPROCS workers; run with -cpu 1,2,4 to see the scaling.
func BenchmarkScanParallel(b *testing.B) {
	benchSetup(b)
	src := Source{URI: "mem", Size: int64(len(benchData)), Format: FormatText}
	sc := Scanner{Index: benchIdx, Open: memOpener(benchData)}
	shards := Plan([]Source{src}, 4<<20)
	b.SetBytes(int64(len(benchData)))
	b.ResetTimer()
	t0 := CPUTime()
	defer reportCPU(b, t0, len(benchData))
	for i := 0; i < b.N; i++ {
		ms, _, _, err := sc.ScanAll(context.Background(), shards, runtime.GOMAXPROCS(0))
		if err != nil || len(ms) == 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanJSONL: the same documents as JSONL lines with a text field
// among other fields (bytes counted are the JSONL bytes).
func BenchmarkScanJSONL(b *testing.B) {
	benchSetup(b)
	var buf bytes.Buffer
	for i, doc := range bytes.Split(benchData, []byte("\n\n")) {
		if len(doc) == 0 {
			continue
		}
		line, _ := json.Marshal(map[string]any{"id": i, "url": "https://example.com/" + fmt.Sprint(i), "text": string(doc)})
		buf.Write(line)
		buf.WriteByte('\n')
	}
	data := buf.Bytes()
	src := Source{URI: "mem", Size: int64(len(data)), Format: FormatJSONL, TextField: "text"}
	sc := Scanner{Index: benchIdx, Open: memOpener(data)}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	t0 := CPUTime()
	defer reportCPU(b, t0, len(data))
	for i := 0; i < b.N; i++ {
		res, err := sc.ScanShard(context.Background(), Shard{Source: src, End: src.Size}, Checkpoint{}, nil)
		if err != nil || len(res.Matches) == 0 {
			b.Fatal(err)
		}
	}
}
