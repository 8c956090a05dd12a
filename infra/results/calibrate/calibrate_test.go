package calibrate

import (
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/results/inputs"
)

func TestCalibrateVerdicts(t *testing.T) {
	set := &inputs.AnchorSet{Bands: map[string]inputs.Band{"easy": {Lo: 0.8, Hi: 1}, "hard": {Lo: 0, Hi: 0.3}}}
	for i, d := range []string{"easy", "easy", "medium", "medium", "hard", "hard"} {
		set.Anchors = append(set.Anchors, inputs.Anchor{ItemID: string(rune('a' + i)), Difficulty: d})
	}
	c := Calibrate(set, map[string]float64{"a": 1, "b": 1, "c": 1, "d": 0, "e": 0, "f": 1, "zz": 1})
	if c.Monotonicity != "monotone" {
		t.Errorf("1, 0.5, 0.5: %s (%s)", c.Monotonicity, c.Detail)
	}
	if c.Bands[0].Verdict != "within" || c.Bands[1].Verdict != "no expectation" || c.Bands[2].Verdict != "above" {
		t.Errorf("verdicts %+v", c.Bands)
	}
	c = Calibrate(set, map[string]float64{"a": 0, "b": 1, "c": 1, "d": 1, "e": 0})
	if c.Monotonicity != "not monotone" || !strings.Contains(c.Detail, "medium accuracy 1.0000 is above easy accuracy 0.5000") {
		t.Errorf("0.5, 1, 0: %s (%s)", c.Monotonicity, c.Detail)
	}
	if len(c.Missing) != 1 || c.Missing[0] != "f" {
		t.Errorf("missing %v", c.Missing)
	}
	c = Calibrate(set, map[string]float64{"a": 1})
	if c.Monotonicity != "undetermined" {
		t.Errorf("one band: %s", c.Monotonicity)
	}
}
