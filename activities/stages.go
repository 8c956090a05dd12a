package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/probes"
	"go.temporal.io/sdk/activity"
)

func (a *Activities) shardItems(ctx context.Context, st store.Store, run, axis string, shard int) ([]scorers.Item, error) {
	key := runfiles.ShardItemsKey(run, axis, shard)
	data, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return runfiles.DecodeJSONL[scorers.Item](key, data)
}

// shardPredictions reads every prediction checkpoint object of a shard,
// and says how many there were (the next part number).
func shardPredictions(ctx context.Context, st store.Store, run, axis string, shard, gen int) (map[string]scorers.Prediction, int, error) {
	return runfiles.InStore(ctx, st, run).ShardCheckpoints(axis, shard, runfiles.CheckpointKind(runfiles.Answers, gen))
}

// InferProgress is the heartbeat detail of Infer.
type InferProgress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
	// Waiting says why the activity is holding answered items, e.g. a
	// checkpoint write failing on a full disk; the Temporal UI shows it
	// with the pending activity.
	Waiting string `json:"waiting,omitempty"`
}

// Infer runs the model on one shard. Predictions are checkpointed every
// run.checkpoint_every items as create-only objects; a retried attempt reads
// them first and never sends an answered item to the model again. On
// cancellation (the axis budget ran out) what was answered is written before
// returning.
func (a *Activities) Infer(ctx context.Context, in ShardInput) (ShardResult, error) {
	// A ticker heartbeats from the start and while a slow item is in
	// flight, so a live worker is never mistaken for a dead one: opening a
	// large model, or a store outage holding the reads below, outlasts the
	// 5 s heartbeat timeout, and an attempt timed out there would run on
	// beside its retry and ask the model the same items. A dead worker stops
	// heartbeating.
	var p shardProgress
	defer beat(ctx, p.detail)()
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return ShardResult{}, err
	}
	items, err := a.shardItems(ctx, st, in.RunID, in.Axis, in.Shard)
	if err != nil {
		return ShardResult{}, err
	}
	gen := m.Plan.Generation(in.Axis)
	done, parts, err := shardPredictions(ctx, st, in.RunID, in.Axis, in.Shard, gen)
	if err != nil {
		return ShardResult{}, err
	}
	p.set(ShardResult{Total: len(items), Reused: len(done), Done: len(done)})
	todo := slices.DeleteFunc(items, func(it scorers.Item) bool { _, ok := done[it.ID]; return ok })
	if len(todo) == 0 {
		return p.result(), nil
	}
	predict, release, err := a.predictor(ctx, st, m, in.RunID, in.Axis)
	if err != nil {
		return p.result(), err
	}
	defer release()
	spec := m.Config.Model.Spec
	ans := scorers.Answerer{Predict: predict, Workers: m.Config.Model.InFlight(), Every: m.Config.Run.CheckpointEvery,
		Save: func(preds []scorers.Prediction) error {
			key := runfiles.GenPredKey(in.RunID, in.Axis, in.Shard, gen, parts)
			if err := p.save(ctx, st, key, spec, in.Axis, preds); err != nil {
				return err
			}
			parts++
			return nil
		},
		Failed: func(it scorers.Item, err error) (error, bool) { return inferFailure(spec, it, err) },
	}
	err = ans.Answer(ctx, todo)
	return p.result(), err
}

// inferFailure is what an item's failed answer means for its shard (see
// Classify): an outage (the server is away, the attempt was cancelled) stops
// the attempt, to be tried again later; a model failure ends the axis with
// its cause, since every item would fail alike; any other error is the
// item's own (too long, unrenderable), recorded with it and never retried.
func inferFailure(spec string, it scorers.Item, err error) (stop error, fatal bool) {
	switch Classify(err) {
	case Outage:
		return fmt.Errorf("item %s: %w", it.ID, err), false
	case ModelFailure:
		return modelError(spec, err), true
	}
	return nil, false
}

// predictor opens the run's model and returns how an item of the axis is
// answered, its probe variants with it when the axis runs probes; release
// the model when done.
func (a *Activities) predictor(ctx context.Context, st store.Store, m *manifest, run, axis string) (func(context.Context, scorers.Item) (scorers.Prediction, error), func(), error) {
	b, release, err := a.backend(run, m.Config.Model)
	if err != nil {
		if Classify(err) == Outage {
			return nil, nil, fmt.Errorf("model %s: %w", m.Config.Model.Spec, err)
		}
		// A model that cannot load fails every attempt alike.
		return nil, nil, nonRetryable(ErrModel, fmt.Sprintf("model %s cannot be opened: %v", m.Config.Model.Spec, err))
	}
	ax, _ := scorers.AxisNamed(axis)
	opt := runplan.PredictOptions(m.Config, axis)
	names := m.Config.Axes[axis].Probes
	pr, ok := ax.(probes.Prober)
	if !ok || len(names) == 0 {
		return func(ctx context.Context, it scorers.Item) (scorers.Prediction, error) {
			return ax.Predict(ctx, b, it, opt)
		}, release, nil
	}
	pool, err := a.probePool(ctx, st, run, axis)
	if err != nil {
		release()
		return nil, nil, err
	}
	return probes.Predict(pr, b, pool, names, opt), release, nil
}

// shardProgress is how far Infer is, for its heartbeat and its result.
type shardProgress struct {
	mu      sync.Mutex
	res     ShardResult
	waiting string // why answered items are held, for the heartbeat
}

func (p *shardProgress) set(r ShardResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.res = r
}

func (p *shardProgress) result() ShardResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.res
}

func (p *shardProgress) detail() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return InferProgress{Done: p.res.Done, Total: p.res.Total, Waiting: p.waiting}
}

// save checkpoints answers under key and counts them done.
func (p *shardProgress) save(ctx context.Context, st store.Store, key, spec, axis string, preds []scorers.Prediction) error {
	data, err := runfiles.EncodeJSONL(preds)
	if err != nil {
		// NaN or an infinity in an answer: the model is broken.
		return modelError(spec, err)
	}
	err = saveCheckpoint(ctx, st, key, data, func(why string) {
		p.mu.Lock()
		p.waiting = why
		p.mu.Unlock()
	})
	if err != nil {
		return err
	}
	metrics.ItemsInferred(axis, len(preds))
	p.mu.Lock()
	p.res.Done += len(preds)
	r := p.res
	p.mu.Unlock()
	activity.RecordHeartbeat(ctx, InferProgress{Done: r.Done, Total: r.Total})
	return nil
}

// checkpointPatience is how long Infer keeps trying to save answered items
// (a full disk, a store outage) before it gives the attempt up; the answers
// are paid for, and a new attempt would have to ask the model again.
const checkpointPatience = 5 * time.Minute

// saveCheckpoint writes one checkpoint object. It is written even when ctx is
// cancelled (a budget stop), so answered work is never lost, and a failed
// write is retried with backoff while Infer's ticker keeps heartbeating,
// reporting why through setWaiting. A retry that finds the key taken found
// its own earlier write, which the store accepted but did not confirm.
func saveCheckpoint(ctx context.Context, st store.Store, key string, data []byte, setWaiting func(string)) error {
	defer setWaiting("")
	deadline := time.Now().Add(checkpointPatience)
	wait := time.Second
	for attempt := 1; ; attempt++ {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		err := st.Put(wctx, key, data)
		cancel()
		if err == nil || (attempt > 1 && errors.Is(err, store.ErrExists)) {
			metrics.CheckpointWrite("predictions", nil)
			return nil
		}
		metrics.CheckpointWrite("predictions", err)
		if errors.Is(err, store.ErrExists) || ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("checkpoint %s: %w", key, err)
		}
		metrics.CheckpointRetry("predictions")
		setWaiting(fmt.Sprintf("checkpoint %s: %v; retrying in %s (attempt %d)", key, err, wait, attempt))
		activity.GetLogger(ctx).Warn("checkpoint write failed; answered items are kept and the write retried", "key", key, "error", err, "attempt", attempt)
		select {
		case <-ctx.Done():
			return fmt.Errorf("checkpoint %s: %w", key, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 10*time.Second)
	}
}

// probePool is the axis's item pool the unanswerable probe draws wrong options
// from; it is built once per worker and axis and kept while in use.
func (a *Activities) probePool(ctx context.Context, st store.Store, run, axis string) (*probes.Pool, error) {
	return a.pools.get(run+"/"+axis, run, func() (*probes.Pool, error) {
		pool := &probes.Pool{}
		err := runfiles.EachJSONL(ctx, st, runfiles.ItemsKey(run, axis), func(it scorers.Item) error {
			pool.Add(it)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return pool, nil
	})
}

// Probes checks that the configured probes were inferred for the axis. The
// probe variants are inferred with their items (same checkpoint, same budget)
// and read by the axis scorer as shuffle_drop and unanswerable_drop.
func (a *Activities) Probes(ctx context.Context, in ScoreInput) (StageNote, error) {
	defer beat(ctx, nil)()
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return StageNote{}, err
	}
	names := m.Config.Axes[in.Axis].Probes
	if len(names) == 0 {
		return StageNote{Note: "probes: none configured"}, nil
	}
	if ax, _ := scorers.AxisNamed(in.Axis); !hasProbes(ax) {
		return StageNote{Note: fmt.Sprintf("probes %v: only multiple-choice axes have probes", names)}, nil
	}
	scored, with := 0, 0
	_, err = a.eachScorable(ctx, st, in.RunID, in.Axis, in.Shards, m.Plan.Generation(in.Axis), func(items []scorers.Item, preds []scorers.Prediction) error {
		scored += len(items)
		for _, p := range preds {
			if len(p.Variants) > 0 {
				with++
			}
		}
		return nil
	})
	if err != nil {
		return StageNote{}, err
	}
	return StageNote{Note: fmt.Sprintf("probes %v: run on %d of %d scored items (shuffle_drop, unanswerable_drop in secondary)", names, with, scored)}, nil
}

// hasProbes reports whether the axis runs probes.
func hasProbes(ax scorers.Axis) bool {
	_, ok := ax.(probes.Prober)
	return ok
}
