package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// HeartbeatEvery is how often every activity heartbeats while it runs,
// whatever its model calls or its computing take: so a live worker is never
// mistaken for a dead one, and a dead one (it stops heartbeating) is noticed
// within the heartbeat timeout, run.heartbeat_seconds (5 s by default), and
// its activities run again on another worker. Both workers send every
// heartbeat on at once (worker option MaxHeartbeatThrottleInterval, see
// workflows/runner): one RecordActivityHeartbeat call a second per running
// activity, whatever the number of items, plus one per checkpoint.
const HeartbeatEvery = time.Second

// beat records detail() as the activity's heartbeat every HeartbeatEvery
// until the returned stop is called; a nil detail records none (an activity
// whose retry has nothing to resume from).
func beat(ctx context.Context, detail func() any) (stop func()) {
	if !activity.IsActivity(ctx) {
		// A stage called outside Temporal (activities/fakerun, other
		// packages' tests) has no one to heartbeat to.
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if detail == nil {
					activity.RecordHeartbeat(ctx)
				} else {
					activity.RecordHeartbeat(ctx, detail())
				}
			}
		}
	}()
	return func() { close(done) }
}
