// Package calibrate checks a run against a fluent reader's expectations:
// accuracy per human-expected difficulty band (the anchors of
// inputs.ReadAnchorsFile) against the band expected of it, and whether
// accuracy falls from easy to hard.
package calibrate

import (
	"fmt"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/results/release"
)

// Run calibrates the run's item scores on axis (every axis when axis is
// ""); an item id scored on two axes must be told apart with axis.
func Run(run *release.Run, set *inputs.AnchorSet, axis string) (*Calibration, error) {
	scores, err := RunScores(run, axis)
	if err != nil {
		return nil, err
	}
	return Calibrate(set, scores), nil
}

// RunScores maps item id → score over the run's axis, or over every axis
// when axis is "".
func RunScores(run *release.Run, axis string) (map[string]float64, error) {
	if axis != "" {
		if _, ok := run.Axes[axis]; !ok {
			return nil, fmt.Errorf("--axis %s: the run has no such axis", axis)
		}
	}
	scores := map[string]float64{}
	where := map[string]string{}
	for _, name := range run.AxisNames() {
		if axis != "" && name != axis {
			continue
		}
		for _, s := range run.Axes[name].Scores {
			if prev, dup := where[s.ItemID]; dup {
				return nil, fmt.Errorf("item id %s is scored on axes %s and %s; choose one with --axis", s.ItemID, prev, name)
			}
			where[s.ItemID] = name
			scores[s.ItemID] = s.Score
		}
	}
	return scores, nil
}

// BandResult is the accuracy of one difficulty band.
type BandResult struct {
	Difficulty string       `json:"difficulty"`
	Anchors    int          `json:"anchors"`
	Scored     int          `json:"scored"`
	Accuracy   *float64     `json:"accuracy"`
	Expected   *inputs.Band `json:"expected,omitempty"`
	Verdict    string       `json:"verdict"` // within, below, above, no expectation, not scored
}

// Calibration is the accuracy per band and whether it falls from easy
// to hard.
type Calibration struct {
	Bands        []BandResult `json:"bands"`
	Monotonicity string       `json:"monotonicity"` // monotone, not monotone, undetermined
	Detail       string       `json:"detail"`
	Missing      []string     `json:"missing"` // anchored items the run did not score
}

// Calibrate scores the anchors against the run's item scores (item id →
// score; an exact-match axis scores 1 or 0, so the mean is accuracy).
func Calibrate(set *inputs.AnchorSet, scores map[string]float64) *Calibration {
	c := &Calibration{}
	var accs []float64
	var names []string
	for _, d := range inputs.Difficulties {
		br := BandResult{Difficulty: d, Verdict: "not scored"}
		if b, ok := set.Bands[d]; ok {
			br.Expected = &b
		}
		var sum float64
		for _, a := range set.Anchors {
			if a.Difficulty != d {
				continue
			}
			br.Anchors++
			if s, ok := scores[a.ItemID]; ok {
				br.Scored++
				sum += s
			} else {
				c.Missing = append(c.Missing, a.ItemID)
			}
		}
		if br.Scored > 0 {
			acc := sum / float64(br.Scored)
			br.Accuracy = &acc
			accs, names = append(accs, acc), append(names, d)
			switch {
			case br.Expected == nil:
				br.Verdict = "no expectation"
			case acc < br.Expected.Lo:
				br.Verdict = "below"
			case acc > br.Expected.Hi:
				br.Verdict = "above"
			default:
				br.Verdict = "within"
			}
		}
		if br.Anchors > 0 {
			c.Bands = append(c.Bands, br)
		}
	}
	switch {
	case len(accs) < 2:
		c.Monotonicity, c.Detail = "undetermined", "fewer than two difficulty bands were scored"
	default:
		c.Monotonicity = "monotone"
		c.Detail = "accuracy does not rise from easy to hard"
		for i := 1; i < len(accs); i++ {
			if accs[i] > accs[i-1] {
				c.Monotonicity = "not monotone"
				c.Detail = fmt.Sprintf("%s accuracy %.4f is above %s accuracy %.4f", names[i], accs[i], names[i-1], accs[i-1])
				break
			}
		}
	}
	return c
}
