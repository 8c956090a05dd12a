package scorers

import (
	"cmp"
	"slices"
)

// An AxisPlugin is an axis as it registers itself: the name configs use,
// the kind of items it reads (a key of dataset.Kinds), its place in the
// canonical axis order, and how to make one. Axis packages register theirs
// from init; scorers/axes links them all, so that the config's validation,
// the stages and the commands read one list.
type AxisPlugin struct {
	Name  string
	Kind  string
	Order int
	New   func() Axis
}

var plugins = registry[AxisPlugin]{kind: "axis"}

// RegisterAxis adds an axis plugin. Registering a name twice panics.
func RegisterAxis(p AxisPlugin) { plugins.add(p.Name, p) }

// AxisNamed returns a new axis of a registered name.
func AxisNamed(name string) (Axis, bool) {
	p, ok := plugins.get(name)
	if !ok {
		return nil, false
	}
	return p.New(), true
}

// AxisKind is the kind of items a registered axis reads, or "".
func AxisKind(name string) string {
	p, _ := plugins.get(name)
	return p.Kind
}

// AxisNames lists the registered axes in their canonical order.
func AxisNames() []string {
	ps := plugins.all()
	slices.SortStableFunc(ps, func(a, b AxisPlugin) int { return cmp.Compare(a.Order, b.Order) })
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}
