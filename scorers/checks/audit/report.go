package audit

import (
	"fmt"
	"math"
	"strings"
)

// Line is the paper's one-line report: the three scores, L with its lowest
// possible value, the floor check and the rule used, the source tag and
// measurement list, and one verdict. Numbers, not a badge.
func (r Report) Line() string {
	label := r.LabelColumn
	if label == "" {
		label = "label" // a report written before the label was named
	}
	head := fmt.Sprintf("leakage audit [%s; label: %s; source: %s; measurements: %s]", r.Detector, label, r.SourceColumn, strings.Join(r.Measurements, ","))
	if r.Skip != "" {
		return head + ": " + r.Skip
	}
	var b strings.Builder
	b.WriteString(head)
	fmt.Fprintf(&b, ": headline %.3f", r.Headline)
	if r.BootstrapN > 0 {
		fmt.Fprintf(&b, " (95%% %.3f to %.3f)", r.CI95[0], r.CI95[1])
	}
	if r.Detector == DetectorEach {
		fmt.Fprintf(&b, " · measurements-only %.3f to %.3f (one measurement at a time)", r.MeasurementsMin, r.MeasurementsOnly)
	} else {
		fmt.Fprintf(&b, " · measurements-only %.3f", r.MeasurementsOnly)
	}
	fmt.Fprintf(&b, " · source-only %.3f", r.SourceOnly)
	if r.Reading.FloorPassed {
		fmt.Fprintf(&b, " · L %.2f (lowest possible %.2f)", r.L, r.LMin)
	} else {
		fmt.Fprintf(&b, " · L %.2f printed, not read (lowest possible %.2f)", r.L, r.LMin)
	}
	verb := "fails"
	if r.Reading.FloorPassed {
		verb = "passes"
	}
	fmt.Fprintf(&b, " · floor %.2f %s (%s rule)", r.Rule.Floor, verb, r.Reading.Rule)
	if r.Reading.FloorPassed {
		fmt.Fprintf(&b, " · band %.2f", r.Rule.Band)
	}
	fmt.Fprintf(&b, " · verdict: %s", r.Verdict)
	if r.Rule.Floor == DefaultFloor && r.Rule.Band == DefaultBand {
		b.WriteString(" · floor and band are the authors' defaults")
	} else {
		b.WriteString(" · floor/band set by the auditor (the authors' defaults are 0.65/0.90)")
	}
	return b.String()
}

// Details is the multi-line text beside the line: yes-rates, shuffles,
// fingerprint, sensitivity, repairs and warnings.
func (r Report) Details() string {
	if r.Skip != "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rows %d, yes %d (%.1f%%), sources %d\n", r.Rows, r.Yes, 100*float64(r.Yes)/float64(r.Rows), len(r.Sources))
	for _, s := range r.Sources {
		fmt.Fprintf(&b, "  %-30s %6d rows  yes-rate %5.1f%%\n", s.Source, s.Rows, 100*s.Rate)
	}
	fmt.Fprintln(&b, "reading:", r.Reading.RuleDetail)
	for _, s := range r.Single {
		fmt.Fprintf(&b, "  %s alone: %.3f\n", s.Name, s.AUC)
	}
	if r.Shuffle != nil {
		fmt.Fprintf(&b, "tag shuffles (%d): L mean %.3f, 99th percentile %.3f, max %.3f; observed %.3f (share of shuffles at least as high %.3f); headline %s\n",
			r.Shuffle.N, r.Shuffle.Mean, r.Shuffle.P99, r.Shuffle.Max, r.Shuffle.Observed, r.Shuffle.AtLeastObs, r.Shuffle.Headline)
	}
	if r.Fingerprint != nil {
		fmt.Fprintf(&b, "source fingerprint: macro one-vs-rest AUC %.3f (%s)\n", r.Fingerprint.MacroAUC, r.Fingerprint.Method)
	}
	if r.Sensitivity.Stable {
		fmt.Fprintf(&b, "sensitivity: the verdict is the same for every floor 0.60–0.70 and band 0.85–0.95\n")
	} else {
		fmt.Fprintf(&b, "sensitivity: the verdict changes at %d of %d grid cells, e.g. %s\n", len(r.Sensitivity.Changes),
			len(r.Sensitivity.Floors)*len(r.Sensitivity.Bands), r.Sensitivity.Changes[0])
	}
	if p := r.Repairs; p != nil {
		fmt.Fprintf(&b, "repairs (%s):\n", p.Note)
		for _, s := range p.PerSource {
			if s.Skip != "" {
				fmt.Fprintf(&b, "  per-source headline %s: skipped, %s\n", s.Source, s.Skip)
			} else {
				fmt.Fprintf(&b, "  per-source headline %s: %.3f\n", s.Source, s.AUC)
			}
		}
		if p.Reweighted != nil && !math.IsNaN(*p.Reweighted) {
			fmt.Fprintf(&b, "  reweighted to one yes-rate: %.3f\n", *p.Reweighted)
		}
		if p.Reweight != "" {
			fmt.Fprintf(&b, "  %s\n", p.Reweight)
		}
		fmt.Fprintf(&b, "  per-source level removed: %.3f\n", p.Level)
	}
	for _, w := range r.Warnings {
		fmt.Fprintln(&b, "warning:", w)
	}
	fmt.Fprintln(&b, r.Defaults)
	return b.String()
}
