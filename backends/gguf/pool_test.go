package gguf

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolCoversEveryIndexOnce runs many back-to-back regions (helpers
// reused), regions nested in regions and regions from several goroutines
// at once on one pool, and checks each index is done exactly once per
// region.
func TestPoolCoversEveryIndexOnce(t *testing.T) {
	p := &pool{threads: 2}
	region := func(n int) {
		seen := make([]int32, n)
		p.parallel(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Errorf("n=%d: index %d done %d times", n, i, c)
				return
			}
		}
	}
	for r := 0; r < 2000; r++ {
		region(1 + r%37)
	}
	p.parallel(4, func(lo, hi int) { // nested
		for i := lo; i < hi; i++ {
			region(9)
		}
	})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ { // concurrent
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 200; r++ {
				region(5 + r%11)
			}
		}()
	}
	wg.Wait()
}

// TestPoolHelpersExitWhenIdle: an idle pool holds no goroutine.
func TestPoolHelpersExitWhenIdle(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("helpers need two processors")
	}
	before := runtime.NumGoroutine()
	p := &pool{threads: 2}
	p.parallel(2, func(lo, hi int) {})
	for i := 0; p.helpers[0].state.Load() != helperGone; i++ {
		if i == 1000 {
			t.Fatalf("helper still %d after %v idle", p.helpers[0].state.Load(), 1000*time.Millisecond)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond) // the goroutine returns just after its state says gone
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the helpers left, %d before", n, before)
	}
}
