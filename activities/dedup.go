package activities

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/corpus"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"go.temporal.io/sdk/activity"
)

// DedupCounts drops contaminated items before anything is scored (spec §6),
// publishes the SHA-256 of the kept item-id set, cuts each axis's kept items
// into shards and stores all that at runfiles.DedupKey; it returns only the
// counts EvalRun needs.
func (a *Activities) DedupCounts(ctx context.Context, ref RunRef) (DedupCounts, error) {
	d, err := a.Dedup(ctx, ref)
	return CountsOf(d), err
}

// Dedup is DedupCounts returning the whole DedupResult, an item count per
// shard among it. EvalRuns started before DedupCounts existed call it (and
// their histories hold its results), so it stays registered under its name.
func (a *Activities) Dedup(ctx context.Context, ref RunRef) (DedupResult, error) {
	defer beat(ctx, nil)()
	m, st, err := a.loadManifest(ctx, ref)
	if err != nil {
		return DedupResult{}, err
	}
	var prev DedupResult
	if err := getJSON(ctx, st, runfiles.DedupKey(ref.RunID), &prev); err == nil {
		return prev, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return DedupResult{}, err
	}
	res := DedupResult{Corpus: "no corpus"}
	dropped, corpusNote, taskRates, err := a.screen(ctx, m.Config, ref)
	if err != nil {
		return DedupResult{}, err
	}
	a.corpora.forget(ref.RunID) // screened: the run needs its index no more
	if corpusNote != "" {
		res.Corpus = corpusNote
		if from := m.Config.Dedup.CorpusFrom; from != "" {
			res.Corpus += " (corpus from " + from + ")"
		}
	}
	var kept []string
	for _, ax := range m.Plan.Axes {
		ad, ids, err := shardAxis(ctx, st, ref.RunID, ax.Name, m.Config.Run.ShardSize, dropped)
		if err != nil {
			return DedupResult{}, err
		}
		// Task-level (spec §0, principle 5): a task is contaminated when any of its items is.
		ad.ContaminationRate = taskRates[ax.Name]
		res.Axes = append(res.Axes, ad)
		kept = append(kept, ids...)
	}
	res.KeptSHA256 = dedup.KeptSHA256(kept)
	if err := putJSON(ctx, st, runfiles.DedupKey(ref.RunID), res); err != nil {
		return DedupResult{}, err
	}
	return res, nil
}

// shardAxis cuts the axis's items that dedup keeps into shards of size
// items and stores them; it returns the axis's counts and the kept ids. The
// items stream through: one shard's kept items are held at a time, and of
// the rest only the kept ids (for the SHA-256).
func shardAxis(ctx context.Context, st store.Store, run, axis string, size int, dropped map[string]bool) (AxisDedup, []string, error) {
	ad := AxisDedup{Axis: axis}
	var kept []string
	var shard []scorers.Item
	flush := func() error {
		data, err := runfiles.EncodeJSONL(shard)
		if err != nil {
			return err
		}
		if err := putOnce(ctx, st, runfiles.ShardItemsKey(run, axis, len(ad.Shards)), data); err != nil {
			return err
		}
		ad.Shards = append(ad.Shards, len(shard))
		shard = shard[:0]
		return nil
	}
	err := runfiles.EachJSONL(ctx, st, runfiles.ItemsKey(run, axis), func(it scorers.Item) error {
		if dropped[it.ID] {
			ad.Dropped++
			return nil
		}
		ad.Kept++
		kept = append(kept, it.ID)
		if shard = append(shard, it); len(shard) == size {
			return flush()
		}
		return nil
	})
	if err == nil && len(shard) > 0 {
		err = flush()
	}
	return ad, kept, err
}

// screening is a run's screening index over its items and the corpus shards.
type screening struct {
	items   []scorers.Item
	opt     dedup.Options
	idx     *dedup.Index
	sources []corpus.Source
	shards  []corpus.Shard
}

// corpusPlan lists the corpus files (local paths, globs, directories and
// s3:// prefixes) and cuts them into byte-range shards. The first listing of
// a run is stored (create-only) and every later call reads it back, so the
// workers that screen the shards agree with the plan Prepare counted even if
// the corpus changes meanwhile; every S3 read then requires the listed ETag.
func corpusPlan(ctx context.Context, st store.Store, run string, cfg *config.Config) ([]corpus.Source, []corpus.Shard, error) {
	key := corpusPlanKey(run, cfg.Dedup)
	var sources []corpus.Source
	if err := getJSON(ctx, st, key, &sources); errors.Is(err, store.ErrNotFound) {
		listed, err := corpus.Expand(ctx, cfg.Dedup.Corpus, "", cfg.Dedup.TextField)
		if err != nil {
			return nil, nil, ConfigError("dedup.corpus: %v", err)
		}
		if err := putJSON(ctx, st, key, listed); err != nil {
			return nil, nil, err
		}
		if err := getJSON(ctx, st, key, &sources); err != nil { // another worker's listing may have won
			return nil, nil, err
		}
	} else if err != nil {
		return nil, nil, err
	}
	// Shards of at most corpusShardBytes keep a terabyte corpus to a few
	// thousand activities; a small corpus is cut finer, so that the
	// parallel_shards activities in flight each get several.
	return sources, corpus.Plan(sources, corpus.BalancedShardBytes(sources, corpusShardBytes, cfg.Run.ParallelShards)), nil
}

// corpusPlanKey names the stored listing after the corpus entries too: a
// Prepare that failed (no manifest yet) and is rerun under the same run id
// with other entries must not find the old listing.
func corpusPlanKey(run string, d config.Dedup) string {
	h := sha256.Sum256([]byte(strings.Join(d.Corpus, "\n") + "\x00" + d.TextField))
	return fmt.Sprintf("runs/%s/dedup/corpus-%x.json", run, h[:6])
}

// corpus is the run's screening index over its items and the corpus shards,
// built once per worker and kept while the run screens.
func (a *Activities) corpus(ctx context.Context, m *manifest, st store.Store, run string) (*screening, error) {
	return a.corpora.get(run, run, func() (*screening, error) {
		c := &screening{opt: runplan.DedupOptions(m.Config)}
		// Of each item only what screening reads is kept: the id, axis and task
		// for the report, and the prompt until the index holds its normal form.
		for _, ax := range m.Plan.Axes {
			err := runfiles.EachJSONL(ctx, st, runfiles.ItemsKey(run, ax.Name), func(it scorers.Item) error {
				c.items = append(c.items, scorers.Item{ID: it.ID, Axis: it.Axis, TaskID: it.TaskID, Prompt: it.Prompt})
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		var err error
		if c.idx, err = dedup.NewIndex(c.items, c.opt); err != nil {
			return nil, ConfigError("dedup: %v", err)
		}
		for i := range c.items {
			c.items[i].Prompt = ""
		}
		if c.sources, c.shards, err = corpusPlan(ctx, st, run, m.Config); err != nil {
			return nil, err
		}
		return c, nil
	})
}

func corpusShardKey(run string, shard int) string {
	return fmt.Sprintf("runs/%s/dedup/shard-%05d.json", run, shard)
}

// ScreenShard screens one byte range of the training corpus against the run's
// items. Its heartbeat carries the scan checkpoint (offset and matches so
// far), so a retried attempt on any worker resumes where the last one
// stopped; the finished shard is checkpointed to the store.
func (a *Activities) ScreenShard(ctx context.Context, in ShardInput) (int, error) {
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return 0, err
	}
	var done corpus.ShardResult
	if err := getJSON(ctx, st, corpusShardKey(in.RunID, in.Shard), &done); err == nil {
		return len(done.Matches), nil
	}
	c, err := a.corpus(ctx, m, st, in.RunID)
	if err != nil {
		return 0, err
	}
	if in.Shard < 0 || in.Shard >= len(c.shards) {
		return 0, dataError("corpus shard %d: the corpus changed since the run was prepared", in.Shard)
	}
	var from corpus.Checkpoint
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &from)
	}
	var mu sync.Mutex
	last := from
	defer beat(ctx, func() any {
		mu.Lock()
		defer mu.Unlock()
		return last
	})()
	r, err := corpus.Scanner{Index: c.idx}.ScanShard(ctx, c.shards[in.Shard], from, func(cp corpus.Checkpoint) {
		mu.Lock()
		last = cp
		mu.Unlock()
	})
	if err != nil {
		return 0, err
	}
	return len(r.Matches), putJSON(ctx, st, corpusShardKey(in.RunID, in.Shard), r)
}

// screen applies contamination dedup against the configured corpus: it reads
// the shard results ScreenShard checkpointed (scanning any that are missing
// here), drops every item whose task matched and fingerprints the corpus. It
// returns the dropped item ids, a description of the corpus ("" when none is
// configured) and the task-level contamination rate per axis.
func (a *Activities) screen(ctx context.Context, cfg *config.Config, ref RunRef) (dropped map[string]bool, corpusNote string, taskRates map[string]*float64, err error) {
	if len(cfg.Dedup.Corpus) == 0 {
		return nil, "", nil, nil
	}
	m, st, err := a.loadManifest(ctx, ref)
	if err != nil {
		return nil, "", nil, err
	}
	c, err := a.corpus(ctx, m, st, ref.RunID)
	if err != nil {
		return nil, "", nil, err
	}
	results, err := a.shardMatches(ctx, st, ref, len(c.shards))
	if err != nil {
		return nil, "", nil, err
	}
	var fps []dedup.Fingerprint
	for _, src := range c.sources {
		fp, err := corpus.FingerprintSource(ctx, nil, src)
		if err != nil {
			return nil, "", nil, err
		}
		fps = append(fps, fp)
	}
	rep := dedup.Summarize(c.items, dedup.MergeMatches(results...), fps, c.opt)
	if err := putJSON(ctx, st, "runs/"+ref.RunID+"/dedup/report.json", rep); err != nil {
		return nil, "", nil, err
	}
	names := make([]string, len(fps))
	for i, f := range fps {
		names[i] = f.String()
	}
	return rep.DroppedIDs(), strings.Join(names, "; "), rep.TaskRates(), nil
}

// shardMatches reads the matches ScreenShard checkpointed for each of the
// run's n corpus shards, screening a shard here when its result is missing.
func (a *Activities) shardMatches(ctx context.Context, st store.Store, ref RunRef, n int) ([][]dedup.Match, error) {
	results := make([][]dedup.Match, n)
	for i := range n {
		var r corpus.ShardResult
		if err := getJSON(ctx, st, corpusShardKey(ref.RunID, i), &r); err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			if _, err := a.ScreenShard(ctx, ShardInput{RunRef: ref, Shard: i}); err != nil {
				return nil, err
			}
			if err := getJSON(ctx, st, corpusShardKey(ref.RunID, i), &r); err != nil {
				return nil, err
			}
		}
		results[i] = r.Matches
	}
	return results, nil
}
