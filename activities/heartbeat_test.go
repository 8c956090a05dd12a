package activities

import (
	"context"
	"testing"
	"time"
)

// TestBeatOutsideAnActivity: activities/fakerun and other packages' tests
// call the stages with a plain context; a stage that outlives one
// heartbeat interval must not panic there (the SDK's RecordHeartbeat does
// on a context that is not an activity's).
func TestBeatOutsideAnActivity(t *testing.T) {
	stop := beat(context.Background(), func() any { return 1 })
	time.Sleep(HeartbeatEvery + HeartbeatEvery/2)
	stop()
}
