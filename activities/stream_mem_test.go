package activities

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// The CPU stages stream an axis: between a 5,000- and a 40,000-item run the
// peak live heap of Prepare, Dedup, Score and Aggregate grows by at most 256
// bytes per item (ids kept for duplicate checks and the kept-set SHA-256, a
// number per item for bootstraps; 40–175 bytes measured), never by the
// items, their answers or their item scores, which take a kilobyte or more
// each. The leakage
// audit needs every row's rating, label and source at once; its growth is
// reported, not bounded here.
func TestStagesStreamAnAxis(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of 5,000 and 40,000 items")
	}
	small, large := stageLiveHeaps(t, 5000), stageLiveHeaps(t, 40000)
	for _, stage := range []string{"prepare", "dedup", "infer", "score", "audit", "aggregate"} {
		perItem := float64(int64(large[stage])-int64(small[stage])) / 35000
		t.Logf("%-9s peak live heap %3d MiB at 5,000 items, %3d MiB at 40,000: %+.0f bytes per item",
			stage, small[stage]>>20, large[stage]>>20, perItem)
		if stage != "audit" && perItem > 256 {
			t.Errorf("%s: peak live heap grows %.0f bytes per item; the axis is held, not streamed", stage, perItem)
		}
	}
}

// stageLiveHeaps runs the stages of an n-item knowledge run in process and
// returns each stage's peak live heap (as of the GC cycles during it).
func stageLiveHeaps(t *testing.T, n int) map[string]uint64 {
	cfg := fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: 500, checkpoint_every: 100, bootstrap_resamples: 200}
axes:
  knowledge:
    scoring_mode: generate
    datasets: [{name: syn, path: %s, format: global_mmlu}]
`, t.TempDir(), synMMLU(t, n))
	env, acts, _ := newActEnv()

	peaks := map[string]uint64{}
	stage := func(name string, fn func()) { peaks[name] = peakLiveHeap(fn) }
	var ref RunRef
	var plan Plan
	stage("prepare", func() {
		v, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "m", ConfigYAML: cfg})
		if err != nil {
			t.Fatal(err)
		}
		v.Get(&plan)
		ref = RunRef{RunID: "m", StoreURI: plan.StoreURI}
	})
	var dd DedupCounts
	stage("dedup", func() {
		v, err := env.ExecuteActivity(acts.DedupCounts, ref)
		if err != nil {
			t.Fatal(err)
		}
		v.Get(&dd)
	})
	shards := dd.Axes[0].Shards
	stage("infer", func() {
		for s := range shards {
			if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "knowledge", Shard: s}); err != nil {
				t.Fatal(err)
			}
		}
	})
	var out AxisOutcome
	stage("score", func() {
		v, err := env.ExecuteActivity(acts.Score, ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: "knowledge"}, Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		v.Get(&out)
	})
	if out.Result.N != n {
		t.Fatalf("%d items scored of %d", out.Result.N, n)
	}
	stage("audit", func() {
		v, err := env.ExecuteActivity(acts.Audit, AxisInput{RunRef: ref, Axis: "knowledge"})
		if err != nil {
			t.Fatal(err)
		}
		var au AuditSummary
		v.Get(&au)
		out.Audit = &au
	})
	stage("aggregate", func() {
		if _, err := env.ExecuteActivity(acts.Aggregate, AggregateInput{RunRef: ref, Plan: plan, Outcomes: []AxisOutcome{out}}); err != nil {
			t.Fatal(err)
		}
	})
	return peaks
}

// synMMLU writes n four-choice items in the global_mmlu format and returns
// the file's path.
func synMMLU(t testing.TB, n int) string {
	p := filepath.Join(t.TempDir(), "syn.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		row, _ := json.Marshal(map[string]string{
			"sample_id": fmt.Sprintf("s/%d", i), "subject": fmt.Sprintf("subj%d", i%5), "answer": string(rune('A' + i%4)),
			"A": "satu", "B": "dua", "C": "tiga", "D": "empat",
			"question": fmt.Sprintf("Soalan nombor %d: manakah antara berikut yang paling tepat?", i),
		})
		w.Write(append(row, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// peakLiveHeap runs fn and returns the peak live heap during it, as of the
// GC cycles that ran (sampled every 2 ms, with a collection at the end so
// fn's garbage is collected and its live data counted).
func peakLiveHeap(fn func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	runtime.GC()
	peak.Store(0)
	fn()
	runtime.GC()
	time.Sleep(5 * time.Millisecond)
	close(stop)
	<-done
	return peak.Load()
}
