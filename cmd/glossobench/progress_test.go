package main

import (
	"bytes"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/glossobench/glossobench/infra/metrics"
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

// TestProgressETAAndGauges: the console's ETA is the axis's rate since it
// entered its stage (10 items in 10 s leaves 90 s for 90 more), and each
// report sets the items planned and done gauges of the axis's current stage
// only.
func TestProgressETAAndGauges(t *testing.T) {
	var buf bytes.Buffer
	v := newProgressView(&buf, true, zerolog.Nop())
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v.now = func() time.Time { return clock }
	snap := func(stage string, done int) workflows.Progress {
		return workflows.Progress{RunID: "eta-run", Axes: []workflows.AxisProgress{{Axis: "knowledge", Stage: stage, Done: done, Total: 100}}}
	}
	v.show(snap("pending", 0))
	clock = clock.Add(5 * time.Second)
	v.show(snap("inference", 0))
	if !strings.Contains(buf.String(), "ETA -") {
		t.Errorf("an ETA before the count moved:\n%q", buf.String())
	}
	clock = clock.Add(10 * time.Second)
	buf.Reset()
	v.show(snap("inference", 10))
	if !strings.Contains(buf.String(), "ETA 1m30s") {
		t.Errorf("want ETA 1m30s after 10 of 100 items in 10 s:\n%q", buf.String())
	}
	gauge := func(name, stage string) float64 {
		return gaugeValue(t, name, map[string]string{"run": "eta-run", "axis": "knowledge", "stage": stage})
	}
	if p, d := gauge("glossobench_items_planned", "inference"), gauge("glossobench_items_done", "inference"); p != 100 || d != 10 {
		t.Errorf("gauges planned %v done %v, want 100 and 10", p, d)
	}
	v.show(snap("scoring", 100))
	if p, d := gauge("glossobench_items_planned", "inference"), gauge("glossobench_items_done", "scoring"); p != -1 || d != 100 {
		t.Errorf("after the stage changed: inference planned %v (want no series), scoring done %v (want 100)", p, d)
	}
}

// gaugeValue is the value of the series of a gauge with exactly labels, or
// -1 when there is none.
func gaugeValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			if maps.Equal(have, labels) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// TestProgressIntoPipeShowsETA: into a pipe, an axis whose count moves
// within its stage gets a line with its ETA every 30 s, not at every report.
func TestProgressIntoPipeShowsETA(t *testing.T) {
	var buf bytes.Buffer
	v := newProgressView(&buf, false, zerolog.Nop())
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v.now = func() time.Time { return clock }
	for s := 0; s <= 40; s += 2 { // 2 items a second, a report every 2 s
		v.show(workflows.Progress{RunID: "pipe-eta", Axes: []workflows.AxisProgress{{Axis: "nlu", Stage: "inference", Done: 2 * s, Total: 200}}})
		clock = clock.Add(2 * time.Second)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	// At 0 s (stage entered), 30 s (60 done), no third before 60 s.
	if len(lines) != 2 || !strings.Contains(lines[0], "ETA -") || !strings.Contains(lines[1], "60/200") || !strings.Contains(lines[1], "ETA 1m10s") {
		t.Errorf("lines:\n%s", buf.String())
	}
}
