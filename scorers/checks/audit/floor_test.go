package audit

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIntervalBelowFloorDecides: the paper's reading near the floor is by
// the low end of the headline's 95% interval, and a headline is near the
// floor whenever its interval reaches below it, not only when the point
// estimate sits within a fixed width above it. The case: a 20-row
// pool, headline 0.72, interval 0.42 to 1.00, is too weak to interpret, not
// source-dominated.
func TestIntervalBelowFloorDecides(t *testing.T) {
	r := DefaultRule()
	got := r.Read(0.72, 0.42, 0.70)
	if got.Verdict != VerdictTooWeak || got.Rule != RuleStricter || got.FloorPassed {
		t.Errorf("headline 0.72 (0.42 to 1.00): %q by the %s rule (%s); want too weak by the stricter rule", got.Verdict, got.Rule, got.RuleDetail)
	}
	// Far above the floor, an interval reaching below it still decides.
	if got := r.Read(0.90, 0.60, 0.85); got.FloorPassed {
		t.Errorf("headline 0.90 (low end 0.60) passed the floor: %s", got.RuleDetail)
	}
	// An interval wholly above the floor leaves the point reading.
	if got := r.Read(0.72, 0.66, 0.70); !got.FloorPassed || got.Rule != RulePoint || got.Verdict != VerdictSourceDominated {
		t.Errorf("headline 0.72 (low end 0.66): %+v", got)
	}
	// Without an interval only the point rule can be applied, and it says so.
	if got := r.Read(0.72, math.NaN(), 0.70); !got.FloorPassed || !strings.Contains(got.RuleDetail, "no interval") {
		t.Errorf("no interval: %+v", got)
	}
}

// TestRuleLinesAreAtLeast pins the paper's "at least": the floor is passed
// by a headline of 0.65 and L of 0.90 is flagged, to within the printing
// tolerance, so a comparison turned from ≥ into > fails here.
func TestRuleLinesAreAtLeast(t *testing.T) {
	r := DefaultRule()
	// L exactly at the band's line, as the rule draws it.
	if got := r.Read(1, math.NaN(), r.Band-eps); got.Verdict != VerdictSourceDominated {
		t.Errorf("L at the band (%v): %q, want source-dominated", got.L, got.Verdict)
	}
	// L 0.90 from two printed scores (0.72 ÷ 0.80 is a hair under 0.9 in floating point).
	if got := r.Read(0.80, math.NaN(), 0.72); got.Verdict != VerdictSourceDominated {
		t.Errorf("L %v: %q, want source-dominated", got.L, got.Verdict)
	}
	if got := r.Read(0.80, math.NaN(), 0.7199); got.Verdict != VerdictNotFlagged {
		t.Errorf("L %v, under the band: %q, want not flagged", got.L, got.Verdict)
	}
	// The headline exactly at the floor's line passes; the low end too.
	if got := r.Read(r.Floor-eps, math.NaN(), 0.6); !got.FloorPassed {
		t.Errorf("headline at the floor: %s", got.RuleDetail)
	}
	if got := r.Read(0.70, r.Floor-eps, 0.6); !got.FloorPassed {
		t.Errorf("low end at the floor: %s", got.RuleDetail)
	}
	if got := r.Read(0.65-1e-6, math.NaN(), 0.6); got.FloorPassed {
		t.Errorf("headline under the floor passed: %s", got.RuleDetail)
	}
}

// TestSmallPoolWarned: a pool too small for its interval to mean much says
// so; a large one does not.
func TestSmallPoolWarned(t *testing.T) {
	pool := func(n int) []Row {
		r := rand.New(rand.NewPCG(5, uint64(n)))
		var rows []Row
		for i := range n {
			y := i%2 == 0
			v := r.Float64()
			if y {
				v += 0.4
			}
			rows = append(rows, Row{Label: y, Source: []string{"a", "b"}[i%4/2], Measurements: []float64{v / 1.4}})
		}
		return rows
	}
	opt := DefaultOptions()
	opt.Shuffles, opt.FingerprintTrees = 0, -1
	small := func(rows []Row) bool {
		rep, err := Run(rows, []string{"m"}, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range rep.Warnings {
			if strings.HasPrefix(w, "small pool:") {
				return true
			}
		}
		return false
	}
	if !small(pool(20)) {
		t.Error("20 rows: no small-pool warning")
	}
	if small(pool(2000)) {
		t.Error("2,000 rows: a small-pool warning")
	}
}
