package activities

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/audit"
	"github.com/glossobench/glossobench/scorers/dedup"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/scorers/mcq"
	"github.com/glossobench/glossobench/scorers/probes"
)

// Dedup drops contaminated items before anything is scored (spec §6), publishes
// the SHA-256 of the kept item-id set and cuts each axis's kept items into shards.
func (a *Activities) Dedup(ctx context.Context, ref RunRef) (DedupResult, error) {
	m, st, err := a.loadManifest(ctx, ref)
	if err != nil {
		return DedupResult{}, err
	}
	var prev DedupResult
	if err := getJSON(ctx, st, dedupKey(ref.RunID), &prev); err == nil {
		return prev, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return DedupResult{}, err
	}
	res := DedupResult{Corpus: "no corpus"}
	dropped, corpusNote, taskRates, err := a.screen(ctx, m.Config, ref)
	if err != nil {
		return DedupResult{}, err
	}
	if corpusNote != "" {
		res.Corpus = corpusNote
	}
	var kept []string
	size := m.Config.Run.ShardSize
	for _, ax := range m.Plan.Axes {
		items, err := a.axisItems(ctx, st, ref.RunID, ax.Name)
		if err != nil {
			return DedupResult{}, err
		}
		var keep []scorers.Item
		for _, it := range items {
			if !dropped[it.ID] {
				keep = append(keep, it)
				kept = append(kept, it.ID)
			}
		}
		ad := AxisDedup{Axis: ax.Name, Kept: len(keep), Dropped: len(items) - len(keep)}
		// Task-level (spec §0, principle 5): a task is contaminated when any of its items is.
		ad.ContaminationRate = taskRates[ax.Name]
		for s := 0; s*size < len(keep); s++ {
			part := keep[s*size : min((s+1)*size, len(keep))]
			data, err := encodeJSONL(part)
			if err != nil {
				return DedupResult{}, err
			}
			if err := putOnce(ctx, st, shardItemsKey(ref.RunID, ax.Name, s), data); err != nil {
				return DedupResult{}, err
			}
			ad.Shards = append(ad.Shards, len(part))
		}
		res.Axes = append(res.Axes, ad)
	}
	res.KeptSHA256 = dedup.KeptSHA256(kept)
	if err := putJSON(ctx, st, dedupKey(ref.RunID), res); err != nil {
		return DedupResult{}, err
	}
	return res, nil
}

func (a *Activities) axisItems(ctx context.Context, st store.Store, run, axis string) ([]scorers.Item, error) {
	data, err := st.Get(ctx, itemsKey(run, axis))
	if err != nil {
		return nil, err
	}
	return decodeJSONL[scorers.Item](data, itemsKey(run, axis))
}

func (a *Activities) shardItems(ctx context.Context, st store.Store, run, axis string, shard int) ([]scorers.Item, error) {
	key := shardItemsKey(run, axis, shard)
	data, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return decodeJSONL[scorers.Item](data, key)
}

// shardPredictions reads every prediction checkpoint object of a shard.
func shardPredictions(ctx context.Context, st store.Store, run, axis string, shard int) (map[string]scorers.Prediction, int, error) {
	return readPredictions(ctx, st, predPrefix(run, axis, shard))
}

// readPredictions reads the checkpoint objects under prefix, keyed by item id,
// and says how many objects there were (the next part number).
func readPredictions(ctx context.Context, st store.Store, prefix string) (map[string]scorers.Prediction, int, error) {
	keys, err := st.List(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	preds := map[string]scorers.Prediction{}
	for _, k := range keys {
		data, err := st.Get(ctx, k)
		if err != nil {
			return nil, 0, err
		}
		rows, err := decodeJSONL[scorers.Prediction](data, k)
		if err != nil {
			return nil, 0, err
		}
		for _, p := range rows {
			preds[p.ItemID] = p
		}
	}
	return preds, len(keys), nil
}

// InferProgress is the heartbeat detail of Infer.
type InferProgress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
}

// Infer runs the model on one shard. Predictions are checkpointed every
// run.checkpoint_every items as create-only objects; a retried attempt reads
// them first and never sends an answered item to the model again. On
// cancellation (the axis budget ran out) what was answered is written before
// returning.
func (a *Activities) Infer(ctx context.Context, in ShardInput) (ShardResult, error) {
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return ShardResult{}, err
	}
	items, err := a.shardItems(ctx, st, in.RunID, in.Axis, in.Shard)
	if err != nil {
		return ShardResult{}, err
	}
	done, parts, err := shardPredictions(ctx, st, in.RunID, in.Axis, in.Shard)
	if err != nil {
		return ShardResult{}, err
	}
	res := ShardResult{Total: len(items), Reused: len(done)}
	var todo []scorers.Item
	for _, it := range items {
		if _, ok := done[it.ID]; !ok {
			todo = append(todo, it)
		}
	}
	res.Done = len(done)
	if len(todo) == 0 {
		return res, nil
	}
	ax, _ := Axis(in.Axis)
	b, err := a.backend(m.Config.Model)
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(fmt.Sprintf("model %s: %v", m.Config.Model.Spec, err), ErrConfig, nil)
	}
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

	// A ticker heartbeats while a slow item is in flight, so a live worker is
	// never mistaken for a dead one; a dead one stops heartbeating.
	var mu sync.Mutex
	hbStop := make(chan struct{})
	defer close(hbStop)
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-hbStop:
				return
			case <-t.C:
				mu.Lock()
				activity.RecordHeartbeat(ctx, InferProgress{Done: res.Done, Total: res.Total})
				mu.Unlock()
			}
		}
	}()

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

	every := m.Config.Run.CheckpointEvery
	for start := 0; start < len(todo); start += every {
		chunk := todo[start:min(start+every, len(todo))]
		preds := make([]scorers.Prediction, len(chunk))
		errs := make([]error, len(chunk))
		sem := make(chan struct{}, workers)
		var wg sync.WaitGroup
		for i, it := range chunk {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				preds[i], errs[i] = predict(ctx, it)
			}()
		}
		wg.Wait()
		var ok []scorers.Prediction
		var firstErr error
		for i := range chunk {
			switch {
			case errs[i] == nil:
				ok = append(ok, preds[i])
			case transient(errs[i]):
				// The server is away or the attempt was cancelled: retry later.
				if firstErr == nil {
					firstErr = fmt.Errorf("item %s: %w", chunk[i].ID, errs[i])
				}
			default:
				// The item itself cannot be answered (too long, unrenderable,
				// rejected): record why, so it is reported and never retried.
				ok = append(ok, scorers.Prediction{ItemID: chunk[i].ID, Error: errs[i].Error()})
			}
		}
		if len(ok) > 0 {
			data, err := encodeJSONL(ok)
			if err != nil {
				return res, err
			}
			// Written even when ctx is cancelled: answered work is never lost.
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			err = st.Put(wctx, predKey(in.RunID, in.Axis, in.Shard, parts), data)
			cancel()
			if err != nil {
				return res, fmt.Errorf("checkpoint %s: %w", predKey(in.RunID, in.Axis, in.Shard, parts), err)
			}
			parts++
			mu.Lock()
			res.Done += len(ok)
			mu.Unlock()
			activity.RecordHeartbeat(ctx, InferProgress{Done: res.Done, Total: res.Total})
		}
		if firstErr != nil {
			return res, firstErr
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	return res, nil
}

// addRegisters reports per-register scores and the register mix (spec §0,
// principle 4) when the data labels registers; otherwise it adds nothing.
func addRegisters(r *scorers.AxisResult, items []scorers.Item) {
	reg := make(map[string]string, len(items))
	for _, it := range items {
		if it.Register != "" {
			reg[it.ID] = it.Register
		}
	}
	if len(reg) == 0 {
		return
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, s := range r.Items {
		g := reg[s.ItemID]
		if g == "" {
			g = "unlabelled"
		}
		sum[g] += s.Score
		n[g]++
	}
	by, mix := map[string]float64{}, map[string]float64{}
	for g, k := range n {
		by[g] = sum[g] / float64(k)
		mix[g] = float64(k) / float64(len(r.Items))
	}
	if r.Secondary == nil {
		r.Secondary = map[string]any{}
	}
	r.Secondary["by_register"], r.Secondary["register_mix"] = by, mix
}

// transient reports whether an inference error may go away on retry: a
// cancelled context or a network failure. The HTTP backend has already
// retried 429, 5xx and timeouts with backoff before an error gets here.
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// scoreInputs pairs every kept item that has a prediction with it.
func (a *Activities) scoreInputs(ctx context.Context, st store.Store, run, axis string, shards int) (items []scorers.Item, preds []scorers.Prediction, unscored int, err error) {
	for s := 0; s < shards; s++ {
		its, err := a.shardItems(ctx, st, run, axis, s)
		if err != nil {
			return nil, nil, 0, err
		}
		got, _, err := shardPredictions(ctx, st, run, axis, s)
		if err != nil {
			return nil, nil, 0, err
		}
		rated, _, err := readRated(ctx, st, run, axis, s)
		if err != nil {
			return nil, nil, 0, err
		}
		for id, p := range rated {
			got[id] = p
		}
		for _, it := range its {
			p, ok := got[it.ID]
			if !ok {
				unscored++
				continue
			}
			items = append(items, it)
			preds = append(preds, p)
		}
	}
	return items, preds, unscored, nil
}

// ScoreInput names an axis to score and how many shards it has.
type ScoreInput struct {
	AxisInput
	Shards int `json:"shards"`
}

// Score scores one axis from its checkpointed predictions, writes the per-item
// scores to the store and returns the axis result. Kept items without a
// prediction (the budget ran out) are counted, never guessed.
func (a *Activities) Score(ctx context.Context, in ScoreInput) (AxisOutcome, error) {
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return AxisOutcome{}, err
	}
	ax, _ := Axis(in.Axis)
	items, preds, unscored, err := a.scoreInputs(ctx, st, in.RunID, in.Axis, in.Shards)
	if err != nil {
		return AxisOutcome{}, err
	}
	ac := m.Config.Axes[in.Axis]
	out := AxisOutcome{Weight: ac.Weight, Tier: ac.Tier, Dropped: unscored}
	if len(items) == 0 {
		out.Result = scorers.AxisResult{Axis: in.Axis, Version: ax.Version(), ScorerType: ax.ScorerType(), Metric: "none",
			Notes: []string{"no item was scored"}}
	} else {
		r, err := ax.Score(items, preds, scorers.ScoreOptions{
			ScoringMode: ac.ScoringMode, Seed: m.Config.Run.Seed, BootstrapResamples: m.Config.Run.BootstrapResamples, Options: ac.Options,
		})
		if err != nil {
			return AxisOutcome{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrData, nil)
		}
		addRegisters(&r, items)
		if _, judged := ax.(judgedAxis); !judged && overlayOn(m.Config, in.Axis) && len(m.Config.Judges) > 0 {
			byID := make(map[string]scorers.Prediction, len(preds))
			for _, p := range preds {
				byID[p.ItemID] = p
			}
			addJudgeQuality(&r, byID)
		}
		out.Result = r
	}
	if unscored > 0 {
		out.Result.Notes = append(out.Result.Notes, fmt.Sprintf("%d kept items were not scored: the axis budget ran out before they were answered", unscored))
	}
	data, err := encodeJSONL(out.Result.Items)
	if err != nil {
		return AxisOutcome{}, err
	}
	if err := putOnce(ctx, st, scoresKey(in.RunID, in.Axis), data); err != nil {
		return AxisOutcome{}, err
	}
	if err := putJSON(ctx, st, axisResultKey(in.RunID, in.Axis), out); err != nil {
		return AxisOutcome{}, err
	}
	return out, nil
}

// probePool is the axis's item pool the unanswerable probe draws wrong options
// from; it is built once per worker and axis.
func (a *Activities) probePool(ctx context.Context, st store.Store, run, axis string) (*probes.Pool, error) {
	key := run + "/" + axis
	a.mu.Lock()
	pool, ok := a.pools[key]
	a.mu.Unlock()
	if ok {
		return pool, nil
	}
	items, err := a.axisItems(ctx, st, run, axis)
	if err != nil {
		return nil, err
	}
	pool = probes.NewPool(items)
	a.mu.Lock()
	if a.pools == nil {
		a.pools = map[string]*probes.Pool{}
	}
	a.pools[key] = pool
	a.mu.Unlock()
	return pool, nil
}

// Probes checks that the configured probes were inferred for the axis. The
// probe variants are inferred with their items (same checkpoint, same budget)
// and read by the axis scorer as shuffle_drop and unanswerable_drop.
func (a *Activities) Probes(ctx context.Context, in ScoreInput) (StageNote, error) {
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return StageNote{}, err
	}
	names := m.Config.Axes[in.Axis].Probes
	if len(names) == 0 {
		return StageNote{Note: "probes: none configured"}, nil
	}
	if ax, _ := Axis(in.Axis); !isMCQ(ax) {
		return StageNote{Note: fmt.Sprintf("probes %v: only multiple-choice axes have probes", names)}, nil
	}
	items, preds, _, err := a.scoreInputs(ctx, st, in.RunID, in.Axis, in.Shards)
	if err != nil {
		return StageNote{}, err
	}
	with := 0
	for _, p := range preds {
		if len(p.Variants) > 0 {
			with++
		}
	}
	return StageNote{Note: fmt.Sprintf("probes %v: run on %d of %d scored items (shuffle_drop, unanswerable_drop in secondary)", names, with, len(items))}, nil
}

func isMCQ(ax scorers.Axis) bool {
	_, ok := ax.(*mcq.Axis)
	return ok
}

// Audit runs the source-identity leakage audit (spec 003) on an axis whose
// items pool several sources: the scorer's per-item rating is the measurement,
// correctness the label.
func (a *Activities) Audit(ctx context.Context, in AxisInput) (AuditSummary, error) {
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return AuditSummary{}, err
	}
	data, err := st.Get(ctx, scoresKey(in.RunID, in.Axis))
	if err != nil {
		return AuditSummary{}, err
	}
	scores, err := decodeJSONL[scorers.ItemScore](data, scoresKey(in.RunID, in.Axis))
	if err != nil {
		return AuditSummary{}, err
	}
	sources := map[string]bool{}
	rows := make([]audit.Row, len(scores))
	for i, s := range scores {
		sources[s.Source] = true
		rows[i] = audit.Row{Label: s.Label, Source: s.Source, Measurements: []float64{s.Rating}}
	}
	sum, err := a.auditRows(ctx, st, "runs/"+in.RunID+"/"+in.Axis+"/audit.json", rows, len(sources), uint64(m.Config.Run.Seed))
	if err != nil {
		return AuditSummary{}, err
	}
	// Judges are a pool too: every judge grades the same answers, so the
	// judge tag should carry nothing (the paper's source-carries-nothing design).
	judgeRows, judges, err := a.judgeRows(ctx, st, in.RunID, in.Axis, scores)
	if err != nil {
		return AuditSummary{}, err
	}
	if judges >= 2 {
		byJudge, err := a.auditRows(ctx, st, "runs/"+in.RunID+"/"+in.Axis+"/audit-judges.json", judgeRows, judges, uint64(m.Config.Run.Seed))
		if err != nil {
			return AuditSummary{}, err
		}
		sum.ByJudge = &byJudge
	}
	// Registers pool an axis too when the data labels them.
	items, err := a.axisItems(ctx, st, in.RunID, in.Axis)
	if err != nil {
		return AuditSummary{}, err
	}
	register := make(map[string]string, len(items))
	for _, it := range items {
		register[it.ID] = it.Register
	}
	var regRows []audit.Row
	regs := map[string]bool{}
	for _, s := range scores {
		if g := register[s.ItemID]; g != "" {
			regs[g] = true
			regRows = append(regRows, audit.Row{Label: s.Label, Source: g, Measurements: []float64{s.Rating}})
		}
	}
	if len(regs) >= 2 {
		byReg, err := a.auditRows(ctx, st, "runs/"+in.RunID+"/"+in.Axis+"/audit-registers.json", regRows, len(regs), uint64(m.Config.Run.Seed))
		if err != nil {
			return AuditSummary{}, err
		}
		sum.ByRegister = &byReg
	}
	return sum, nil
}

// auditRows runs the audit on rows pooled from n sources and stores the report at key.
func (a *Activities) auditRows(ctx context.Context, st store.Store, key string, rows []audit.Row, n int, seed uint64) (AuditSummary, error) {
	sum := AuditSummary{Sources: n}
	if n < 2 {
		sum.Verdict = "not pooled"
		return sum, nil
	}
	opt := audit.DefaultOptions()
	opt.Detector = audit.DetectorMeanHalf
	opt.Seed = seed
	rep, err := audit.Run(rows, []string{"rating"}, opt)
	if err != nil {
		sum.Verdict = "not audited: " + err.Error()
		return sum, nil
	}
	if rep.Skip != "" {
		sum.Verdict = "not audited: " + rep.Skip
		return sum, nil
	}
	if err := putJSON(ctx, st, key, rep); err != nil {
		return AuditSummary{}, err
	}
	sum.Verdict, sum.Line, sum.ReportKey = rep.Verdict, rep.Line(), key
	sum.Headline, sum.MeasurementsOnly, sum.SourceOnly = &rep.Headline, &rep.MeasurementsOnly, &rep.SourceOnly
	sum.L, sum.LMin = &rep.L, &rep.LMin
	if rep.BootstrapN > 0 {
		sum.CI95 = &rep.CI95
	}
	return sum, nil
}

// judgeRows turns every valid judge rating of a scored item into an audit
// row: the item's label, the judge as the source, the rating as the measurement.
func (a *Activities) judgeRows(ctx context.Context, st store.Store, run, axis string, scores []scorers.ItemScore) ([]audit.Row, int, error) {
	label := make(map[string]bool, len(scores))
	for _, s := range scores {
		label[s.ItemID] = s.Label
	}
	var rows []audit.Row
	judges := map[string]bool{}
	for shard := 0; ; shard++ {
		rated, parts, err := readRated(ctx, st, run, axis, shard)
		if err != nil {
			return nil, 0, err
		}
		if parts == 0 {
			if ok, err := st.Exists(ctx, shardItemsKey(run, axis, shard)); err != nil || !ok {
				return rows, len(judges), err
			}
			continue
		}
		for id, p := range rated {
			l, scored := label[id]
			rs, err := judge.FromPrediction(p)
			if !scored || err != nil {
				continue
			}
			for _, r := range rs {
				if r.Valid() {
					judges[r.Judge] = true
					v := *r.Value
					if r.Kind == judge.KindRating {
						v /= 10 // ratings are 0-10; the audit's half-and-half rating wants 0-1
					}
					rows = append(rows, audit.Row{Label: l, Source: r.Judge, Measurements: []float64{v}})
				}
			}
		}
	}
}

// corpusShardBytes is the byte range one corpus scan covers.
const corpusShardBytes = 256 << 20

// corpus is a run's dedup index and corpus plan, built once per worker.
type corpus struct {
	items   []scorers.Item
	opt     dedup.Options
	idx     *dedup.Index
	sources []dedup.Source
	shards  []dedup.Shard
}

// corpusPlan lists the corpus files and cuts them into byte-range shards.
func corpusPlan(cfg *config.Config) ([]dedup.Source, []dedup.Shard, error) {
	sources, err := dedup.ExpandLocal(cfg.Dedup.Corpus, "", cfg.Dedup.TextField)
	if err != nil {
		return nil, nil, temporal.NewNonRetryableApplicationError("dedup.corpus: "+err.Error(), ErrConfig, nil)
	}
	return sources, dedup.Plan(sources, corpusShardBytes), nil
}

func (a *Activities) corpus(ctx context.Context, m *manifest, st store.Store, run string) (*corpus, error) {
	a.mu.Lock()
	c, ok := a.corpora[run]
	a.mu.Unlock()
	if ok {
		return c, nil
	}
	c = &corpus{opt: dedup.Options{MinExactLen: m.Config.Dedup.MinChars, Jaccard: m.Config.Dedup.Jaccard}}
	for _, ax := range m.Plan.Axes {
		its, err := a.axisItems(ctx, st, run, ax.Name)
		if err != nil {
			return nil, err
		}
		c.items = append(c.items, its...)
	}
	var err error
	if c.idx, err = dedup.NewIndex(c.items, c.opt); err != nil {
		return nil, temporal.NewNonRetryableApplicationError("dedup: "+err.Error(), ErrConfig, nil)
	}
	if c.sources, c.shards, err = corpusPlan(m.Config); err != nil {
		return nil, err
	}
	a.mu.Lock()
	if a.corpora == nil {
		a.corpora = map[string]*corpus{}
	}
	a.corpora[run] = c
	a.mu.Unlock()
	return c, nil
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
	var done dedup.ShardResult
	if err := getJSON(ctx, st, corpusShardKey(in.RunID, in.Shard), &done); err == nil {
		return len(done.Matches), nil
	}
	c, err := a.corpus(ctx, m, st, in.RunID)
	if err != nil {
		return 0, err
	}
	if in.Shard < 0 || in.Shard >= len(c.shards) {
		return 0, temporal.NewNonRetryableApplicationError(fmt.Sprintf("corpus shard %d: the corpus changed since the run was prepared", in.Shard), ErrData, nil)
	}
	var from dedup.Checkpoint
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &from)
	}
	r, err := dedup.Scanner{Index: c.idx}.ScanShard(ctx, c.shards[in.Shard], from, func(cp dedup.Checkpoint) {
		activity.RecordHeartbeat(ctx, cp)
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
	results := make([][]dedup.Match, len(c.shards))
	for i := range c.shards {
		var r dedup.ShardResult
		if err := getJSON(ctx, st, corpusShardKey(ref.RunID, i), &r); err != nil {
			if !errors.Is(err, store.ErrNotFound) {
				return nil, "", nil, err
			}
			if _, err := a.ScreenShard(ctx, ShardInput{RunRef: ref, Shard: i}); err != nil {
				return nil, "", nil, err
			}
			if err := getJSON(ctx, st, corpusShardKey(ref.RunID, i), &r); err != nil {
				return nil, "", nil, err
			}
		}
		results[i] = r.Matches
	}
	var fps []dedup.Fingerprint
	for _, src := range c.sources {
		fp, err := dedup.FingerprintFile(ctx, nil, src.URI)
		if err != nil {
			return nil, "", nil, err
		}
		fps = append(fps, fp)
	}
	rep := dedup.Summarize(c.items, dedup.MergeMatches(results...), fps, c.opt)
	if err := putJSON(ctx, st, "runs/"+ref.RunID+"/dedup/report.json", rep); err != nil {
		return nil, "", nil, err
	}
	dropped = map[string]bool{}
	taskRates = map[string]*float64{}
	for _, ax := range rep.Axes {
		taskRates[ax.Axis] = ax.ContaminationRate
	}
	for _, d := range rep.Drops {
		dropped[d.ItemID] = true
	}
	names := make([]string, len(fps))
	for i, f := range fps {
		names[i] = fmt.Sprintf("%s (%d bytes, sha256 %s)", f.URI, f.Size, f.SHA256)
	}
	return dropped, strings.Join(names, "; "), taskRates, nil
}
