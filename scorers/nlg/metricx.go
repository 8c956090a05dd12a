package nlg

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/glossobench/glossobench/scorers"
)

// MetricX scores translations with a MetricX-24 model: one error score per
// segment, from 0 (perfect) to 25 (worst), as google-research/metricx
// prints them. This package ships no implementation; a run turns one on with
// the axis option `metricx: <name or spec>`:
//
//   - a name registered with RegisterMetricX (tests, embedders), or
//   - a spec FAMILY+http(s)://HOST:PORT[/PATH][?k=v...] whose family a client
//     package registered with RegisterMetricXSpec, e.g. backends/metricx's
//     `tei+http://127.0.0.1:8080?mode=hybrid`.
type MetricX interface {
	Score(ctx context.Context, sources, hyps, refs []string) ([]float64, error)
}

var metricxReg = struct {
	sync.Mutex
	open   map[string]func() (MetricX, error)
	specs  map[string]func(spec string) (MetricX, error) // by family ("tei")
	opened map[string]MetricX
}{
	open:   map[string]func() (MetricX, error){},
	specs:  map[string]func(string) (MetricX, error){},
	opened: map[string]MetricX{},
}

// RegisterMetricX makes a MetricX-24 implementation available under name.
// open runs once, on first use, so an unused model is never loaded.
func RegisterMetricX(name string, open func() (MetricX, error)) {
	metricxReg.Lock()
	defer metricxReg.Unlock()
	metricxReg.open[name] = open
	delete(metricxReg.opened, name)
}

// RegisterMetricXSpec makes specs of the form FAMILY+http(s)://... open with
// open. open must only parse the spec and build a client: it may run when a
// config is loaded, to reject a bad spec before inference starts, so the
// first contact with the server belongs to the first Score.
func RegisterMetricXSpec(family string, open func(spec string) (MetricX, error)) {
	metricxReg.Lock()
	defer metricxReg.Unlock()
	metricxReg.specs[family] = open
	for name := range metricxReg.opened {
		if specFamily(name) == family {
			delete(metricxReg.opened, name)
		}
	}
}

// specFamily is "tei" for "tei+http://host", "" when s is not such a spec.
func specFamily(s string) string {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	family, _, ok := strings.Cut(scheme, "+")
	if !ok {
		return ""
	}
	return family
}

// metricxOpener returns how to open name; the lock must be held.
func metricxOpener(name string) (func() (MetricX, error), error) {
	if open, ok := metricxReg.open[name]; ok {
		return open, nil
	}
	if fam := specFamily(name); fam != "" {
		if open, ok := metricxReg.specs[fam]; ok {
			return func() (MetricX, error) { return open(name) }, nil
		}
		return nil, fmt.Errorf("no MetricX-24 client registered for %q specs (registered: %s)", fam+"+", strings.Join(sortedKeys(metricxReg.specs), ", "))
	}
	return nil, fmt.Errorf("no MetricX-24 implementation registered as %q", name)
}

// metricxModel returns the named implementation, opening it on first use.
func metricxModel(name string) (MetricX, error) {
	metricxReg.Lock()
	defer metricxReg.Unlock()
	if m, ok := metricxReg.opened[name]; ok {
		return m, nil
	}
	open, err := metricxOpener(name)
	if err != nil {
		return nil, err
	}
	m, err := open()
	if err != nil {
		return nil, fmt.Errorf("opening MetricX-24 %q: %w", name, err)
	}
	metricxReg.opened[name] = m
	return m, nil
}

// checkMetricXSpec rejects a malformed spec of a registered family when the
// config is loaded, so a typo fails the run at once instead of three hours
// later as a note. Names and unregistered families are left to scoring,
// which reports them in the notes.
func checkMetricXSpec(s string) error {
	metricxReg.Lock()
	open, ok := metricxReg.specs[specFamily(s)]
	metricxReg.Unlock()
	if !ok {
		return nil
	}
	_, err := open(s)
	return err
}

// metricxMaxError is MetricX-24's worst score; SEA-HELM normalises
// (25 - x) / 25.
const metricxMaxError = 25

// metricxTally scores the translations with MetricX-24, shard by shard as
// they are added, when the items ask for it: a secondary metric, the
// headline stays chrF++. Nothing here can fail the axis: an unknown name, a
// server that cannot be reached or a wrong answer becomes the result's note,
// and chrF++ stands alone.
//
// Scoring the shards one at a time gives the result of scoring the axis in
// one call when every call succeeds: the per-segment scores are the same,
// and the sums are taken in item order. A failure cannot be undone, though:
// the item scores of the shards before it, already handed out, keep their
// metricx24 field, where one failed call over the whole axis leaves none.
// The note is that of the first failure, and later shards are not sent; it
// matches the note of one failed call whenever the error does not depend on
// the batch (an unknown name, a server that cannot be reached), but a count
// mismatch reports the shard's counts.
type metricxTally struct {
	name    string // the implementation: that of the first item that names one
	failure string // the note of the first failure
	unnamed int    // items added before any named an implementation
	n       int    // items scored
	sum     float64
	norm    float64 // SEA-HELM's normalised score, summed
}

// add scores one shard's translations and writes each segment's score into
// its item score.
func (t *metricxTally) add(exs []extra, sources, hyps, refs []string, scores []scorers.ItemScore) {
	if t.failure != "" {
		return
	}
	if t.name == "" {
		for _, e := range exs {
			if e.MetricX != "" {
				t.name = e.MetricX
				break
			}
		}
		if t.name == "" {
			t.unnamed += len(exs)
			return
		}
		// The axis option names the implementation on every item, so this
		// takes items built by hand; the earlier shards are gone and cannot
		// be scored, and a mean over the rest would pass for the axis's.
		if t.unnamed > 0 {
			t.failure = fmt.Sprintf("metricx %s not run: the first %d items name no MetricX-24; chrF++ only", t.name, t.unnamed)
			return
		}
	}
	m, err := metricxModel(t.name)
	if err != nil {
		t.failure = fmt.Sprintf("metricx unavailable (%v); chrF++ only", err)
		return
	}
	xs, err := m.Score(context.Background(), sources, hyps, refs)
	if err == nil && len(xs) != len(hyps) {
		err = fmt.Errorf("%d scores for %d segments", len(xs), len(hyps))
	}
	if err != nil {
		t.failure = fmt.Sprintf("metricx %s failed (%v); chrF++ only", t.name, err)
		return
	}
	for i, x := range xs {
		t.sum += x
		t.norm += (metricxMaxError - min(max(x, 0), metricxMaxError)) / metricxMaxError
		scores[i].Fields["metricx24"] = x
	}
	t.n += len(xs)
}

// result adds the MetricX-24 means to secondary when every shard was scored
// and returns the note for the result.
func (t *metricxTally) result(secondary map[string]any) string {
	switch {
	case t.failure != "":
		return t.failure
	case t.name == "":
		return "metricx not configured; chrF++ only"
	}
	secondary["metricx24"] = t.sum / float64(t.n)
	secondary["metricx24_normalized"] = t.norm / float64(t.n)
	return fmt.Sprintf("metricx24 (%s) reported as secondary; headline is chrF++", t.name)
}
