package runner_test

import (
	"testing"
	"time"
)

// chaosRow logs one row of the fault-matrix table (issue: faults, load and
// hostile input). `task chaos` greps these rows out of `go test -v` and
// prints them as the table: case, trials, runs completed, items lost, items
// re-inferred beyond those in flight, time to recover.
func chaosRow(t *testing.T, name string, trials, completed, lost, reinferred int, recover time.Duration) {
	t.Helper()
	t.Logf("CHAOS-ROW | %s | %d | %d | %d | %d | %s", name, trials, completed, lost, reinferred, recover.Round(time.Millisecond))
}
