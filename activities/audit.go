package activities

import (
	"context"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/audit"
	"github.com/glossobench/glossobench/scorers/judge"
)

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
