package activities

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/testsuite"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/config"
)

// Two runs on one worker that differ in any option that changes a backend
// get their own backend, opened with their own options; identical options
// share one.
func TestBackendCacheKeyCoversEveryOption(t *testing.T) {
	base := config.Model{Spec: "openai:http://127.0.0.1:1", Name: "m", Flavor: "vllm", ChatFormat: "qa",
		APIKeyEnv: "KEY_A", Concurrency: 4, TimeoutSeconds: 30, MaxRetries: 2}
	for name, change := range map[string]func(*config.Model){
		"spec":            func(m *config.Model) { m.Spec = "openai:http://127.0.0.1:2" },
		"name":            func(m *config.Model) { m.Name = "other" },
		"flavor":          func(m *config.Model) { m.Flavor = "llama-server" },
		"chat_format":     func(m *config.Model) { m.ChatFormat = "chatml" },
		"api_key_env":     func(m *config.Model) { m.APIKeyEnv = "KEY_B" },
		"strict_context":  func(m *config.Model) { m.StrictContext = true },
		"concurrency":     func(m *config.Model) { m.Concurrency = 16 },
		"timeout_seconds": func(m *config.Model) { m.TimeoutSeconds = 300 },
		"max_retries":     func(m *config.Model) { m.MaxRetries = 7 },
	} {
		t.Run(name, func(t *testing.T) {
			var opened []registry.Options
			a := New(zerolog.Nop())
			a.OpenBackend = func(spec string, o registry.Options) (backends.Backend, error) {
				opened = append(opened, o)
				return &countingBackend{}, nil
			}
			variant := base
			change(&variant)
			b1, release1, err := a.backend("r1", base)
			if err != nil {
				t.Fatal(err)
			}
			defer release1()
			b2, release2, err := a.backend("r2", variant)
			if err != nil {
				t.Fatal(err)
			}
			defer release2()
			if b1 == b2 || len(opened) != 2 {
				t.Fatalf("%s differs but the second run got the first run's backend (%d opened)", name, len(opened))
			}
			if want := backendOptions(variant); opened[1] != want {
				t.Fatalf("second backend opened with %+v, want %+v", opened[1], want)
			}
			b3, release3, err := a.backend("r2", variant)
			if err != nil {
				t.Fatal(err)
			}
			defer release3()
			if b3 != b2 || len(opened) != 2 {
				t.Fatalf("identical options opened a new backend (%d opened)", len(opened))
			}
		})
	}
}

// The cache never drops what is in use, closes what it drops, and keeps at
// most keep idle entries, dropping the least recently used first.
func TestCacheBoundsIdleEntriesAndClosesThem(t *testing.T) {
	var closed []string
	c := newCache(2, func(v string) { closed = append(closed, v) })
	load := func(v string) func() (string, error) { return func() (string, error) { return v, nil } }
	_, relA, _ := c.acquire("a", "r1", load("a"))
	_, relB, _ := c.acquire("b", "r2", load("b"))
	_, relC, _ := c.acquire("c", "r3", load("c"))
	if c.len() != 3 || len(closed) != 0 {
		t.Fatalf("entries in use were dropped: %d cached, closed %v", c.len(), closed)
	}
	relB()
	relA()
	if c.len() != 2 || fmt.Sprint(closed) != "[b]" {
		t.Fatalf("after releases: %d cached, closed %v; want b (least recently used) closed", c.len(), closed)
	}
	if v, err := c.get("a", "r4", load("reloaded")); err != nil || v != "a" {
		t.Fatalf("cached a = %q, %v", v, err)
	}
	relC()
	// a is used by r1 and r4: forgetting r1 keeps it, forgetting r4 drops it.
	c.forget("r1")
	if c.len() != 2 {
		t.Fatalf("forget r1 dropped an entry r4 still uses: %d cached", c.len())
	}
	c.forget("r4")
	c.forget("r3")
	if c.len() != 0 || fmt.Sprint(closed) != "[b a c]" {
		t.Fatalf("after forgetting every run: %d cached, closed %v", c.len(), closed)
	}
	// A failed load is not kept: the next acquire tries again.
	if _, err := c.get("x", "r5", func() (string, error) { return "", fmt.Errorf("boom") }); err == nil {
		t.Fatal("load error lost")
	}
	if v, err := c.get("x", "r5", load("x")); err != nil || v != "x" {
		t.Fatalf("after a failed load: %q, %v", v, err)
	}
}

// Concurrent callers of one key load it once.
func TestCacheLoadsOnce(t *testing.T) {
	c := newCache[int](1, nil)
	var loads atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.get("k", "r", func() (int, error) {
				loads.Add(1)
				time.Sleep(10 * time.Millisecond)
				return 1, nil
			})
		}()
	}
	wg.Wait()
	if loads.Load() != 1 {
		t.Fatalf("loaded %d times", loads.Load())
	}
}

// modelCopies writes n copies of the tiny GGUF model, each with distinct
// bytes (a different tail of padding), so no two runs share a file.
func modelCopies(t testing.TB, n int) []string {
	data, err := os.ReadFile("../testdata/models/tiny-llama/tiny-llama.gguf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("model-%02d.gguf", i))
		if err := os.WriteFile(paths[i], append(slices.Clip(data), bytes.Repeat([]byte{byte(i)}, 32*(i+1))...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// openCounter opens models through the registry and counts those open.
type openCounter struct {
	open, peak atomic.Int32
}

type countedBackend struct {
	backends.Backend
	c    *openCounter
	once sync.Once
}

func (b *countedBackend) Close() error {
	b.once.Do(func() { b.c.open.Add(-1) })
	return b.Backend.Close()
}

func (c *openCounter) opener(spec string, o registry.Options) (backends.Backend, error) {
	b, err := registry.Open(spec, o)
	if err != nil {
		return nil, err
	}
	if n := c.open.Add(1); n > c.peak.Load() {
		c.peak.Store(n)
	}
	return &countedBackend{Backend: b, c: c}, nil
}

// servedRun runs one run's stages on acts: Prepare, Dedup and Infer of every
// shard, then Score and Aggregate when whole (a worker serving both queues),
// else stopping after Infer (an inference worker never sees the CPU stages).
func servedRun(t testing.TB, env *testsuite.TestActivityEnvironment, acts *Activities, run, model, storeDir string, whole bool) {
	data, _ := filepath.Abs("../testdata/data")
	cfg := fmt.Sprintf(`model: {spec: "gguf:%s", id: %s, chat_format: qa}
store: {uri: %s}
run: {shard_size: 2, checkpoint_every: 2, bootstrap_resamples: 50}
axes:
  knowledge:
    scoring_mode: cloze
    probes: [unanswerable]
    datasets:
      - {name: g, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 4}
`, model, run, storeDir, data)
	r := inferAxis(t, env, acts, run, cfg, "knowledge")
	if !whole {
		return
	}
	plan, ref := r.plan, r.ref
	v, err := env.ExecuteActivity(acts.Score, ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: "knowledge"}, Shards: r.shards})
	if err != nil {
		t.Fatal(err)
	}
	var out AxisOutcome
	v.Get(&out)
	if _, err := env.ExecuteActivity(acts.Aggregate, AggregateInput{RunRef: ref, Plan: plan, Outcomes: []AxisOutcome{out}}); err != nil {
		t.Fatal(err)
	}
}

// A worker that serves 20 runs of 20 different GGUF models in a row ends
// with at most keepBackends models open: an inference worker, which never
// sees a run end, by dropping the least recently used idle model; a worker
// serving whole runs by closing a run's model when the run aggregates.
func TestWorkerServingTwentyModelsKeepsFewOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("20 runs of the tiny model")
	}
	models := modelCopies(t, 20)
	for _, whole := range []bool{false, true} {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		acts := New(zerolog.Nop())
		var count openCounter
		acts.OpenBackend = count.opener
		acts.RegisterCPU(env)
		acts.RegisterInference(env)
		store := t.TempDir()
		for i, m := range models {
			servedRun(t, env, acts, fmt.Sprintf("run-%02d", i), m, store, whole)
			if n := int(count.open.Load()); n > keepBackends {
				t.Fatalf("whole=%v: %d models open after run %d, want at most %d", whole, n, i+1, keepBackends)
			}
		}
		open, manifests, pools := int(count.open.Load()), acts.manifests.len(), acts.pools.len()
		t.Logf("whole runs=%v: after 20 runs %d models open (peak %d), %d manifests, %d probe pools, %d corpus indexes cached",
			whole, open, count.peak.Load(), manifests, pools, acts.corpora.len())
		if whole && (open != 0 || manifests != 0 || pools != 0) {
			t.Fatalf("every run aggregated, yet %d models, %d manifests, %d pools are still cached", open, manifests, pools)
		}
		if !whole && (manifests > keepManifest || pools > keepPools) {
			t.Fatalf("%d manifests, %d pools cached; bounds are %d, %d", manifests, pools, keepManifest, keepPools)
		}
		acts.Close()
		if n := count.open.Load(); n != 0 {
			t.Fatalf("Close left %d models open", n)
		}
	}
}
