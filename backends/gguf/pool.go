package gguf

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool runs loops split across a fixed number of goroutines.
//
// A decoded token is some sixty small products, each a parallel region of
// a few tens of microseconds; starting and waking a goroutine for each
// costs about as much as the work (llama.cpp's threads spin between ops
// for the same reason). So a region's helpers, once done, spin for
// helperSpin waiting for the next region before they exit: back-to-back
// regions reuse them, and an idle pool holds no goroutine.
type pool struct {
	threads int

	mu      sync.Mutex // held by the region using the helpers
	helpers []helper
	left    atomic.Int32 // chunks of the current region not yet done
}

// helperSpin is how long a helper waits for the next region before it
// exits; far longer than the gap between a token's products, far shorter
// than anything a person notices.
const helperSpin = 200 * time.Microsecond

// Helper states.
const (
	helperGone     int32 = iota // no goroutine
	helperSpinning              // waiting for a chunk
	helperWorking               // handed a chunk
)

type helper struct {
	state atomic.Int32
	chunk atomic.Pointer[chunk]
}

type chunk struct {
	fn     func(lo, hi int)
	lo, hi int
	left   *atomic.Int32
}

// parallel calls fn on contiguous chunks of [0, n), at most one per thread,
// and waits for all of them. The caller takes the first chunk.
func (p *pool) parallel(n int, fn func(lo, hi int)) {
	t := min(p.threads, n)
	if t <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	// Spinning helpers need a processor each beside the caller; a region
	// run inside another (or beside one on another goroutine) starts
	// goroutines of its own instead.
	if runtime.GOMAXPROCS(0) < t || !p.mu.TryLock() {
		parallelSpawn(n, t, fn)
		return
	}
	defer p.mu.Unlock()
	if len(p.helpers) < t-1 {
		p.helpers = make([]helper, t-1)
	}
	p.left.Store(int32(t - 1))
	for i := 1; i < t; i++ {
		c := &chunk{fn: fn, lo: i * n / t, hi: (i + 1) * n / t, left: &p.left}
		h := &p.helpers[i-1]
		if h.state.CompareAndSwap(helperSpinning, helperWorking) {
			h.chunk.Store(c)
			continue
		}
		h.state.Store(helperWorking)
		go h.run(c)
	}
	fn(0, n/t)
	for i := 0; p.left.Load() != 0; i++ {
		if i%16 == 15 {
			runtime.Gosched()
		}
	}
}

// run does chunk c and those handed to it after, until none comes within
// helperSpin.
func (h *helper) run(c *chunk) {
	for c != nil {
		c.fn(c.lo, c.hi)
		h.chunk.Store(nil)
		h.state.Store(helperSpinning)
		c.left.Add(-1) // only now may the next region hand h a chunk
		c = h.await()
	}
}

// await returns the next chunk, or nil when none came within helperSpin
// and h is gone.
func (h *helper) await() *chunk {
	var deadline time.Time
	for i := 0; ; i++ {
		if c := h.chunk.Load(); c != nil {
			return c
		}
		if i%64 != 63 {
			continue
		}
		runtime.Gosched()
		switch now := time.Now(); {
		case deadline.IsZero():
			deadline = now.Add(helperSpin)
		case now.After(deadline) && h.state.CompareAndSwap(helperSpinning, helperGone):
			return nil
		}
		// Otherwise a region has claimed h (state working) and its chunk
		// is on its way: keep waiting for it.
	}
}

// parallelSpawn runs chunks 1..t-1 on new goroutines and chunk 0 on the
// caller's.
func parallelSpawn(n, t int, fn func(lo, hi int)) {
	var wg sync.WaitGroup
	for i := 1; i < t; i++ {
		lo, hi := i*n/t, (i+1)*n/t
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	fn(0, n/t)
	wg.Wait()
}
