package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/activities"
)

// sdkLogger sends the Temporal SDK's log lines through z, in the same format
// (console or JSON) as GlossoBench's own. Its chatter (worker started, polls,
// per-attempt details) is debug detail; a failed activity attempt becomes one
// warning in GlossoBench's words, with the attempt count and the activity's
// own message.
func sdkLogger(z zerolog.Logger) tlog.Logger { return zlog{z: z, own: z} }

// zlog is the SDK's logger; own is the logger without the SDK's context
// fields, for the lines GlossoBench writes in its own words.
type zlog struct{ z, own zerolog.Logger }

var _ tlog.WithLogger = zlog{}

func (l zlog) Debug(msg string, kv ...any) { l.log(zerolog.DebugLevel, msg, kv) }
func (l zlog) Info(msg string, kv ...any)  { l.log(zerolog.DebugLevel, msg, kv) }
func (l zlog) Warn(msg string, kv ...any)  { l.log(zerolog.WarnLevel, msg, kv) }
func (l zlog) Error(msg string, kv ...any) {
	if msg == "Activity error." {
		l.attemptFailed(kv)
		l.log(zerolog.DebugLevel, msg, kv)
		return
	}
	l.log(zerolog.ErrorLevel, msg, kv)
}

// With returns a logger that adds kv to every line.
func (l zlog) With(kv ...any) tlog.Logger {
	c := l.z.With()
	for i := 0; i+1 < len(kv); i += 2 {
		c = c.Interface(fmt.Sprint(kv[i]), kv[i+1])
	}
	return zlog{z: c.Logger(), own: l.own}
}

func (l zlog) log(lvl zerolog.Level, msg string, kv []any) {
	e := l.z.WithLevel(lvl)
	if e == nil {
		return
	}
	for i := 0; i+1 < len(kv); i += 2 {
		k := fmt.Sprint(kv[i])
		switch v := kv[i+1].(type) {
		case error:
			e = e.AnErr(k, v)
		case fmt.Stringer:
			e = e.Str(k, v.String())
		default:
			e = e.Interface(k, v)
		}
	}
	e.Msg("temporal: " + msg)
}

// attemptFailed reports a failed activity attempt once, in one line.
func (l zlog) attemptFailed(kv []any) {
	var (
		activity string
		attempt  any
		err      error
		wfID     string
	)
	for i := 0; i+1 < len(kv); i += 2 {
		switch k := fmt.Sprint(kv[i]); k {
		case "ActivityType":
			activity = fmt.Sprint(kv[i+1])
		case "Attempt":
			attempt = kv[i+1]
		case "WorkflowID":
			wfID = fmt.Sprint(kv[i+1])
		case "Error":
			err, _ = kv[i+1].(error)
		}
	}
	if err == nil || errors.Is(err, context.Canceled) {
		return // a cancelled attempt (an axis whose budget ran out) is not a failure
	}
	what := "Temporal retries it"
	if !activities.Retryable(err) {
		what = "it is not retried"
	}
	l.own.Warn().Str("workflow", wfID).Msgf("%s failed on attempt %v; %s: %s", activity, attempt, what, Cause(err))
}

// Cause is the innermost message of a workflow or activity error: what the
// activity itself said, without the chain of Temporal wrappers around it. A
// plain Go error (an activity's own, before Temporal wrapped it) is its message.
func Cause(err error) string {
	msg := err.Error()
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch t := e.(type) {
		case *temporal.WorkflowExecutionError, *temporal.ActivityError, *temporal.ChildWorkflowExecutionError:
			// wrappers: the cause is below
		case *temporal.ApplicationError:
			msg = t.Message()
		case *temporal.TimeoutError:
			msg = "timed out: " + timeoutKind(t)
		case *temporal.CanceledError:
			msg = "cancelled"
		case *temporal.TerminatedError:
			msg = "terminated"
		case *temporal.PanicError:
			msg = "panic: " + t.Error()
		default:
			return msg // a plain error, or one below a Temporal failure whose message says it
		}
	}
	return msg
}

func timeoutKind(te *temporal.TimeoutError) string {
	switch te.TimeoutType().String() {
	case "Heartbeat":
		return "no heartbeat: the worker running it stopped answering"
	case "StartToClose":
		return "the activity ran longer than allowed"
	case "ScheduleToStart":
		return "no worker picked it up"
	}
	return te.TimeoutType().String()
}
