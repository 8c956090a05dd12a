package activities

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"

	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/metrics/metricstest"
	"github.com/glossobench/glossobench/infra/store"
)

// flakyStore fails the first checkpoint writes like a full disk, then
// stores one without confirming it (the write landed, the reply was lost).
type flakyStore struct {
	store.Store
	mu          sync.Mutex
	fails       int
	unconfirmed int
}

func (f *flakyStore) Put(ctx context.Context, key string, data []byte) error {
	if !strings.Contains(key, "/pred-") {
		return f.Store.Put(ctx, key, data)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails > 0 {
		f.fails--
		return &fs.PathError{Op: "write", Path: key, Err: syscall.ENOSPC}
	}
	if f.unconfirmed > 0 {
		f.unconfirmed--
		if err := f.Store.Put(ctx, key, data); err != nil {
			return err
		}
		return errors.New("connection reset after the write")
	}
	return f.Store.Put(ctx, key, data)
}

// A checkpoint write that fails is retried inside the attempt, so answered
// items are never sent to the model again; a write that landed without a
// reply is found on the retry and counts as written.
func TestInferRetriesCheckpointWrites(t *testing.T) {
	env, acts, b := newActEnv()
	ref := prepareRun(t, env, acts, "c", testConfig(t, t.TempDir(), ""))
	real, _ := acts.store(t.Context(), ref.StoreURI)
	flaky := &flakyStore{Store: real, fails: 2, unconfirmed: 1}
	acts.stores[ref.StoreURI] = flaky

	ok0, failed0, retried0 := checkpointCount(t, "writes", "ok"), checkpointCount(t, "writes", "error"), checkpointCount(t, "write_retries", "")
	v, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "knowledge", Shard: 0})
	if err != nil {
		t.Fatal(err)
	}
	// The metrics count 4 written objects, 3 failed writes and 3 retries.
	if ok, failed, retried := checkpointCount(t, "writes", "ok")-ok0, checkpointCount(t, "writes", "error")-failed0, checkpointCount(t, "write_retries", "")-retried0; ok != 4 || failed != 3 || retried != 3 {
		t.Errorf("checkpoint metrics: %v written, %v failed, %v retried; want 4, 3, 3", ok, failed, retried)
	}
	var r ShardResult
	v.Get(&r)
	if r.Done != 10 || flaky.fails != 0 || flaky.unconfirmed != 0 {
		t.Fatalf("result %+v; failures left %d, unconfirmed left %d", r, flaky.fails, flaky.unconfirmed)
	}
	for req, n := range b.seen {
		if n != 1 {
			t.Fatalf("request %s sent %d times", req, n)
		}
	}
	preds, parts, err := shardPredictions(t.Context(), real, "c", "knowledge", 0, 0)
	if err != nil || len(preds) != 10 || parts != 4 {
		t.Fatalf("stored %d predictions in %d objects (%v), want 10 in 4", len(preds), parts, err)
	}
}

// checkpointCount reads glossobench_checkpoint_<what>_total for predictions
// (and result, when given) from the metrics registry.
func checkpointCount(t *testing.T, what, result string) float64 {
	labels := map[string]string{"kind": "predictions"}
	if result != "" {
		labels["result"] = result
	}
	return counterSum(t, "glossobench_checkpoint_"+what+"_total", labels)
}

// counterSum adds a counter's series that carry all the given labels, as
// the metrics registry has them.
func counterSum(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() == name {
			sum += metricstest.Sum(f, labels)
		}
	}
	return sum
}

// slowBackend answers like countingBackend after a pause, and records the
// most calls it had in flight at once.
type slowBackend struct {
	countingBackend
	mu             sync.Mutex
	inflight, most int
}

func (s *slowBackend) LogLikelihood(ctx context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	s.mu.Lock()
	s.inflight++
	s.most = max(s.most, s.inflight)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
	return s.countingBackend.LogLikelihood(ctx, reqs)
}

// Infer keeps model.concurrency items in flight across checkpoint
// boundaries: with 4 workers and a checkpoint every 3 items, 4 calls are in
// flight at once (waiting for each checkpoint's items held it to 3), and
// every answer is still checkpointed, in objects of at most 3.
func TestInferKeepsWorkersBusyAcrossCheckpoints(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	b := &slowBackend{countingBackend: countingBackend{seen: map[string]int{}}}
	acts := New(zerolog.Nop())
	acts.OpenBackend = func(string, registry.Options) (backends.Backend, error) { return b, nil }
	acts.RegisterCPU(env)
	acts.RegisterInference(env)
	cfg := strings.Replace(testConfig(t, t.TempDir(), ""), "id: m}", "id: m, concurrency: 4}", 1)
	ref := prepareRun(t, env, acts, "w", cfg)
	v, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "knowledge", Shard: 0})
	if err != nil {
		t.Fatal(err)
	}
	var r ShardResult
	v.Get(&r)
	st, _ := acts.store(t.Context(), ref.StoreURI)
	preds, parts, err := shardPredictions(t.Context(), st, "w", "knowledge", 0, 0)
	if err != nil || r.Done != 10 || len(preds) != 10 || parts != 4 {
		t.Fatalf("done %d, stored %d predictions in %d objects (%v), want 10 in 4", r.Done, len(preds), parts, err)
	}
	if b.most != 4 {
		t.Fatalf("at most %d model calls in flight, want model.concurrency 4", b.most)
	}
}

// slowItemsStore holds the read of a shard's items like a store that is
// down and retrying, and counts the heartbeats Infer sent meanwhile.
type slowItemsStore struct {
	store.Store
	hold  time.Duration
	beats *atomic.Int32
	seen  int32 // heartbeats sent while the read was held
}

func (s *slowItemsStore) Get(ctx context.Context, key string) ([]byte, error) {
	if strings.HasSuffix(key, "/items.jsonl") && strings.Contains(key, "/shards/") {
		before := s.beats.Load()
		time.Sleep(s.hold)
		s.seen = s.beats.Load() - before
	}
	return s.Store.Get(ctx, key)
}

// Infer heartbeats from its start, while it reads its manifest, items and
// checkpoints: a store outage holds those reads longer than the 5 s heartbeat
// timeout, and an attempt timed out there was retried while it still ran, so
// both asked the model the same items once the store came back
// (TestChaosS3Outage's repeated call).
func TestInferHeartbeatsWhileReadingItsShard(t *testing.T) {
	env, acts, _ := newActEnv()
	var beats atomic.Int32
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats.Add(1) })
	ref := prepareRun(t, env, acts, "h", testConfig(t, t.TempDir(), ""))
	real, _ := acts.store(t.Context(), ref.StoreURI)
	slow := &slowItemsStore{Store: real, hold: 3 * HeartbeatEvery, beats: &beats}
	acts.stores[ref.StoreURI] = slow
	if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "knowledge", Shard: 0}); err != nil {
		t.Fatal(err)
	}
	if slow.seen == 0 {
		t.Fatalf("no heartbeat in the %s the shard's items took to read", slow.hold)
	}
}
