package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/glossobench/glossobench/activities"
)

// Stages of a run, as the progress query reports them (per run and per axis)
// and as the activity summaries in the Temporal UI begin.
const (
	StagePending   = "pending"
	StagePrepare   = "prepare"
	StageDedup     = "dedup"
	StageInference = "inference"
	StageJudging   = "judging"
	StageProbes    = "probes"
	StageScoring   = "scoring"
	StageAudit     = "audit"
	StageAggregate = "aggregate"
	StageDone      = "done"
	StageStopped   = "stopped" // the axis budget ran out
	StageSkipped   = "skipped"
	StageFailed    = "failed" // the model failed every request alike (activities.ErrModel)
)

// nonRetryable are the error types no retry can fix.
var nonRetryable = activities.NonRetryable

// The activity option presets. Each names one kind of stage; a call site
// picks one and adds its summary (see stage).

// cpuPreset: store work, scoring and statistics on the CPU queue. These
// activities heartbeat every second too, so a CPU worker that dies inside
// one (a SIGKILLed `run`, `dev` or worker) is noticed after the heartbeat
// timeout, not the 30-minute start-to-close; heartbeatSecs is
// run.heartbeat_seconds, 0 where the run's config is not read yet (Prepare)
// or there is none (the leaderboard workflows): the 5 s default.
func cpuPreset(heartbeatSecs int) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           TaskQueue,
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    heartbeatTimeout(heartbeatSecs),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			MaximumAttempts: 20, NonRetryableErrorTypes: nonRetryable,
		},
	}
}

// screenPreset: screening a large corpus may take the whole budget; it
// heartbeats its shard offsets every second, so a dead worker is noticed
// in seconds and the retry resumes at the last offset.
func screenPreset(wall time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           TaskQueue,
		StartToCloseTimeout: wall,
		HeartbeatTimeout:    heartbeatTimeout(0),
		RetryPolicy:         &temporal.RetryPolicy{NonRetryableErrorTypes: nonRetryable},
	}
}

// Recovery from a dead worker: every activity heartbeats every
// second (activities.HeartbeatEvery, sent at once: the inference worker's
// heartbeat throttle is as short), so the server notices a SIGKILLed worker
// run.heartbeat_seconds (5 s by default) after its last heartbeat, and
// retries the activity on another worker after the retry's backoff, at most
// maxModelRetryWait: within 5 + 2 s of the kill, under the 10 s the operator
// guide promises. Options are not part of a command's identity in replay
// (the SDK matches a scheduled activity by its id and type), so changing
// them needs no version marker.
const maxModelRetryWait = 2 * time.Second

// heartbeatTimeout is run.heartbeat_seconds as a duration, at least 5 s: a
// live worker heartbeats every second, so 5 s leaves four missed heartbeats
// (a loaded machine, a pause of the Go runtime) before it is presumed dead.
func heartbeatTimeout(secs int) time.Duration { return time.Duration(max(secs, 5)) * time.Second }

// inferPreset: model calls over one shard, cancelled when the axis budget
// runs out and waited for while they checkpoint what they answered.
func inferPreset(budget time.Duration, heartbeatSecs int) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           InferenceTaskQueue,
		StartToCloseTimeout: budget + time.Minute,
		HeartbeatTimeout:    heartbeatTimeout(heartbeatSecs),
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: maxModelRetryWait,
			NonRetryableErrorTypes: nonRetryable,
		},
	}
}

// judgePreset: the judge ensemble rates an axis's responses, shard by shard.
func judgePreset(budget time.Duration, heartbeatSecs int) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           InferenceTaskQueue,
		StartToCloseTimeout: max(budget, time.Hour),
		HeartbeatTimeout:    heartbeatTimeout(heartbeatSecs),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: maxModelRetryWait,
			MaximumAttempts: 5, NonRetryableErrorTypes: nonRetryable,
		},
	}
}

// judgeUntilPreset: judging bounded by the time left to the global deadline;
// cancelled at the deadline and waited for while it checkpoints.
func judgeUntilPreset(left time.Duration, heartbeatSecs int) workflow.ActivityOptions {
	o := judgePreset(0, heartbeatSecs)
	o.StartToCloseTimeout = left + time.Minute
	o.WaitForCancellation = true
	return o
}

// stage is ctx with the preset and a summary the Temporal UI shows on the
// activity's row ("infer knowledge shard 3/8").
func stage(ctx workflow.Context, preset workflow.ActivityOptions, summary string, args ...any) workflow.Context {
	preset.Summary = fmt.Sprintf(summary, args...)
	return workflow.WithActivityOptions(ctx, preset)
}

// cpuOptions is ctx with cpuPreset, for workflows whose activities carry no
// summary of their own.
func cpuOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, cpuPreset(0))
}
