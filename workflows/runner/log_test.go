package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/temporal"
)

// TestSDKLoggerThroughZerolog: the SDK's lines come out in zerolog's format;
// its chatter is debug detail, and a failed activity attempt is one warning
// in GlossoBench's words with the attempt count and the activity's message.
func TestSDKLoggerThroughZerolog(t *testing.T) {
	var buf bytes.Buffer
	l := sdkLogger(zerolog.New(&buf).Level(zerolog.InfoLevel)).(zlog).With("Namespace", "default")
	l.Info("Started Worker", "TaskQueue", "glossobench")
	l.Debug("poll")
	if buf.Len() != 0 {
		t.Errorf("SDK info and debug lines shown at info level: %s", buf.String())
	}
	l.Warn("Failed to poll for task.", "Error", errors.New("unavailable"))
	l.Error("Activity error.", "WorkflowID", "evalrun-x", "ActivityType", "Infer", "Attempt", int32(3),
		"Error", fmt.Errorf("item a/1: %w", errors.New("openai: POST /v1/completions: connection refused")))
	l.Error("Activity error.", "ActivityType", "Prepare", "Attempt", int32(1),
		"Error", temporal.NewNonRetryableApplicationError("axes.knowledge: dataset d: open x: no such file or directory", "DataError", nil))
	l.Error("Activity error.", "ActivityType", "Infer", "Attempt", int32(2), "Error", context.Canceled)

	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		got = append(got, m)
	}
	want := []struct{ level, msg string }{
		{"warn", "temporal: Failed to poll for task."},
		{"warn", "Infer failed on attempt 3; Temporal retries it: item a/1: openai: POST /v1/completions: connection refused"},
		{"warn", "Prepare failed on attempt 1; it is not retried: axes.knowledge: dataset d: open x: no such file or directory"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i, w := range want {
		if got[i]["level"] != w.level || got[i]["message"] != w.msg {
			t.Errorf("line %d = %v %q, want %v %q", i+1, got[i]["level"], got[i]["message"], w.level, w.msg)
		}
	}
	if got[0]["Namespace"] != "default" || got[1]["Namespace"] != nil {
		t.Errorf("context fields: the SDK's line should carry them, GlossoBench's retry line not: %v / %v", got[0], got[1])
	}

	// In console format the same lines are console lines.
	buf.Reset()
	sdkLogger(zerolog.New(zerolog.ConsoleWriter{Out: &buf, NoColor: true})).Warn("Failed to poll for task.")
	if s := buf.String(); !strings.Contains(s, "WRN temporal: Failed to poll for task.") || strings.Contains(s, "{") {
		t.Errorf("console line: %q", s)
	}
}

func TestCause(t *testing.T) {
	app := temporal.NewNonRetryableApplicationError("axes.knowledge: dataset d: no such file", "DataError", nil)
	if got := Cause(app); got != "axes.knowledge: dataset d: no such file" {
		t.Errorf("Cause(application error) = %q", got)
	}
	plain := fmt.Errorf("item a: %w", errors.New("connection refused"))
	if got := Cause(plain); got != "item a: connection refused" {
		t.Errorf("Cause(plain error) = %q", got)
	}
}
