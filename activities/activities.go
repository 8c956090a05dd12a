// Package activities holds EvalRun's stages. Each method is one stage over one
// shard or one axis; it reads its inputs from the store and writes its outputs
// there, so only keys and small summaries pass through workflow history. Every
// activity is idempotent: it first reads what an earlier attempt checkpointed
// and only does what is missing.
package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/config"
	_ "github.com/glossobench/glossobench/infra/datasource" // s3:// and hf:// dataset paths
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/probes"
	"github.com/rs/zerolog"
	"go.temporal.io/sdk/activity"
)

// Activities holds the dependencies of every stage. Stores and backends are
// opened on first use and shared by all runs the worker serves.
type Activities struct {
	Log zerolog.Logger
	// OpenBackend opens a model; nil means registry.Open. Tests replace it.
	OpenBackend func(spec string, o registry.Options) (backends.Backend, error)
	// SearchAttributes lists which of GlossoBench's search attributes a
	// namespace has; nil means none (the worker wiring sets it).
	SearchAttributes func(ctx context.Context, namespace string) ([]string, error)
	// JudgeWrapUp is how long before its deadline the judge activity stops
	// asking and checkpoints (default 30 s); tests shorten the stage with it.
	JudgeWrapUp time.Duration

	mu     sync.Mutex
	stores map[string]store.Store

	// What runs need is cached while they need it (see cache.go): open
	// models, manifests, corpus indexes and probe pools.
	backends  *cache[backends.Backend]
	manifests *cache[*manifest]
	corpora   *cache[*screening]
	pools     *cache[*probes.Pool]
}

// New returns Activities logging to log.
func New(log zerolog.Logger) *Activities {
	return &Activities{
		Log:       log,
		backends:  newCache(keepBackends, func(b backends.Backend) { b.Close() }),
		manifests: newCache[*manifest](keepManifest, nil),
		corpora:   newCache[*screening](keepCorpora, nil),
		pools:     newCache[*probes.Pool](keepPools, nil),
	}
}

// Close closes the open models.
func (a *Activities) Close() { a.backends.clear() }

// forgetRun drops what only the run used: it has ended, and a resumed or
// re-run activity loads it again from the store.
func (a *Activities) forgetRun(run string) {
	a.backends.forget(run)
	a.manifests.forget(run)
	a.corpora.forget(run)
	a.pools.forget(run)
}

// manifest is runs/<run>/manifest.json: the resolved config and the plan.

func (a *Activities) store(ctx context.Context, uri string) (store.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.stores[uri]; ok {
		return s, nil
	}
	s, err := store.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	if a.stores == nil {
		a.stores = map[string]store.Store{}
	}
	a.stores[uri] = s
	return s, nil
}

// backend returns the run's model, opened once per worker for every run
// with the same spec and options; the caller releases it when done.
func (a *Activities) backend(run string, m config.Model) (backends.Backend, func(), error) {
	o := backendOptions(m)
	return a.backends.acquire(backendKey(m.Spec, o), run, func() (backends.Backend, error) {
		open := a.OpenBackend
		if open == nil {
			open = registry.Open
		}
		return open(m.Spec, o)
	})
}

// loadManifest reads a run's manifest, cached while the run needs it.
func (a *Activities) loadManifest(ctx context.Context, ref RunRef) (*manifest, store.Store, error) {
	st, err := a.store(ctx, ref.StoreURI)
	if err != nil {
		return nil, nil, err
	}
	m, err := a.manifests.get(ref.StoreURI+"\x00"+ref.RunID, ref.RunID, func() (*manifest, error) {
		data, err := st.Get(ctx, runfiles.ManifestKey(ref.RunID))
		if err != nil {
			return nil, err
		}
		m := new(manifest)
		if err := json.Unmarshal(data, m); err != nil {
			return nil, fmt.Errorf("%s: %w", runfiles.ManifestKey(ref.RunID), err)
		}
		return m, applyModelChanges(ctx, st, ref.RunID, &m.Plan)
	})
	if err != nil {
		return nil, nil, err
	}
	return m, st, nil
}

// putOnce writes a create-only object; an identical object already there (an
// earlier attempt's) counts as success.
func putOnce(ctx context.Context, st store.Store, key string, data []byte) error {
	err := st.Put(ctx, key, data)
	if errors.Is(err, store.ErrExists) {
		return nil
	}
	return err
}

func putJSON(ctx context.Context, st store.Store, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return putOnce(ctx, st, key, append(b, '\n'))
}

func getJSON(ctx context.Context, st store.Store, key string, v any) error {
	b, err := st.Get(ctx, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// Prepare loads and validates the config, loads every axis's items and writes
// them with the manifest to the store. A retry after a crash finds the
// manifest and returns its plan.
func (a *Activities) Prepare(ctx context.Context, in PrepareInput) (Plan, error) {
	defer beat(ctx, nil)()
	// The run id first: it names the run's folder, and nothing may be read
	// or written for a run id that would name another folder.
	if err := runfiles.CheckRunID(in.RunID); err != nil {
		return Plan{}, ConfigError("run_id %v", err)
	}
	cfg, err := in.Load()
	if err != nil {
		return Plan{}, ConfigError("%v", err)
	}
	uri := store.AbsURI(cfg.Store.URI)
	st, err := a.store(ctx, uri)
	if err != nil {
		return Plan{}, err
	}
	configHash, err := cfg.ContentHash()
	if err != nil {
		return Plan{}, ConfigError("config: %v", err)
	}
	if plan, found, err := a.resume(ctx, st, in, cfg, configHash); found || err != nil {
		return plan, err
	}
	plan := runplan.NewPlan(in.RunID, uri, cfg, configHash)
	if len(cfg.Dedup.Corpus) > 0 {
		// The corpus is cut into shards now, so the workflow can screen them in parallel.
		_, shards, err := corpusPlan(ctx, st, in.RunID, cfg)
		if err != nil {
			return Plan{}, err
		}
		plan.CorpusShards = len(shards)
	}
	meta := runplan.ModelMeta(cfg)
	if plan.ModelIdentity, err = modelIdentity(ctx, cfg.Model); err != nil {
		return Plan{}, ConfigError("model.spec: %v", err)
	}
	_, plan.ExcludedJudges = runplan.KeptJudges(cfg, meta)
	plan.SearchAttributes = a.namespaceSearchAttributes(ctx)
	if plan.Axes, plan.Skipped, err = storeItems(ctx, st, in.RunID, cfg, meta); err != nil {
		return Plan{}, err
	}
	if err := putJSON(ctx, st, runfiles.ManifestKey(in.RunID), manifest{Config: cfg, Plan: plan, ModelMeta: meta}); err != nil {
		return Plan{}, err
	}
	a.Log.Info().Str("run", in.RunID).Int("axes", len(plan.Axes)).Msg("prepared")
	return plan, nil
}

// resume returns the plan of a run already prepared (found), refusing it
// under another config, or on another model unless in allows a new one.
func (a *Activities) resume(ctx context.Context, st store.Store, in PrepareInput, cfg *config.Config, configHash string) (plan Plan, found bool, err error) {
	var prev manifest
	if err := getJSON(ctx, st, runfiles.ManifestKey(in.RunID), &prev); errors.Is(err, store.ErrNotFound) {
		return Plan{}, false, nil
	} else if err != nil {
		return Plan{}, true, err
	}
	if prev.Plan.ConfigHash != configHash {
		return Plan{}, true, ConfigError("run %s already exists in %s with another config; pick another run id", in.RunID, st.Describe())
	}
	if err := applyModelChanges(ctx, st, in.RunID, &prev.Plan); err != nil {
		return Plan{}, true, err
	}
	// The config hash leaves the model's location out; its identity is
	// its own pin, so a resumed run must measure the same model, or its
	// axes would come from two models under the first one's identity.
	now, err := modelIdentity(ctx, cfg.Model)
	if err != nil {
		return Plan{}, true, ConfigError("model.spec: %v", err)
	}
	why := otherModel(prev.Plan.ModelIdentity, now)
	if why == "" {
		return prev.Plan, true, nil
	}
	if !in.AllowNewModel {
		return Plan{}, true, ConfigError("run %s was started on other weights than %s serves now (%s): resuming would mix two models under one identity; pick another run id, or resume with --allow-new-model to start its unfinished axes over", in.RunID, cfg.Model.Spec, why)
	}
	plan, err = a.changeModel(ctx, st, in.RunID, prev.Plan, now, why)
	return plan, true, err
}

// storeItems writes every axis's items to the store, streamed through a
// spool file so no axis is held whole, and returns the axes' plans and the
// axes the run skips.
func storeItems(ctx context.Context, st store.Store, run string, cfg *config.Config, meta config.ModelMeta) ([]AxisPlan, []Skip, error) {
	judges, _ := runplan.KeptJudges(cfg, meta)
	var axes []AxisPlan
	skipped, err := runplan.EachAxis(cfg, meta, func(name string, ax scorers.Axis, each func(func(scorers.Item) error) error) error {
		sp, err := runfiles.NewSpool()
		if err != nil {
			return err
		}
		defer sp.Discard()
		n := 0
		err = each(func(it scorers.Item) error {
			n++
			return sp.Add(&it)
		})
		if err != nil {
			return err
		}
		if err := sp.Commit(ctx, st, runfiles.ItemsKey(run, name)); err != nil {
			return err
		}
		axes = append(axes, runplan.AxisPlan(cfg, name, ax, n, len(judges)))
		return nil
	})
	if data := (*runplan.DataError)(nil); errors.As(err, &data) {
		return nil, nil, dataError("%v", data)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(axes) == 0 {
		return nil, nil, ConfigError("no configured axis can run here")
	}
	return axes, skipped, nil
}

// namespaceSearchAttributes is which of GlossoBench's search attributes the
// run's namespace has. Not knowing is not an error: the run is still found
// by its memo.
func (a *Activities) namespaceSearchAttributes(ctx context.Context) []string {
	if a.SearchAttributes == nil {
		return nil
	}
	have, err := a.SearchAttributes(ctx, activity.GetInfo(ctx).Namespace)
	if err != nil {
		a.Log.Warn().Err(err).Msg("cannot list the namespace's search attributes; the run sets none")
		return nil
	}
	return have
}

// registrar is what a worker (or a test environment) registers activities on.
type registrar interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// RegisterCPU registers the stages that run on the CPU task queue.
func (a *Activities) RegisterCPU(r registrar) {
	for name, fn := range map[string]any{
		"Prepare": a.Prepare, "Dedup": a.Dedup, "DedupCounts": a.DedupCounts, "Score": a.Score,
		"Probes": a.Probes, "Audit": a.Audit, "Aggregate": a.Aggregate,
		"PlanRefresh": a.PlanRefresh, "AppendLeaderboard": a.AppendLeaderboard, "AppendLeaderboardRow": a.AppendLeaderboardRow,
		"ScreenShard": a.ScreenShard, "RecomputeElo": a.RecomputeElo,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// RegisterInference registers the stages that call models: inference and judging.
func (a *Activities) RegisterInference(r registrar) {
	r.RegisterActivityWithOptions(a.Infer, activity.RegisterOptions{Name: "Infer"})
	r.RegisterActivityWithOptions(a.Judge, activity.RegisterOptions{Name: "Judge"})
}
