package activities

import (
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/probes"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/scorers/mcq"
	"github.com/glossobench/glossobench/scorers/mt"
	"github.com/glossobench/glossobench/scorers/safety"
)

// The multiple-choice axes run probes through the probes.Prober interface; a
// change of PredictProbes's signature must not turn them off silently.
var _ probes.Prober = (*mcq.Axis)(nil)

// Infer and Probes find the axes with probes by the interface: the
// multiple-choice axes, and no other.
func TestProbesOnlyOnMultipleChoiceAxes(t *testing.T) {
	probed := 0
	for _, name := range scorers.AxisNames() {
		ax, ok := scorers.AxisNamed(name)
		if !ok {
			t.Fatalf("axis %s is not registered", name)
		}
		_, isMCQ := ax.(*mcq.Axis)
		if hasProbes(ax) != isMCQ {
			t.Errorf("axis %s: hasProbes = %v, want %v", name, hasProbes(ax), isMCQ)
		}
		if hasProbes(ax) {
			probed++
		}
	}
	if n := len(scorers.AxisNames()); probed == 0 || probed == n {
		t.Errorf("%d of %d axes have probes; want the multiple-choice ones only", probed, n)
	}
}

// The judged axes are found by the judge.Rated interface; a change of
// JudgeRequests's signature must not leave mt or safety unjudged silently.
var _, _ judge.Rated = (*mt.Axis)(nil), (*safety.Axis)(nil)
