package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/probes"
	"github.com/glossobench/glossobench/scorers/mcq"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
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
	var mu sync.Mutex
	var res ShardResult
	var waiting string // why answered items are held, for the heartbeat
	defer beat(ctx, func() any {
		mu.Lock()
		defer mu.Unlock()
		return InferProgress{Done: res.Done, Total: res.Total, Waiting: waiting}
	})()
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
	var todo []scorers.Item
	for _, it := range items {
		if _, ok := done[it.ID]; !ok {
			todo = append(todo, it)
		}
	}
	mu.Lock()
	res = ShardResult{Total: len(items), Reused: len(done), Done: len(done)}
	mu.Unlock()
	if len(todo) == 0 {
		return res, nil
	}
	ax, _ := scorers.AxisNamed(in.Axis)
	b, release, err := a.backend(in.RunID, m.Config.Model)
	if err != nil {
		if Classify(err) == Outage {
			return res, fmt.Errorf("model %s: %w", m.Config.Model.Spec, err)
		}
		// A model that cannot load fails every attempt alike.
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("model %s cannot be opened: %v", m.Config.Model.Spec, err), ErrModel, nil)
	}
	defer release()
	ac := m.Config.Axes[in.Axis]
	opt := scorers.PredictOptions{
		ScoringMode: ac.ScoringMode, ChatTemplate: m.Config.Run.ChatTemplate, MaxTokens: ac.MaxTokens,
		Seed: m.Config.Run.Seed, Options: ac.Options,
	}
	// Items in flight: model.concurrency when set; by default one for the
	// embedded model (it parallelises inside a request) and 8 for a server.
	workers := m.Config.Model.Concurrency
	if workers <= 0 {
		workers = 8
		if strings.HasPrefix(m.Config.Model.Spec, "gguf:") {
			workers = 1
		}
	}

	predict := func(ctx context.Context, it scorers.Item) (scorers.Prediction, error) {
		return ax.Predict(ctx, b, it, opt)
	}
	if mc, ok := ax.(*mcq.Axis); ok && len(ac.Probes) > 0 {
		pool, err := a.probePool(ctx, st, in.RunID, in.Axis)
		if err != nil {
			return res, err
		}
		predict = func(ctx context.Context, it scorers.Item) (scorers.Prediction, error) {
			p, err := mc.Predict(ctx, b, it, opt)
			if err != nil {
				return p, err
			}
			p.Variants, err = mc.PredictProbes(ctx, b, it, pool, ac.Probes, opt)
			return p, err
		}
	}

	// A sliding window of workers items: a new item starts as soon as one
	// ends, and answers are checkpointed every run.checkpoint_every in the
	// order they come back. (Waiting for a whole checkpoint's items before
	// starting the next ones left the model's slots empty at each
	// checkpoint's tail.)
	type answer struct {
		it    scorers.Item
		pred  scorers.Prediction
		err   error
		usage backends.Usage // what the answer, or the failed attempt, cost
	}
	answers := make(chan answer, workers)
	every := m.Config.Run.CheckpointEvery
	var pending []scorers.Prediction
	save := func() error {
		if len(pending) == 0 {
			return nil
		}
		data, err := runfiles.EncodeJSONL(pending)
		if err != nil {
			// NaN or an infinity in an answer: the model is broken.
			return modelError(m.Config.Model.Spec, err)
		}
		err = saveCheckpoint(ctx, st, runfiles.GenPredKey(in.RunID, in.Axis, in.Shard, gen, parts), data, func(why string) {
			mu.Lock()
			waiting = why
			mu.Unlock()
		})
		if err != nil {
			return err
		}
		metrics.ItemsInferred(in.Axis, len(pending))
		parts++
		mu.Lock()
		res.Done += len(pending)
		mu.Unlock()
		activity.RecordHeartbeat(ctx, InferProgress{Done: res.Done, Total: res.Total})
		pending = nil
		return nil
	}
	var firstErr, saveErr error
	broken := false // firstErr is the model's failure, not an outage
	next, inflight := 0, 0
	for {
		for next < len(todo) && inflight < workers && firstErr == nil && saveErr == nil && ctx.Err() == nil {
			it := todo[next]
			next++
			inflight++
			go func() {
				var u backends.Usage
				start := time.Now()
				p, err := predict(backends.CountUsage(ctx, &u), it)
				u.LatencyMS = time.Since(start).Milliseconds()
				if err == nil {
					p.Usage = &u
				}
				answers <- answer{it, p, err, u}
			}()
		}
		if inflight == 0 {
			break
		}
		ans := <-answers
		inflight--
		switch {
		case ans.err == nil:
			pending = append(pending, ans.pred)
		case Classify(ans.err) == Outage:
			// The server is away or the attempt was cancelled: retry later.
			if firstErr == nil {
				firstErr = fmt.Errorf("item %s: %w", ans.it.ID, ans.err)
			}
		case Classify(ans.err) == ModelFailure:
			// Every item would fail alike: the axis ends with this cause
			// (the error names the item); no new item is started.
			if !broken {
				broken, firstErr = true, modelError(m.Config.Model.Spec, ans.err)
			}
		default:
			// The item itself cannot be answered (too long, unrenderable):
			// record why, so it is reported and never retried.
			pending = append(pending, scorers.Prediction{ItemID: ans.it.ID, Error: ans.err.Error(), Usage: &ans.usage})
		}
		if len(pending) >= every && saveErr == nil {
			saveErr = save()
		}
	}
	if saveErr != nil {
		return res, saveErr
	}
	// What was answered is kept whatever ended the attempt.
	if err := save(); err != nil {
		return res, err
	}
	if firstErr != nil {
		return res, firstErr
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
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
	if ax, _ := scorers.AxisNamed(in.Axis); !isMCQ(ax) {
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

func isMCQ(ax scorers.Axis) bool {
	_, ok := ax.(*mcq.Axis)
	return ok
}
