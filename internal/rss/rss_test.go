package rss

import (
	"os"
	"testing"
)

// A process's peak holds at least what it allocated and touched.
func TestPeakSeesAnAllocation(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc:", err)
	}
	before, err := Peak(0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	after, err := Peak(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after < before || after < 64<<20 || b[len(b)-1] != 1 {
		t.Errorf("peak %d before, %d after touching 64 MiB", before, after)
	}
	if _, err := Peak(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
