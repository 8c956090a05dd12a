package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/glossobench/glossobench/workflows"
)

// TestProgressIntoPipe feeds the progress view the snapshots of a run, as the
// progress query returns them, with output to a buffer (a file or pipe): it
// writes one line per change of an axis's stage, never a redrawn block, and
// no terminal escapes.
func TestProgressIntoPipe(t *testing.T) {
	snap := func(k, n string, kd int) workflows.Progress {
		return workflows.Progress{Axes: []workflows.AxisProgress{
			{Axis: "knowledge", Stage: k, Done: kd, Total: 100},
			{Axis: "nlu", Stage: n, Total: 50},
		}}
	}
	var run []workflows.Progress
	run = append(run, snap("pending", "pending", 0))
	for d := 0; d <= 100; d += 10 {
		run = append(run, snap("inference", "pending", d)) // 11 refreshes, one stage
	}
	run = append(run, snap("scoring", "pending", 100), snap("done", "inference", 100), snap("done", "inference", 100), snap("done", "done", 100))

	var buf bytes.Buffer
	v := newProgressView(&buf, false, zerolog.Nop())
	for _, p := range run {
		v.show(p)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	// knowledge: pending, inference, scoring, done; nlu: pending, inference, done.
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7 (one per stage change):\n%s", len(lines), out)
	}
	want := []string{"knowledge pending", "nlu pending", "knowledge inference", "knowledge scoring", "knowledge done", "nlu inference", "nlu done"}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 5 || f[1]+" "+f[4] != want[i] {
			t.Errorf("line %d = %q, want axis and stage %q", i+1, l, want[i])
		}
	}
	if strings.Contains(out, "\033") {
		t.Errorf("terminal escapes in a pipe's output:\n%q", out)
	}

	// On a terminal the same snapshots redraw one block in place.
	buf.Reset()
	v = newProgressView(&buf, true, zerolog.Nop())
	for _, p := range run {
		v.show(p)
	}
	if ups := strings.Count(buf.String(), "\033[2A"); ups != len(run)-1 {
		t.Errorf("terminal: %d cursor-ups, want %d (one per refresh after the first)", ups, len(run)-1)
	}
}

// TestProgressAsJSONLog: with --log-format json the stage changes are log
// events, one JSON object a line, for log shippers.
func TestProgressAsJSONLog(t *testing.T) {
	logFormat = "json"
	defer func() { logFormat = "console" }()
	var buf bytes.Buffer
	v := newProgressView(&buf, false, zerolog.New(&buf))
	v.show(workflows.Progress{Axes: []workflows.AxisProgress{{Axis: "knowledge", Stage: "inference", Done: 3, Total: 100}}})
	v.show(workflows.Progress{Axes: []workflows.AxisProgress{{Axis: "knowledge", Stage: "inference", Done: 9, Total: 100}}})
	want := `{"level":"info","axis":"knowledge","stage":"inference","done":3,"total":100,"message":"axis stage"}` + "\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
