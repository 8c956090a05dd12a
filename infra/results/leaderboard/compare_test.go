package leaderboard

import (
	"fmt"
	"testing"
)

// TestCompareLatestRows: each model's latest row is compared; an axis only
// one row scored has a nil side; the ranking mean is over the axes both
// rows rank on; models on one board only are left out.
func TestCompareLatestRows(t *testing.T) {
	v1 := []Row{
		{ModelID: "m", Seq: 1, MS: 0.1, Scores: map[string]float64{"knowledge": 0.1}},
		{ModelID: "m", Seq: 2, MS: 0.5, Scores: map[string]float64{"knowledge": 0.4, "nlu": 0.6}, ReasoningMode: "thinking"},
		{ModelID: "gone", Seq: 3, MS: 0.2},
	}
	v2 := []Row{{ModelID: "m", MS: 0.7, Scores: map[string]float64{"knowledge": 0.7, "nlg": 0.2}, RankingWeights: map[string]float64{"knowledge": 1}}}
	got := Compare(LatestByModel(v1), LatestByModel(v2))
	if len(got) != 1 || got[0].Model != "m" || got[0].A.Seq != 2 {
		t.Fatalf("compared %+v", got)
	}
	show := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprint(*v)
	}
	var lines []string
	for _, d := range got[0].Deltas {
		lines = append(lines, d.Axis+" "+show(d.A)+" "+show(d.B))
	}
	want := "[knowledge 0.4 0.7 nlg - 0.2 nlu 0.6 - MS 0.5 0.7 MS_ranking (knowledge) 0.4 0.7]"
	if fmt.Sprint(lines) != want {
		t.Errorf("deltas %v, want %v", lines, want)
	}
	if m := ReasoningMismatches(got); fmt.Sprint(m) != "[m (thinking vs unspecified)]" {
		t.Errorf("mismatches %v", m)
	}
}

// TestRankOrder: highest ranking mean first, no mean last, ties by Seq.
func TestRankOrder(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []Row{{Seq: 4}, {Seq: 1}, {Seq: 3}, {Seq: 2}}
	got := RankOrder(rows, []*float64{f(0.5), nil, f(0.5), f(0.9)})
	if fmt.Sprint(got) != "[3 2 0 1]" {
		t.Errorf("order %v, want [3 2 0 1]", got)
	}
}

// TestCompareByModelIdentity: rows of one id that pin other weights are
// compared with a warning; a model renamed between boards is paired by its
// weights' SHA-256.
func TestCompareByModelIdentity(t *testing.T) {
	pins := func(sha string) map[string]string { return map[string]string{"model_sha256": sha} }
	v1 := []Row{
		{ModelID: "m", MS: 0.5, Pins: pins("aaa")},
		{ModelID: "old-name", MS: 0.3, Pins: pins("ccc")},
		{ModelID: "alone", MS: 0.1, Pins: pins("ddd")},
	}
	v2 := []Row{
		{ModelID: "m", MS: 0.6, Pins: pins("bbb")},
		{ModelID: "new-name", MS: 0.4, Pins: pins("ccc")},
		{ModelID: "stranger", MS: 0.9, Pins: pins("eee")},
	}
	got := Compare(LatestByModel(v1), LatestByModel(v2))
	var names []string
	for _, c := range got {
		names = append(names, c.Model)
	}
	if fmt.Sprint(names) != "[m old-name = new-name]" {
		t.Errorf("pairs %v", names)
	}
	if w := IdentityMismatches(got); fmt.Sprint(w) != "[m (model_sha256 aaa vs bbb)]" {
		t.Errorf("identity mismatches %v", w)
	}
}
