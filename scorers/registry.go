package scorers

import (
	"slices"
	"sync"
)

// registry is a set of plugins by name, filled from the plugins' init
// functions: the axes (RegisterAxis) and their statistics
// (RegisterStatistic).
type registry[T any] struct {
	kind string // "axis", "statistic": for the panic
	mu   sync.Mutex
	m    map[string]T
}

// add registers v under name; a name registered twice panics.
func (r *registry[T]) add(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic("scorers: " + r.kind + " " + name + " registered twice")
	}
	if r.m == nil {
		r.m = map[string]T{}
	}
	r.m[name] = v
}

func (r *registry[T]) get(name string) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[name]
	return v, ok
}

// all returns the registered values, sorted by name.
func (r *registry[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]T, len(names))
	for i, n := range names {
		out[i] = r.m[n]
	}
	return out
}
