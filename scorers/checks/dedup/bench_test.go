package dedup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/glossobench/glossobench/scorers"
)

// synthVocab is a pseudo-Malay vocabulary: words of 1 to 4 syllables.
func synthVocab(r *rand.Rand, n int) []string {
	syl := []string{"ka", "ma", "sa", "la", "ra", "ta", "pa", "ba", "da", "ng", "an", "in", "un", "ke", "me", "be", "pe", "te", "se", "di", "ku", "mu", "lu", "ah", "at", "nya", "kan", "lah", "per", "ber"}
	seen := map[string]bool{}
	var v []string
	for len(v) < n {
		var b strings.Builder
		for k := 1 + r.IntN(4); k > 0; k-- {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			v = append(v, w)
		}
	}
	return v
}

// synth makes nItems prompts and about size bytes of corpus paragraphs
// (blank-line separated, 10 to 150 words, with punctuation and capitals)
// from one vocabulary; one paragraph in 5000 is a planted item.
func synth(seed uint64, nItems, size int) ([]scorers.Item, []byte) {
	r := rand.New(rand.NewPCG(seed, 99))
	vocab := synthVocab(r, 20000)
	word := func() string {
		// Zipf-like: small indexes are common.
		i := int(float64(len(vocab)) * r.Float64() * r.Float64() * r.Float64())
		return vocab[i]
	}
	sentence := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			w := word()
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			switch {
			case i == n-1:
				b.WriteString(".")
			case r.IntN(12) == 0:
				b.WriteString(", ")
			default:
				b.WriteString(" ")
			}
		}
		return b.String()
	}
	items := make([]scorers.Item, nItems)
	for i := range items {
		items[i] = scorers.Item{ID: fmt.Sprintf("synth/%d", i), Prompt: sentence(8 + r.IntN(70))}
	}
	var buf bytes.Buffer
	for buf.Len() < size {
		if r.IntN(5000) == 0 {
			buf.WriteString(items[r.IntN(nItems)].Prompt)
		} else {
			for s := 1 + r.IntN(8); s > 0; s-- {
				buf.WriteString(sentence(5 + r.IntN(20)))
				buf.WriteByte(' ')
			}
		}
		buf.WriteString("\n\n")
	}
	return items, buf.Bytes()
}

var (
	benchOnce  sync.Once
	benchIdx   *Index
	benchData  []byte
	benchItems []scorers.Item
)

func benchSetup(b *testing.B) {
	benchOnce.Do(func() {
		benchItems, benchData = synth(1, 50000, 64<<20)
		var err error
		benchIdx, err = NewIndex(benchItems, Options{})
		if err != nil {
			panic(err)
		}
	})
}

// cpuTime is the user+system CPU time of this process so far. The machine
// is shared, so wall-clock MB/s understates the engine; MB per CPU-second
// is the per-core figure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration, n int) {
	if d := cpuTime() - start; d > 0 {
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
	t0 := cpuTime()
	defer reportCPU(b, t0, len(benchData))
	for i := 0; i < b.N; i++ {
		res, err := sc.ScanShard(context.Background(), Shard{Source: src, End: src.Size}, Checkpoint{}, nil)
		if err != nil || len(res.Matches) == 0 {
			b.Fatal(err, len(res.Matches))
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
	t0 := cpuTime()
	defer reportCPU(b, t0, len(benchData))
	for i := 0; i < b.N; i++ {
		ms, _, _, err := sc.ScanAll(context.Background(), shards, runtime.GOMAXPROCS(0))
		if err != nil || len(ms) == 0 {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewIndex50k(b *testing.B) {
	benchSetup(b)
	for i := 0; i < b.N; i++ {
		if _, err := NewIndex(benchItems, Options{}); err != nil {
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
	t0 := cpuTime()
	defer reportCPU(b, t0, len(data))
	for i := 0; i < b.N; i++ {
		res, err := sc.ScanShard(context.Background(), Shard{Source: src, End: src.Size}, Checkpoint{}, nil)
		if err != nil || len(res.Matches) == 0 {
			b.Fatal(err)
		}
	}
}
