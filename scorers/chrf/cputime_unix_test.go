//go:build unix

package chrf

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report
// pairs per CPU-second next to pairs per wall-second because the shared
// build machine is often oversubscribed, which inflates wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
