package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/runner/runnertest"
	"github.com/glossobench/glossobench/workflows"
)

// instant is an in-process backend that answers at once.
type instant struct{}

func (instant) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	out := make([]backends.Generation, len(reqs))
	for i, r := range reqs {
		out[i] = backends.Generation{ID: r.ID, Text: "B", FinishReason: "stop"}
	}
	return out, nil
}
func (instant) LogLikelihood(_ context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	out := make([]backends.LLResult, len(reqs))
	for i, r := range reqs {
		out[i] = backends.LLResult{ID: r.ID, LogProb: -float64(len(r.ID)%7 + i)}
	}
	return out, nil
}
func (instant) Capabilities() backends.Capabilities {
	return backends.Capabilities{LogLikelihood: true}
}
func (instant) Close() error { return nil }

// writeSynthetic writes n Global-MMLU-format items.
func writeSynthetic(t testing.TB, n int) string {
	p := filepath.Join(t.TempDir(), "synthetic.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < n; i++ {
		row, _ := json.Marshal(map[string]string{"sample_id": fmt.Sprintf("s/%d", i), "subject": fmt.Sprintf("subj%d", i%5),
			"question": fmt.Sprintf("Soalan nombor %d?", i), "A": "satu", "B": "dua", "C": "tiga", "D": "empat", "answer": string(rune('A' + i%4))})
		w.Write(append(row, '\n'))
	}
	w.Flush()
	f.Close()
	return p
}

// BenchmarkPipeline runs a 10,000-item MCQ EvalRun end to end on the embedded
// Temporal server with an instant in-process backend and reports items/s,
// the history events of the whole run (EvalRun's and its children's) per
// 10,000 items, and the events of its largest history.
func BenchmarkPipeline(b *testing.B) {
	const items = 10000
	_, c := runnertest.StartServer(b)
	startInstantWorkers(b, c)
	data := writeSynthetic(b, items)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: instant}
store: {uri: %s}
run: {shard_size: 500, checkpoint_every: 100, parallel_shards: 8, bootstrap_resamples: 200}
axes:
  knowledge:
    datasets: [{name: syn, path: %s, format: global_mmlu}]
`, b.TempDir(), data)
		id := fmt.Sprintf("bench-%d-%d", i, time.Now().UnixNano())
		start := time.Now()
		runEval(b, c, workflows.EvalRunInput{Config: cfg, RunID: id})
		el := time.Since(start)
		b.ReportMetric(items/el.Seconds(), "items/s")
		_, events := runHistories(b, c, "evalrun-"+id)
		total, most := 0, 0
		for _, n := range events {
			total, most = total+n, max(most, n)
		}
		b.ReportMetric(float64(total), "events/10k-items")
		b.ReportMetric(float64(most), "events/largest-history")
	}
}
