// Package rss reads a process's peak resident set size, for the tests
// and benchmarks that bound or report memory.
package rss

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Peak is the peak resident set size (VmHWM) in bytes of the live process
// pid, or of this process when pid is 0, from /proc (Linux). VmHWM, not
// rusage's Maxrss: Linux starts a child's Maxrss at the RSS of the process
// it was forked from (exec keeps the old mm's high-water mark).
func Peak(pid int) (int64, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: VmHWM %q: %v", path, v, err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s has no VmHWM", path)
}
