package axes

import (
	"slices"
	"testing"

	"github.com/glossobench/glossobench/scorers"
)

// The registry is the one list of axes: its order is the methodology's
// (spec §0), and each name makes an axis of that name.
func TestRegistryListsTheSevenAxesInOrder(t *testing.T) {
	want := []string{"knowledge", "nlu", "if", "nlg", "mt", "safety", "cultural"}
	if got := scorers.AxisNames(); !slices.Equal(got, want) {
		t.Fatalf("AxisNames() = %v, want %v", got, want)
	}
	for _, name := range want {
		ax, ok := scorers.AxisNamed(name)
		if !ok || ax.Name() != name {
			t.Errorf("AxisNamed(%q) = %v, %v", name, ax, ok)
		}
	}
	if _, ok := scorers.AxisNamed("reasoning"); ok {
		t.Error("an unregistered axis is found")
	}
	if k := scorers.AxisKind("cultural"); k != "mcq" {
		t.Errorf("AxisKind(cultural) = %q, want mcq", k)
	}
}

// What each axis asks of the model (check tests the model for it): the
// multiple-choice axes log-likelihoods for cloze and generations for
// generate, mt and safety chat messages, the others raw generations.
func TestModelUseOfEveryAxis(t *testing.T) {
	ll, gen, chat := scorers.ModelUse{LogLik: true}, scorers.ModelUse{Generate: true}, scorers.ModelUse{Chat: true}
	both := scorers.ModelUse{LogLik: true, Generate: true}
	for _, c := range []struct {
		axis, mode string
		want       scorers.ModelUse
	}{
		{"knowledge", "cloze", ll}, {"knowledge", "both", both}, {"knowledge", "generate", gen},
		{"nlu", "cloze", ll}, {"cultural", "generate", gen},
		{"if", "", gen}, {"nlg", "", gen}, {"mt", "", chat}, {"safety", "", chat},
	} {
		ax, _ := scorers.AxisNamed(c.axis)
		if got := scorers.ModelUseOf(ax, scorers.AxisConfig{ScoringMode: c.mode}); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.axis, c.mode, got, c.want)
		}
	}
}
