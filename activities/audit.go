package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/audit"
)

// Audit runs the source-identity leakage audit (spec 003) on an axis. The
// paper audits a detector, something that rates rows, against a label it
// did not produce, pooled over sources; the axis plugins state those rows
// per item (scorers.AuditRow: a model's confidence in its own answer against
// its correctness, a judge's harm rating of a response against the prompt's
// gold label, the overlay judges' quality rating against the verifiable
// outcome). Every (detector, pooling column) pair is one pool, audited with
// the paper's fixed half-and-half rating and with trained out-of-fold
// detectors (see auditPool); an axis whose items carry no such rows (MT,
// NLG, IF without an overlay: the rating is the score) is "not auditable".
// The full reports and the audited rows go to the store, the result keeps
// the summary numbers.
func (a *Activities) Audit(ctx context.Context, in AxisInput) (AuditSummary, error) {
	defer beat(ctx, nil)()
	m, st, err := a.loadManifest(ctx, in.RunRef)
	if err != nil {
		return AuditSummary{}, err
	}
	seed := uint64(m.Config.Run.Seed)
	ax, _ := scorers.AxisNamed(in.Axis)
	designs, order := runplan.AuditDesigns(ax)
	pools, err := auditRows(ctx, st, in, designs)
	if err != nil {
		return AuditSummary{}, err
	}
	list := pools.Sorted(order)
	if len(list) == 0 {
		_, audited := ax.(scorers.Audited)
		if audited || (runplan.OverlayOn(m.Config, in.Axis) && len(m.Config.Judges) > 0) {
			return AuditSummary{Verdict: "not audited: no item has a rating by the axis's detectors (" + strings.Join(order, ", ") + ")"}, nil
		}
		return AuditSummary{Verdict: scorers.NotAuditable}, nil
	}
	var all []AuditSummary
	for _, p := range list {
		d := designs[p.Detector]
		d.Source = p.Column
		sum, err := a.auditPool(ctx, st, runfiles.AuditPrefix(in.RunID, in.Axis, p.Detector+"-"+p.Column), d, &p.Rows, seed)
		if err != nil {
			return AuditSummary{}, err
		}
		all = append(all, sum)
	}
	return headlinePool(all), nil
}

// auditRows reads the audit rows of the axis's item scores into their
// pools; a row of a detector not in designs is an error.
func auditRows(ctx context.Context, st store.Store, in AxisInput, designs map[string]scorers.AuditDesign) (*audit.Pools, error) {
	var pools audit.Pools
	key := runfiles.ScoresKey(in.RunID, in.Axis)
	err := runfiles.EachJSONLField(ctx, st, key, "audit", func(rows []scorers.AuditRow) error {
		for _, r := range rows {
			if _, known := designs[r.Detector]; !known {
				return dataError("%s: audit row of unknown detector %q", key, r.Detector)
			}
			pools.Add(r)
		}
		return nil
	})
	return &pools, err
}

// headlinePool is the axis's audit summary: the first pool that could be
// audited, the others following in Pools in their order.
func headlinePool(all []AuditSummary) AuditSummary {
	first := 0
	for i, s := range all {
		if s.Headline != nil {
			first = i
			break
		}
	}
	top := all[first]
	top.Pools = append(slices.Clone(all[:first]), all[first+1:]...)
	return top
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

// floorFirst is the stage's bound on its cost. The paper reads a pool's
// floor first: a headline below the floor (or, by the stricter rule, whose
// 95% interval reaches below it) is "too weak to interpret", and nothing
// else is read. So the stage computes the half-and-half rating's headline
// and interval first (one AUC and 2,000 bootstrap resamples: linear in the
// rows) and runs the costly steps, the 1,000 tag shuffles, the source
// fingerprint's forest and the trained detectors (forests, logistic
// regression retrained on every shuffle), only for a pool whose headline
// clears the floor. A pool that misses it says so in trained_note, with the
// command that runs the full audit from its stored rows.
//
// auditPool audits the rows of one pool, n sources, as design names them.
// It stores the rows as CSV whose columns are the design's label, source
// and detector, then runs the paper's half-and-half rating and the trained
// detectors on them, each seeded from the run's seed, and stores each full
// report as JSON.
func (a *Activities) auditPool(ctx context.Context, st store.Store, prefix string, design scorers.AuditDesign, rows *audit.Table, seed uint64) (AuditSummary, error) {
	sum, err := a.auditPoolRows(ctx, st, prefix, design, rows, seed)
	sum.Design, sum.Rows = &design, rows.Len()
	return sum, err
}

func (a *Activities) auditPoolRows(ctx context.Context, st store.Store, prefix string, design scorers.AuditDesign, rows *audit.Table, seed uint64) (AuditSummary, error) {
	n := rows.Sources()
	if n < 2 {
		return AuditSummary{Sources: n, Verdict: audit.VerdictNotPooled}, nil
	}
	cols := audit.Columns{Label: design.Label, Source: design.Source, Measurements: []string{design.Detector}}
	rowsKey := prefix + "-rows.csv"
	var csv bytes.Buffer
	if err := rows.WriteCSV(&csv, cols); err != nil {
		// Rows the command could not read back (an empty source tag) are
		// rows the audit refuses too.
		return AuditSummary{Sources: n, Verdict: "not audited: " + err.Error()}, nil
	}
	if err := putOnce(ctx, st, rowsKey, csv.Bytes()); err != nil {
		return AuditSummary{}, err
	}
	base := audit.DefaultOptions()
	base.Seed, base.Folds, base.SourceColumn, base.LabelColumn = seed, stageFolds, design.Source, design.Label

	fixed := base
	fixed.Detector, fixed.Shuffles, fixed.FloorFirst = audit.DetectorMeanHalf, stageFixedShuffles, true
	sum, err := a.auditOne(ctx, st, prefix+".json", rowsKey, rows, cols, n, fixed)
	if err != nil || sum.Headline == nil {
		return sum, err
	}
	// The floor first (see floorFirst): a pool the half-and-half rating
	// cannot read is not trained on either.
	if !*sum.FloorPassed {
		sum.TrainedNote = fmt.Sprintf("trained detectors, tag shuffles and source fingerprint not run: the headline misses the floor (%s rule), so the verdict is too weak to interpret whatever they find; run: %s",
			sum.FloorRule, auditCommand(rowsKey, cols, base))
		return sum, nil
	}

	// The trained detectors read the same rows; the fingerprint is a
	// property of the rows, so it is measured once, above. A small pool
	// whose rarer class has fewer rows than folds gets as many folds as
	// that class has rows (the summary records it).
	yes := rows.Yes()
	base.Folds = max(2, min(stageFolds, yes, rows.Len()-yes))
	logreg := base
	logreg.Detector, logreg.FingerprintTrees = audit.DetectorLogReg, -1
	logreg.Shuffles, logreg.ShuffleRetrain = logregShuffles(rows.Len()), "always"
	lr, err := a.auditOne(ctx, st, prefix+"-logreg.json", rowsKey, rows, cols, n, logreg)
	if err != nil {
		return AuditSummary{}, err
	}
	sum.Trained = append(sum.Trained, lr)
	forest := base
	forest.Detector, forest.FingerprintTrees = audit.DetectorRF, -1
	forest.ShuffleRetrain = "never"
	if forestAffordable(rows.Len(), n) {
		rf, err := a.auditOne(ctx, st, prefix+"-rf.json", rowsKey, rows, cols, n, forest)
		if err != nil {
			return AuditSummary{}, err
		}
		sum.Trained = append(sum.Trained, rf)
	} else {
		sum.TrainedNote = fmt.Sprintf("random forest left out of the stage: %d rows × √%d features is over its budget of %d; run: %s",
			rows.Len(), 1+n, forestBudget, auditCommand(rowsKey, cols, forest))
	}
	return sum, nil
}

// auditOne runs one audit and summarises it; the full report is stored at key.
func (a *Activities) auditOne(ctx context.Context, st store.Store, key, rowsKey string, rows *audit.Table, cols audit.Columns, n int, opt audit.Options) (AuditSummary, error) {
	sum := AuditSummary{Sources: n, Detector: opt.Detector, Seed: opt.Seed, RowsKey: rowsKey, Command: auditCommand(rowsKey, cols, opt)}
	rep, err := audit.RunTable(rows, cols.Measurements, opt)
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
func auditCommand(rowsKey string, cols audit.Columns, opt audit.Options) string {
	c := fmt.Sprintf("glossobench audit --data %s --label %s --source %s --measurements %s --detector %s --seed %d --shuffles %d",
		rowsKey, cols.Label, cols.Source, strings.Join(cols.Measurements, ","), opt.Detector, opt.Seed, opt.Shuffles)
	if opt.Detector == audit.DetectorRF || opt.Detector == audit.DetectorLogReg {
		c += fmt.Sprintf(" --folds %d --shuffle-retrain %s", opt.Folds, opt.ShuffleRetrain)
	}
	if opt.FingerprintTrees < 0 {
		c += " --fingerprint-trees -1"
	}
	return c
}

// corpusShardBytes is the byte range one corpus scan covers.
const corpusShardBytes = 256 << 20

// corpus is a run's dedup index and corpus plan, built once per worker.
