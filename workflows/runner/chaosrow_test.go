package runner_test

import (
	"testing"
	"time"
)

// chaosRow logs one row of the fault-matrix table (issue: faults, load and
// hostile input). `task chaos` greps these rows out of `go test -v` and
// prints them as the table: case, trials, runs completed, items lost, items
// re-inferred (every repeated model request, those in flight at the fault
// included), the time from the fault's end to the first model request
// after it (for a killed worker: to the first item of a killed attempt
// asked again, i.e. its retry on another worker; "-" where the case has
// none), and the time from the fault's end to the run's completion.
func chaosRow(t *testing.T, name string, trials, completed, lost, reinferred int, firstRequest, recover time.Duration) {
	t.Helper()
	t.Logf("CHAOS-ROW | %s | %d | %d | %d | %d | %s | %s", name, trials, completed, lost, reinferred, dur(firstRequest), dur(recover))
}

func dur(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}
