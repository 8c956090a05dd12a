package workflows

import "go.temporal.io/sdk/workflow"

// fanOut runs n activities as a sliding window of at most parallel at a
// time: start(i) starts the i-th, done handles each result as it arrives.
// Once done returns an error or stopped() is true no activity starts; those
// in flight are awaited and the first error is returned. sel may already
// hold other futures (a budget timer) whose callbacks run between results.
func fanOut(ctx workflow.Context, sel workflow.Selector, n, parallel int, stopped func() bool,
	start func(i int) workflow.Future, done func(workflow.Future) error) error {
	var firstErr error
	next, inflight := 0, 0
	for {
		for next < n && inflight < max(parallel, 1) && firstErr == nil && !stopped() {
			f := start(next)
			next++
			inflight++
			sel.AddFuture(f, func(f workflow.Future) {
				inflight--
				if err := done(f); err != nil && firstErr == nil {
					firstErr = err
				}
			})
		}
		if inflight == 0 {
			return firstErr
		}
		sel.Select(ctx)
	}
}

func never() bool { return false }
