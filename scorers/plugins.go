package scorers

import (
	"cmp"
	"slices"
	"sync"
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

var plugins = struct {
	sync.Mutex
	m map[string]AxisPlugin
}{m: map[string]AxisPlugin{}}

// RegisterAxis adds an axis plugin. Registering a name twice panics.
func RegisterAxis(p AxisPlugin) {
	plugins.Lock()
	defer plugins.Unlock()
	if _, dup := plugins.m[p.Name]; dup {
		panic("scorers: axis " + p.Name + " registered twice")
	}
	plugins.m[p.Name] = p
}

// AxisNamed returns a new axis of a registered name.
func AxisNamed(name string) (Axis, bool) {
	plugins.Lock()
	defer plugins.Unlock()
	p, ok := plugins.m[name]
	if !ok {
		return nil, false
	}
	return p.New(), true
}

// AxisKind is the kind of items a registered axis reads, or "".
func AxisKind(name string) string {
	plugins.Lock()
	defer plugins.Unlock()
	return plugins.m[name].Kind
}

// AxisNames lists the registered axes in their canonical order.
func AxisNames() []string {
	plugins.Lock()
	defer plugins.Unlock()
	ps := make([]AxisPlugin, 0, len(plugins.m))
	for _, p := range plugins.m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b AxisPlugin) int { return cmp.Compare(a.Order, b.Order) })
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}
