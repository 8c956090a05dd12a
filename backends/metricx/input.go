package metricx

import "fmt"

// Mode says which fields of a segment the model reads.
type Mode string

const (
	// ModeHybrid gives MetricX-24-Hybrid source, candidate and reference.
	ModeHybrid Mode = "hybrid"
	// ModeQE gives it source and candidate only (quality estimation).
	ModeQE Mode = "qe"
)

func parseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeHybrid, ModeQE:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode %q: want hybrid or qe", s)
}

// Input is the model input for one segment, as metricx24/predict.py's
// _make_input builds it: the fields are joined verbatim, without trimming,
// so an empty source gives "source:  candidate: ...", as it does there.
func Input(mode Mode, source, hypothesis, reference string) string {
	if mode == ModeQE {
		return "source: " + source + " candidate: " + hypothesis
	}
	return "source: " + source + " candidate: " + hypothesis + " reference: " + reference
}
