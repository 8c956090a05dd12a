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
