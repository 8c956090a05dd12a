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
)

// nonRetryable are the error types no retry can fix: the input is wrong.
var nonRetryable = []string{activities.ErrConfig, activities.ErrData}

// The activity option presets. Each names one kind of stage; a call site
// picks one and adds its summary (see stage).

// cpuPreset: store work, scoring and statistics on the CPU queue.
func cpuPreset() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           TaskQueue,
		StartToCloseTimeout: 30 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			MaximumAttempts: 20, NonRetryableErrorTypes: nonRetryable,
		},
	}
}

// screenPreset: screening a large corpus may take the whole budget; it
// heartbeats its shard offsets, so a dead worker is noticed in minutes.
func screenPreset(wall time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           TaskQueue,
		StartToCloseTimeout: wall,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{NonRetryableErrorTypes: nonRetryable},
	}
}

// inferPreset: model calls over one shard, cancelled when the axis budget
// runs out and waited for while they checkpoint what they answered.
func inferPreset(budget time.Duration, heartbeatSecs int) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           InferenceTaskQueue,
		StartToCloseTimeout: budget + time.Minute,
		HeartbeatTimeout:    time.Duration(max(heartbeatSecs, 5)) * time.Second,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			NonRetryableErrorTypes: nonRetryable,
		},
	}
}

// judgePreset: the judge ensemble rates an axis's responses, shard by shard.
func judgePreset(budget time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           InferenceTaskQueue,
		StartToCloseTimeout: max(budget, time.Hour),
		HeartbeatTimeout:    5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: nonRetryable},
	}
}

// judgeUntilPreset: judging bounded by the time left to the global deadline;
// cancelled at the deadline and waited for while it checkpoints.
func judgeUntilPreset(left time.Duration) workflow.ActivityOptions {
	o := judgePreset(0)
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
	return workflow.WithActivityOptions(ctx, cpuPreset())
}
