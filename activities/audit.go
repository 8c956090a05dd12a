package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/audit"
	"github.com/glossobench/glossobench/scorers/judge"
)

// Audit runs the source-identity leakage audit (spec 003) on an axis whose
// items pool several sources: the scorer's per-item rating is the
// measurement, correctness (or the gold label) the label. Every pool is
// audited with the paper's fixed half-and-half rating and with trained
// out-of-fold detectors (see auditPool); the full reports and the audited
// rows go to the store, the result keeps the summary numbers.
func (a *Activities) Audit(ctx context.Context, in AxisInput) (AuditSummary, error) {
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return AuditSummary{}, err
	}
	seed := uint64(m.Config.Run.Seed)
	// Only what the audit reads is kept of each item score: the rows are
	// compact, the item scores (with their per-item details) are not.
	sources := map[string]bool{}
	var rows []audit.Row
	var ids []string
	err = runfiles.EachJSONL(ctx, st, runfiles.ScoresKey(in.RunID, in.Axis), func(s scorers.ItemScore) error {
		sources[s.Source] = true
		rows = append(rows, audit.Row{Label: s.Label, Source: s.Source, Measurements: []float64{s.Rating}})
		ids = append(ids, s.ItemID)
		return nil
	})
	if err != nil {
		return AuditSummary{}, err
	}
	sum, err := a.auditPool(ctx, st, runfiles.AuditPrefix(in.RunID, in.Axis, ""), "source", rows, len(sources), seed)
	if err != nil {
		return AuditSummary{}, err
	}
	// Judges are a pool too: every judge grades the same answers, so the
	// judge tag should carry nothing (the paper's source-carries-nothing design).
	judgeRows, judges, err := a.judgeRows(ctx, st, in.RunID, in.Axis, ids, rows)
	if err != nil {
		return AuditSummary{}, err
	}
	if judges >= 2 {
		byJudge, err := a.auditPool(ctx, st, runfiles.AuditPrefix(in.RunID, in.Axis, "judges"), "judge", judgeRows, judges, seed)
		if err != nil {
			return AuditSummary{}, err
		}
		sum.ByJudge = &byJudge
	}
	// Registers pool an axis too when the data labels them.
	register := map[string]string{}
	err = runfiles.EachJSONL(ctx, st, runfiles.ItemsKey(in.RunID, in.Axis), func(it scorers.Item) error {
		if it.Register != "" {
			register[it.ID] = it.Register
		}
		return nil
	})
	if err != nil {
		return AuditSummary{}, err
	}
	var regRows []audit.Row
	regs := map[string]bool{}
	for i, id := range ids {
		if g := register[id]; g != "" {
			regs[g] = true
			regRows = append(regRows, audit.Row{Label: rows[i].Label, Source: g, Measurements: rows[i].Measurements})
		}
	}
	if len(regs) >= 2 {
		byReg, err := a.auditPool(ctx, st, runfiles.AuditPrefix(in.RunID, in.Axis, "registers"), "register", regRows, len(regs), seed)
		if err != nil {
			return AuditSummary{}, err
		}
		sum.ByRegister = &byReg
	}
	return sum, nil
}

// The trained detectors' budget in the stage. Logistic regression is
// retrained out of fold on every tag shuffle (five fits per shuffle, about
// 30–90 ms on 15,000 rows), so the shuffle count shrinks with the rows:
// 200 up to 1,500 rows, 20 from 15,000 (about 2 s); the count is recorded
// in the summary. A forest's shuffles hold its headline (retraining it
// costs a full audit per shuffle) and so are cheap; the forest itself is
// grown when rows × √features stays under forestBudget, about 2 s on 2
// cores (100 trees, 5 folds, both views); larger pools say so and give the
// command that runs it.
const (
	stageFolds         = 5
	stageFixedShuffles = 1000
	forestBudget       = 75000
)

func logregShuffles(rows int) int { return min(200, max(20, 300_000/max(rows, 1))) }

func forestAffordable(rows, sources int) bool {
	return float64(rows)*math.Sqrt(float64(1+sources)) <= forestBudget
}

// auditPool audits rows pooled from n sources (tagged by the named column
// in the report line). It stores the rows as CSV, then runs the paper's
// half-and-half rating and the trained detectors on them, each seeded from
// the run's seed, and stores each full report as JSON.
func (a *Activities) auditPool(ctx context.Context, st store.Store, prefix, column string, rows []audit.Row, n int, seed uint64) (AuditSummary, error) {
	if n < 2 {
		return AuditSummary{Sources: n, Verdict: audit.VerdictNotPooled}, nil
	}
	names := []string{audit.RatingMeasurement}
	rowsKey := prefix + "-rows.csv"
	var csv bytes.Buffer
	if err := audit.WriteCSV(&csv, rows, names); err != nil {
		// Rows the command could not read back (an empty source tag) are
		// rows the audit refuses too.
		return AuditSummary{Sources: n, Verdict: "not audited: " + err.Error()}, nil
	}
	if err := putOnce(ctx, st, rowsKey, csv.Bytes()); err != nil {
		return AuditSummary{}, err
	}
	base := audit.DefaultOptions()
	base.Seed, base.Folds, base.SourceColumn = seed, stageFolds, column

	fixed := base
	fixed.Detector, fixed.Shuffles = audit.DetectorMeanHalf, stageFixedShuffles
	sum, err := a.auditOne(ctx, st, prefix+".json", rowsKey, rows, names, n, fixed)
	if err != nil || sum.Headline == nil {
		return sum, err
	}

	// The trained detectors read the same rows; the fingerprint is a
	// property of the rows, so it is measured once, above. A small pool
	// whose rarer class has fewer rows than folds gets as many folds as
	// that class has rows (the summary records it).
	var yes int
	for _, r := range rows {
		if r.Label {
			yes++
		}
	}
	base.Folds = max(2, min(stageFolds, yes, len(rows)-yes))
	logreg := base
	logreg.Detector, logreg.FingerprintTrees = audit.DetectorLogReg, -1
	logreg.Shuffles, logreg.ShuffleRetrain = logregShuffles(len(rows)), "always"
	lr, err := a.auditOne(ctx, st, prefix+"-logreg.json", rowsKey, rows, names, n, logreg)
	if err != nil {
		return AuditSummary{}, err
	}
	sum.Trained = append(sum.Trained, lr)
	forest := base
	forest.Detector, forest.FingerprintTrees = audit.DetectorRF, -1
	forest.ShuffleRetrain = "never"
	if forestAffordable(len(rows), n) {
		rf, err := a.auditOne(ctx, st, prefix+"-rf.json", rowsKey, rows, names, n, forest)
		if err != nil {
			return AuditSummary{}, err
		}
		sum.Trained = append(sum.Trained, rf)
	} else {
		sum.TrainedNote = fmt.Sprintf("random forest left out of the stage: %d rows × √%d features is over its budget of %d; run: %s",
			len(rows), 1+n, forestBudget, auditCommand(rowsKey, forest))
	}
	return sum, nil
}

// auditOne runs one audit and summarises it; the full report is stored at key.
func (a *Activities) auditOne(ctx context.Context, st store.Store, key, rowsKey string, rows []audit.Row, names []string, n int, opt audit.Options) (AuditSummary, error) {
	sum := AuditSummary{Sources: n, Detector: opt.Detector, Seed: opt.Seed, RowsKey: rowsKey, Command: auditCommand(rowsKey, opt)}
	rep, err := audit.Run(rows, names, opt)
	if err != nil {
		sum.Verdict = "not audited: " + err.Error()
		return sum, nil
	}
	if rep.Skip != "" {
		sum.Verdict = "not audited: " + rep.Skip
		return sum, nil
	}
	// A report that cannot be encoded (a NaN or Inf the library let
	// through) would fail every retry alike; say so instead of failing the run.
	if _, err := json.Marshal(rep); err != nil {
		sum.Verdict = "not audited: the report does not encode: " + err.Error()
		return sum, nil
	}
	if err := putJSON(ctx, st, key, rep); err != nil {
		return AuditSummary{}, err
	}
	return summarize(sum, rep, key), nil
}

// summarize copies a report's numbers into the summary that travels
// through workflow history; sum already names the detector and the rows.
func summarize(sum AuditSummary, rep audit.Report, key string) AuditSummary {
	sum.Verdict, sum.Line, sum.ReportKey = rep.Verdict, rep.Line(), key
	sum.Headline, sum.MeasurementsOnly, sum.SourceOnly = &rep.Headline, &rep.MeasurementsOnly, &rep.SourceOnly
	sum.L, sum.LMin = &rep.L, &rep.LMin
	if rep.BootstrapN > 0 {
		sum.CI95 = &rep.CI95
	}
	sum.Folds, sum.Floor, sum.Band = rep.Folds, rep.Rule.Floor, rep.Rule.Band
	sum.FloorPassed, sum.FloorRule = &rep.Reading.FloorPassed, rep.Reading.Rule
	sum.Shuffle, sum.Fingerprint = rep.Shuffle, rep.Fingerprint
	sum.Sensitivity = &AuditSensitivity{Stable: rep.Sensitivity.Stable, Regions: rep.Sensitivity.Regions(rep.Verdict)}
	sum.Warnings = rep.Warnings
	return sum
}

// auditCommand is the glossobench audit call that reproduces an audit from
// its stored rows (the rows key is relative to the store).
func auditCommand(rowsKey string, opt audit.Options) string {
	c := fmt.Sprintf("glossobench audit --data %s --label %s --source %s --measurements %s --detector %s --seed %d --shuffles %d",
		rowsKey, audit.LabelColumn, audit.SourceColumn, audit.RatingMeasurement, opt.Detector, opt.Seed, opt.Shuffles)
	if opt.Detector == audit.DetectorRF || opt.Detector == audit.DetectorLogReg {
		c += fmt.Sprintf(" --folds %d --shuffle-retrain %s", opt.Folds, opt.ShuffleRetrain)
	}
	if opt.FingerprintTrees < 0 {
		c += " --fingerprint-trees -1"
	}
	return c
}

// judgeRows turns every valid judge rating of a scored item into an audit
// row: the item's label, the judge as the source, the rating as the
// measurement. Rows come in item-id order, then in the item's judge
// order, so the folds, bootstrap and shuffles see the same rows every run.
func (a *Activities) judgeRows(ctx context.Context, st store.Store, run, axis string, ids []string, scored []audit.Row) ([]audit.Row, int, error) {
	label := make(map[string]bool, len(ids))
	for i, id := range ids {
		label[id] = scored[i].Label
	}
	var rows []audit.Row
	judges := map[string]bool{}
	for shard := 0; ; shard++ {
		rated, parts, err := readRated(ctx, st, run, axis, shard)
		if err != nil {
			return nil, 0, err
		}
		if parts == 0 {
			if ok, err := st.Exists(ctx, runfiles.ShardItemsKey(run, axis, shard)); err != nil || !ok {
				return rows, len(judges), err
			}
			continue
		}
		ids := make([]string, 0, len(rated))
		for id := range rated {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			l, scored := label[id]
			rs, err := judge.FromPrediction(rated[id])
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
