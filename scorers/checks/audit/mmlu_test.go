package audit

import (
	"testing"
)

// The paper's audit 4 on the real pooled MMLU test split (14,042 items,
// 57 subjects, stand-in label "gold is option A"): its source-only score
// 0.556 follows from the data alone. The measurements here are length
// counts (testdata/audit/make_mmlu.py), not the paper's exact list, so only
// the verdict is compared: too weak to interpret, L printed above 0.90.
func TestMMLUPooledAudit(t *testing.T) {
	cols := Columns{Label: "gold_is_a", Source: "subject",
		Measurements: []string{"question_tokens", "option_tokens", "longest_option_tokens", "options"}}
	rows, err := ReadFile("../../../testdata/audit/mmlu_audit.csv.gz", cols)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Detector, o.SourceColumn = DetectorRF, "subject"
	o.Trees, o.Shuffles, o.Bootstrap, o.FingerprintTrees = 30, 200, 500, 10
	if testing.Short() {
		o.Detector, o.FingerprintTrees = DetectorMeanHalf, -1
	}
	rep, err := Run(rows, cols.Measurements, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Line())
	t.Log(rep.Details())
	if rep.Rows != 14042 || len(rep.Sources) != 57 {
		t.Errorf("%d rows, %d sources", rep.Rows, len(rep.Sources))
	}
	if round(rep.SourceOnly, 3) != 0.556 {
		t.Errorf("source-only %.4f, paper 0.556", rep.SourceOnly)
	}
	if rep.Verdict != VerdictTooWeak || rep.L <= 0.90 || rep.Reading.FloorPassed {
		t.Errorf("verdict %q, L %.3f; paper: too weak to interpret, L 1.09", rep.Verdict, rep.L)
	}
}
