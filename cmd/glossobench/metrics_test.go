package main

import (
	"net"
	"strings"
	"testing"
)

// --metrics-addr is on worker, dev and run, takes HOST:PORT, and a taken
// address stops the command with an error naming the flag, before it
// connects to anything.
func TestMetricsAddrFlag(t *testing.T) {
	defer func() { metricsAddr = "" }()
	// Were the flag ignored, the worker would dial this and fail, not serve 7233.
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	for _, cmd := range []string{"worker", "dev", "run"} {
		code, text := captured(t, func() int { return mainCode([]string{cmd, "--help"}) })
		if code != 0 || !strings.Contains(text, "-metrics-addr") {
			t.Errorf("%s --help (exit %d) does not list --metrics-addr:\n%s", cmd, code, text)
		}
		code, text = captured(t, func() int { return mainCode([]string{cmd, "--metrics-addr", "9464"}) })
		if code != 2 || !strings.Contains(text, "metrics-addr") || !strings.Contains(text, "HOST:PORT") {
			t.Errorf("%s --metrics-addr 9464: exit %d, output:\n%s", cmd, code, text)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, text := captured(t, func() int { return mainCode([]string{"worker", "--metrics-addr", ln.Addr().String()}) })
	if code != 1 || !strings.Contains(text, "--metrics-addr "+ln.Addr().String()) {
		t.Errorf("worker on a taken metrics address: exit %d, output:\n%s", code, text)
	}
}
