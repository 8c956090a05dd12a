package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/audit"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/scorers/mcq"
)

// pooledAxis is a made-up knowledge axis of 900 scored items from three
// datasets whose yes-rates differ (0.8, 0.5, 0.2), with a confidence that
// carries the label weakly, a register on every item, and three overlay
// judges rating every answer.
func pooledAxis() ([]scorers.Item, []scorers.ItemScore) { return pooledAxisN(900) }

// pooledAxisN is pooledAxis with n items: eight audit rows per item (the
// confidence pooled by source and by register, three judges' ratings
// pooled by judge and by dataset).
func pooledAxisN(n int) ([]scorers.Item, []scorers.ItemScore) {
	r := rand.New(rand.NewPCG(7, 900))
	rj := rand.New(rand.NewPCG(8, 3))
	rates := map[string]float64{"ds-a": 0.8, "ds-b": 0.5, "ds-c": 0.2}
	var items []scorers.Item
	var scores []scorers.ItemScore
	for i := range n {
		ds := []string{"ds-a", "ds-b", "ds-c"}[i%3]
		id := fmt.Sprintf("%s/%d", ds, i)
		y := r.Float64() < rates[ds]
		rating := 0.35 * r.Float64()
		if y {
			rating += 0.2
		}
		rating += 0.45 * r.Float64()
		reg := []string{"HIGH", "LOW"}[i%2]
		items = append(items, scorers.Item{ID: id, Axis: "knowledge", Dataset: ds, Source: ds, Register: reg})
		s := scorers.ItemScore{ItemID: id, Source: ds, Rating: rating, Label: y, Score: map[bool]float64{true: 1}[y]}
		s.Audit = append(s.Audit, scorers.AuditRow{Detector: mcq.DetectorClozeConfidence, Rating: rating, Label: y, Tags: map[string]string{"source": ds, "register": reg}})
		for _, j := range []string{"judge-x", "judge-y", "judge-z"} {
			v := float64(rj.IntN(8))
			if y {
				v += 2
			}
			s.Audit = append(s.Audit, scorers.AuditRow{Detector: judge.DetectorOverlay, Rating: v / 10, Label: y, Tags: map[string]string{"judge": j, "dataset": ds}})
		}
		scores = append(scores, s)
	}
	return items, scores
}

// writeScoredRun stores a run that has reached the audit stage: its
// manifest (only the seed matters here), items and scores.
func writeScoredRun(t *testing.T, dir, run string, seed int64) {
	t.Helper()
	writeScoredRunN(t, dir, run, seed, 900)
}

func writeScoredRunN(t *testing.T, dir, run string, seed int64, n int) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	items, scores := pooledAxisN(n)
	m := manifest{Config: &config.Config{Run: config.Run{Seed: seed}}}
	if err := putJSON(ctx, st, runfiles.ManifestKey(run), m); err != nil {
		t.Fatal(err)
	}
	var ib, sb bytes.Buffer
	for i := range items {
		json.NewEncoder(&ib).Encode(items[i])
		json.NewEncoder(&sb).Encode(scores[i])
	}
	for key, b := range map[string][]byte{runfiles.ItemsKey(run, "knowledge"): ib.Bytes(), runfiles.ScoresKey(run, "knowledge"): sb.Bytes()} {
		if err := st.Put(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
}

// runAudit runs the Audit activity, through the Temporal test environment
// so the summary makes the round trip workflow history would give it.
func runAudit(t *testing.T, dir, run string) AuditSummary {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts, _ := newActs()
	acts.RegisterCPU(env)
	v, err := env.ExecuteActivity(acts.Audit, AxisInput{RunRef: RunRef{RunID: run, StoreURI: dir}, Axis: "knowledge"})
	if err != nil {
		t.Fatal(err)
	}
	var sum AuditSummary
	if err := v.Get(&sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestAuditStageTrainedDetectors(t *testing.T) {
	dir := t.TempDir()
	writeScoredRun(t, dir, "r", 1234)
	sum := runAudit(t, dir, "r")

	if sum.Sources != 3 || sum.Rows != 900 || sum.Detector != audit.DetectorMeanHalf || sum.Headline == nil || sum.Fingerprint == nil {
		t.Fatalf("fixed audit: %+v", sum)
	}
	if sum.Shuffle == nil || sum.Shuffle.N != stageFixedShuffles {
		t.Errorf("fixed audit shuffles: %+v", sum.Shuffle)
	}
	// Source-only is the yes-rate game on the rows, the same for every
	// detector: counted here by brute force over all yes/no pairs.
	_, scores := pooledAxis()
	yes, no := map[string]int{}, map[string]int{}
	for _, s := range scores {
		if s.Label {
			yes[s.Source]++
		} else {
			no[s.Source]++
		}
	}
	var wins, pairs float64
	for _, p := range scores {
		for _, n := range scores {
			if !p.Label || n.Label {
				continue
			}
			rp := float64(yes[p.Source]) / float64(yes[p.Source]+no[p.Source])
			rn := float64(yes[n.Source]) / float64(yes[n.Source]+no[n.Source])
			pairs++
			switch {
			case rp > rn:
				wins++
			case rp == rn:
				wins += 0.5
			}
		}
	}
	wantSourceOnly := wins / pairs

	var detectors []string
	for _, tr := range sum.Trained {
		detectors = append(detectors, tr.Detector)
		if tr.Headline == nil || tr.CI95 == nil || tr.MeasurementsOnly == nil || tr.SourceOnly == nil || tr.L == nil {
			t.Fatalf("%s: missing numbers: %+v", tr.Detector, tr)
		}
		if tr.Folds != stageFolds || tr.Seed != 1234 {
			t.Errorf("%s: folds %d seed %d", tr.Detector, tr.Folds, tr.Seed)
		}
		if d := *tr.SourceOnly - wantSourceOnly; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: source-only %v, counted %v", tr.Detector, *tr.SourceOnly, wantSourceOnly)
		}
		if ci := *tr.CI95; !(ci[0] <= *tr.Headline && *tr.Headline <= ci[1] && ci[0] < ci[1]) {
			t.Errorf("%s: interval %v does not hold the headline %v", tr.Detector, ci, *tr.Headline)
		}
		// The tag differs in yes-rate across datasets and the rating is
		// weak, so a trained detector that reads the tag beats one that
		// cannot: the shared split is used with and without the tag.
		if *tr.Headline <= *tr.MeasurementsOnly {
			t.Errorf("%s: headline %v not above measurements-only %v", tr.Detector, *tr.Headline, *tr.MeasurementsOnly)
		}
		if tr.Shuffle == nil || tr.Shuffle.Observed != *tr.L || !(tr.Shuffle.Max >= tr.Shuffle.P99 && tr.Shuffle.P99 >= tr.Shuffle.Mean) {
			t.Errorf("%s: shuffle summary %+v, L %v", tr.Detector, tr.Shuffle, *tr.L)
		}
		if tr.Sensitivity == nil || tr.FloorPassed == nil || tr.Floor != audit.DefaultFloor || tr.Band != audit.DefaultBand {
			t.Errorf("%s: rule fields %+v %v %v %v", tr.Detector, tr.Sensitivity, tr.FloorPassed, tr.Floor, tr.Band)
		}
		// The stored report is the full audit behind the summary.
		st, _ := store.Open(context.Background(), dir)
		var rep audit.Report
		if err := getJSON(context.Background(), st, tr.ReportKey, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Headline != *tr.Headline || rep.Verdict != tr.Verdict || rep.Detector != tr.Detector || len(rep.Sensitivity.Verdicts) != 11 {
			t.Errorf("%s: stored report %s differs from the summary", tr.Detector, tr.ReportKey)
		}
	}
	if fmt.Sprint(detectors) != "[logreg rf]" {
		t.Fatalf("trained detectors %v, want [logreg rf] (900 rows are within the forest budget)", detectors)
	}
	if n := sum.Trained[0].Shuffle.N; n != logregShuffles(900) {
		t.Errorf("logreg shuffles %d, want %d", n, logregShuffles(900))
	}
	// Every pool names its detector, label and source; the pools come in
	// order: the model's confidence by source and register, then the
	// overlay judges by judge and dataset.
	if d := sum.Design; d == nil || d.Detector != mcq.DetectorClozeConfidence || d.Label != "correct" || d.Source != "source" || sum.RowsKey != "runs/r/knowledge/audit-cloze_confidence-source-rows.csv" {
		t.Errorf("first pool: %+v %s", sum.Design, sum.RowsKey)
	}
	var pools []string
	for _, p := range sum.Pools {
		pools = append(pools, fmt.Sprintf("%s/%s/%s:%d/%d", p.Design.Detector, p.Design.Label, p.Design.Source, p.Rows, p.Sources))
		if len(p.Trained) != 2 || p.Trained[0].Headline == nil {
			t.Errorf("pool %s: trained %+v", p.Design.Source, p.Trained)
		}
	}
	if want := "[cloze_confidence/correct/register:900/2 judge_rating/correct/judge:2700/3 judge_rating/correct/dataset:2700/3]"; fmt.Sprint(pools) != want {
		t.Errorf("pools %v, want %s", pools, want)
	}
	// Each pool's one-line report (profile and HTML report print it) names
	// what the rating is scored against, not only the detector and source.
	for _, p := range append([]AuditSummary{sum}, sum.Pools...) {
		for _, l := range append([]AuditSummary{p}, p.Trained...) {
			if want := "label: correct; source: " + p.Design.Source + "; measurements: " + p.Design.Detector; !strings.Contains(l.Line, want) {
				t.Errorf("pool %s, %s: line %q lacks %q", p.Design.Source, l.Detector, l.Line, want)
			}
		}
	}

	// The same rows and seed give the same numbers, to the last bit.
	dir2 := t.TempDir()
	writeScoredRun(t, dir2, "r", 1234)
	a, _ := json.Marshal(sum)
	b, _ := json.Marshal(runAudit(t, dir2, "r"))
	if !bytes.Equal(a, b) {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
	// Another seed moves the seeded numbers (folds, interval, shuffles).
	dir3 := t.TempDir()
	writeScoredRun(t, dir3, "r", 99)
	other := runAudit(t, dir3, "r")
	if *other.Trained[0].CI95 == *sum.Trained[0].CI95 && other.Trained[0].Shuffle.Mean == sum.Trained[0].Shuffle.Mean {
		t.Error("seed 99 gives the logreg interval and shuffles of seed 1234: the run's seed is not used")
	}
}

// TestAuditStageMatchesLibrary re-audits the stored rows as the command
// does (audit.ReadFile, then audit.Run with the options the summary's
// command names) and gets the stage's numbers.
func TestAuditStageMatchesLibrary(t *testing.T) {
	dir := t.TempDir()
	writeScoredRun(t, dir, "r", 1234)
	sum := runAudit(t, dir, "r")
	d := sum.Design
	for _, s := range append([]AuditSummary{sum}, sum.Trained...) {
		rows, err := audit.ReadFile(dir+"/"+s.RowsKey, audit.Columns{Label: d.Label, Source: d.Source, Measurements: []string{d.Detector}})
		if err != nil {
			t.Fatal(err)
		}
		opt := audit.DefaultOptions()
		opt.Detector, opt.Seed, opt.Shuffles = s.Detector, s.Seed, s.Shuffle.N
		if s.Detector != audit.DetectorMeanHalf {
			opt.FingerprintTrees = -1
			opt.ShuffleRetrain = map[string]string{audit.DetectorLogReg: "always", audit.DetectorRF: "never"}[s.Detector]
		}
		rep, err := audit.Run(rows, []string{d.Detector}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Headline != *s.Headline || rep.CI95 != *s.CI95 || rep.MeasurementsOnly != *s.MeasurementsOnly ||
			rep.SourceOnly != *s.SourceOnly || rep.L != *s.L || rep.Verdict != s.Verdict || *rep.Shuffle != *s.Shuffle {
			t.Errorf("%s: library %v %v %v %v %v %q %+v; stage %v %v %v %v %v %q %+v", s.Detector,
				rep.Headline, rep.CI95, rep.MeasurementsOnly, rep.SourceOnly, rep.L, rep.Verdict, *rep.Shuffle,
				*s.Headline, *s.CI95, *s.MeasurementsOnly, *s.SourceOnly, *s.L, s.Verdict, *s.Shuffle)
		}
	}
}

// The audit stage holds an axis's pools by column (audit.Table: a rating,
// a source index and a label bit per row) and audits one pool at a time.
// Between a 2,000- and a 10,000-item axis (eight audit rows per item, in
// four pools) its peak live heap grows by at most 128 bytes per audit row:
// 65 measured, of which about 12 are the held rows and the rest the work
// of auditing the largest pool (its logistic-regression folds, retrained
// per shuffle on two workers). Holding []audit.Row (56 bytes a row) and a
// row-slice per feature row it grew 196.
func TestAuditStageMemoryPerRow(t *testing.T) {
	if testing.Short() {
		t.Skip("audits of 16,000 and 80,000 rows")
	}
	// Collect often, so the live heap sampled at each cycle follows the
	// peak closely instead of by the default 100% steps.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	peak := func(n int) uint64 {
		dir := t.TempDir()
		writeScoredRunN(t, dir, "mem", 3, n)
		return peakLiveHeap(func() { runAudit(t, dir, "mem") })
	}
	small, large := peak(2000), peak(10000)
	perRow := float64(int64(large)-int64(small)) / (8 * 8000)
	t.Logf("audit peak live heap %d KiB at 2,000 items, %d KiB at 10,000: %+.0f bytes per audit row (%+.0f per item)",
		small>>10, large>>10, perRow, 8*perRow)
	if perRow > 128 {
		t.Errorf("the audit stage grows %.0f bytes per audit row; want at most 128", perRow)
	}
}
