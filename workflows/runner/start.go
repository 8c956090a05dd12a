package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/preflight"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/workflows"
)

// CheckInput refuses what `glossobench run` is given before anything
// starts: no config path, a MaxWallSeconds that leaves no time once the aggregation's
// reserve is kept back, a RunID Prepare would refuse. Its errors name the
// command's flags.
func CheckInput(in workflows.EvalRunInput) error {
	if in.ConfigPath == "" {
		return errors.New("--config is required")
	}
	if in.MaxWallSeconds != 0 && in.MaxWallSeconds <= config.AggregateReserveSeconds {
		return fmt.Errorf("--max-wall-seconds %d is at or below the %d s kept back for scoring and aggregation: no axis would get any time", in.MaxWallSeconds, config.AggregateReserveSeconds)
	}
	if in.RunID != "" {
		// Checked before anything starts, as Prepare checks the workflow input's.
		if err := runfiles.CheckRunID(in.RunID); err != nil {
			return fmt.Errorf("--run-id %w", err)
		}
	}
	return nil
}

// PrepareRun loads the config of a run started from a command line (its
// path and overrides in in) and, with check, checks what the run needs
// from outside (preflight.Check) before a workflow exists: a model that
// never answered fails here, in seconds, not in retries. It completes in
// for workers that may run in another directory: the config path and a
// relative GGUF path made absolute, and a run id (the model id and the
// start time) when none is given.
func PrepareRun(ctx context.Context, in *workflows.EvalRunInput, check bool) (*config.Config, error) {
	ov := config.Overrides{Model: in.Model, ModelID: in.ModelID, JudgeOverlay: in.JudgeOverlay, ChatTemplate: in.ChatTemplate, Limit: in.Limit}
	cfg, err := config.Load(in.ConfigPath, ov)
	if err != nil {
		return nil, err
	}
	if check {
		if problems := preflight.Check(ctx, cfg, preflight.Options{ConfigPath: in.ConfigPath, Overrides: ov}); len(problems) > 0 {
			return nil, &PreflightError{Problems: problems}
		}
	}
	if in.ConfigPath, err = filepath.Abs(in.ConfigPath); err != nil {
		return nil, err
	}
	if in.RunID == "" {
		in.RunID = runfiles.RunIDFrom(cfg.Model.ID, "-"+time.Now().UTC().Format("20060102T150405"))
	}
	if p, ok := strings.CutPrefix(in.Model, "gguf:"); ok && !filepath.IsAbs(p) {
		if a, err := filepath.Abs(p); err == nil {
			in.Model = "gguf:" + a
		}
	}
	return cfg, nil
}

// PreflightError is what preflight.Check found wrong with a run, which
// was therefore not started.
type PreflightError struct{ Problems []error }

func (e *PreflightError) Error() string {
	var b strings.Builder
	for _, p := range e.Problems {
		b.WriteString(p.Error() + "\n")
	}
	b.WriteString("nothing was started.")
	return b.String()
}

// StartRun starts EvalRun, or attaches to it when a run with this id is
// still going (resume after a crashed client). Its memo and search
// attributes name the model, the bench version and the axes; a cluster
// without GlossoBench's search attributes still runs it, with the memo.
func StartRun(ctx context.Context, c client.Client, in workflows.EvalRunInput, cfg *config.Config) (client.WorkflowRun, error) {
	opts := client.StartWorkflowOptions{
		ID:                       "evalrun-" + in.RunID,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		Memo:                     map[string]any{"model_id": cfg.Model.ID, "bench_version": cfg.BenchVersion},
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.ModelIDAttribute.ValueSet(cfg.Model.ID),
			workflows.BenchVersionAttribute.ValueSet(cfg.BenchVersion),
			workflows.AxesAttribute.ValueSet(cfg.AxisNames()),
		),
	}
	we, err := c.ExecuteWorkflow(ctx, opts, workflows.WorkflowName, in)
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "search attribute") {
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		we, err = c.ExecuteWorkflow(ctx, opts, workflows.WorkflowName, in)
	}
	if err != nil {
		return nil, fmt.Errorf("start EvalRun: %w", err)
	}
	return we, nil
}
