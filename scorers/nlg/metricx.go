package nlg

import (
	"context"
	"fmt"
	"sync"

	"github.com/glossobench/glossobench/scorers"
)

// MetricX scores translations with a MetricX-24 model: one error score per
// segment, from 0 (perfect) to 25 (worst), as google-research/metricx
// prints them. No implementation ships with this package: a backend that
// can serve the model registers one with RegisterMetricX, and a run turns
// it on with the axis option `metricx: <name>`.
type MetricX interface {
	Score(ctx context.Context, sources, hyps, refs []string) ([]float64, error)
}

var metricxReg = struct {
	sync.Mutex
	open   map[string]func() (MetricX, error)
	opened map[string]MetricX
}{open: map[string]func() (MetricX, error){}, opened: map[string]MetricX{}}

// RegisterMetricX makes a MetricX-24 implementation available under name.
// open runs once, on first use, so an unused model is never loaded.
func RegisterMetricX(name string, open func() (MetricX, error)) {
	metricxReg.Lock()
	defer metricxReg.Unlock()
	metricxReg.open[name] = open
	delete(metricxReg.opened, name)
}

// metricxModel returns the named implementation, opening it on first use.
func metricxModel(name string) (MetricX, error) {
	metricxReg.Lock()
	defer metricxReg.Unlock()
	if m, ok := metricxReg.opened[name]; ok {
		return m, nil
	}
	open, ok := metricxReg.open[name]
	if !ok {
		return nil, fmt.Errorf("no MetricX-24 implementation registered as %q", name)
	}
	m, err := open()
	if err != nil {
		return nil, fmt.Errorf("opening MetricX-24 %q: %w", name, err)
	}
	metricxReg.opened[name] = m
	return m, nil
}

// metricxMaxError is MetricX-24's worst score; SEA-HELM normalises
// (25 - x) / 25.
const metricxMaxError = 25

// addMetricX scores the translations with MetricX-24 when the items ask for
// it, as a secondary metric; the headline stays chrF++. It returns the note
// for the result.
func addMetricX(res *scorers.AxisResult, exs []extra, sources, hyps, refs []string) string {
	name := ""
	for _, e := range exs {
		if e.MetricX != "" {
			name = e.MetricX
			break
		}
	}
	if name == "" {
		return "metricx not configured; chrF++ only"
	}
	m, err := metricxModel(name)
	if err != nil {
		return fmt.Sprintf("metricx unavailable (%v); chrF++ only", err)
	}
	scores, err := m.Score(context.Background(), sources, hyps, refs)
	if err == nil && len(scores) != len(hyps) {
		err = fmt.Errorf("%d scores for %d segments", len(scores), len(hyps))
	}
	if err != nil {
		return fmt.Sprintf("metricx %s failed (%v); chrF++ only", name, err)
	}
	sum, norm := 0.0, 0.0
	for i, x := range scores {
		sum += x
		norm += (metricxMaxError - min(max(x, 0), metricxMaxError)) / metricxMaxError
		res.Items[i].Fields["metricx24"] = x
	}
	res.Secondary["metricx24"] = sum / float64(len(scores))
	res.Secondary["metricx24_normalized"] = norm / float64(len(scores))
	return fmt.Sprintf("metricx24 (%s) reported as secondary; headline is chrF++", name)
}
