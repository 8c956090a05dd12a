package activities

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/config"
)

// How many entries of each kind a worker keeps when nothing holds them. A
// worker serves run after run (a nightly refresh of twenty models), so what
// it opened for one run must not stay open for the worker's life; everything
// cached is loaded again from the store or the model file when needed, which
// is also what a run resumed on another worker does.
const (
	keepBackends = 2 // open models (a mapped GGUF file each)
	keepManifest = 16
	keepCorpora  = 1 // corpus indexes over a run's items
	keepPools    = 4 // probe pools, one per run and axis
)

// cache is a small least-recently-used cache bounded by count. An entry in
// use (acquired and not yet released) is never dropped; an entry dropped is
// closed. Entries remember the runs that used them, so a run's end (forget)
// drops what only it used.
type cache[V any] struct {
	keep  int
	close func(V) // nil: nothing to close

	mu      sync.Mutex
	entries map[string]*entry[V]
	clock   uint64
}

type entry[V any] struct {
	v     V
	err   error
	ready chan struct{} // closed once v or err is set
	refs  int           // holders not yet released
	used  uint64        // clock at the last acquire or release
	runs  map[string]bool
}

func newCache[V any](keep int, close func(V)) *cache[V] {
	return &cache[V]{keep: keep, close: close, entries: map[string]*entry[V]{}}
}

// acquire returns the entry for key, loading it once however many callers
// ask at the same time, and a release the caller calls when done with it.
func (c *cache[V]) acquire(key, run string, load func() (V, error)) (V, func(), error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if !ok {
		e = &entry[V]{ready: make(chan struct{}), runs: map[string]bool{}}
		c.entries[key] = e
	}
	e.refs++
	e.runs[run] = true
	c.mu.Unlock()
	if !ok {
		e.v, e.err = load()
		close(e.ready)
	}
	<-e.ready
	var once sync.Once
	release := func() { once.Do(func() { c.release(key, e) }) }
	if e.err != nil {
		release()
		var zero V
		return zero, func() {}, e.err
	}
	return e.v, release, nil
}

// get is acquire for values nothing needs to close: holding them is enough
// to keep them alive, so the entry is released at once.
func (c *cache[V]) get(key, run string, load func() (V, error)) (V, error) {
	v, release, err := c.acquire(key, run, load)
	release()
	return v, err
}

func (c *cache[V]) release(key string, e *entry[V]) {
	c.mu.Lock()
	e.refs--
	c.clock++
	e.used = c.clock
	if e.err != nil && e.refs == 0 && c.entries[key] == e {
		delete(c.entries, key) // a failed load is tried again next time
	}
	drop := c.evict()
	c.mu.Unlock()
	c.closeAll(drop)
}

// forget drops run from every entry and every entry no other run uses.
func (c *cache[V]) forget(run string) {
	c.mu.Lock()
	var drop []V
	for k, e := range c.entries {
		if !e.runs[run] {
			continue
		}
		delete(e.runs, run)
		if len(e.runs) == 0 && e.refs == 0 {
			delete(c.entries, k)
			drop = append(drop, e.v)
		}
	}
	drop = append(drop, c.evict()...)
	c.mu.Unlock()
	c.closeAll(drop)
}

// evict removes the least recently used idle entries beyond keep and
// returns them for closing outside the lock.
func (c *cache[V]) evict() []V {
	var drop []V
	for len(c.entries) > c.keep {
		victim := ""
		for k, e := range c.entries {
			if e.refs == 0 && (victim == "" || e.used < c.entries[victim].used) {
				victim = k
			}
		}
		if victim == "" {
			break // all in use: the bound holds again once they are released
		}
		drop = append(drop, c.entries[victim].v)
		delete(c.entries, victim)
	}
	return drop
}

func (c *cache[V]) closeAll(vs []V) {
	if c.close == nil {
		return
	}
	for _, v := range vs {
		c.close(v)
	}
}

// clear drops and closes every entry; the worker has stopped using them.
func (c *cache[V]) clear() {
	c.mu.Lock()
	var drop []V
	for k, e := range c.entries {
		delete(c.entries, k)
		if e.err == nil {
			drop = append(drop, e.v)
		}
	}
	c.mu.Unlock()
	c.closeAll(drop)
}

// len is how many entries are cached.
func (c *cache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// backendOptions are the options a model config opens its backend with.
func backendOptions(m config.Model) registry.Options {
	return registry.Options{
		Name: m.Name, APIKeyEnv: m.APIKeyEnv, Flavor: m.Flavor, Concurrency: m.Concurrency,
		Timeout: time.Duration(m.TimeoutSeconds) * time.Second, MaxRetries: m.MaxRetries, ChatFormat: m.ChatFormat, StrictContext: m.StrictContext,
	}
}

// backendKey names a backend by its spec and every option it is opened with,
// so runs share a backend only when they would open the same one.
func backendKey(spec string, o registry.Options) string {
	b, err := json.Marshal(struct {
		Spec    string
		Options registry.Options
	}{spec, o})
	if err != nil {
		panic(err) // a struct of strings, numbers and booleans always encodes
	}
	return string(b)
}
