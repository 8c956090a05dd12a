package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runner"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
)

func init() {
	register("run", "run an evaluation (an EvalRun workflow) and follow it", runRun)
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func runRun(args []string) int {
	fs := newFlagSet("run", "glossobench run --config FILE [--model SPEC] [--model-id ID] [--out DIR] [--run-id ID]")
	cfgPath := fs.String("config", "", "run config (YAML)")
	model := fs.String("model", "", "model spec (gguf:PATH, openai:URL); overrides model.spec")
	modelID := fs.String("model-id", "", "model id recorded in the result; overrides model.id")
	out := fs.String("out", "", "also copy result.json into this folder")
	runID := fs.String("run-id", "", "run id (default: model id and start time); reuse one to resume a crashed run")
	maxWall := fs.Int("max-wall-seconds", 0, "wall-clock budget; overrides run.max_wall_seconds")
	detach := fs.Bool("detach", false, "start the run and return without following it")
	chatTemplate := fs.String("chat-template", "", "auto (raw prompts, the default) or always (the model's own chat template on the generate path); overrides run.chat_template")
	overlay := fs.Bool("judge-overlay", false, "judges also rate the verifiable axes' generated responses (secondary judge_quality)")
	if !parse(fs, args) {
		return 2
	}
	if *cfgPath == "" {
		fmt.Fprintln(os.Stderr, "run: --config is required")
		return 2
	}
	if *maxWall != 0 && *maxWall <= config.AggregateReserveSeconds {
		fmt.Fprintf(os.Stderr, "run: --max-wall-seconds %d is at or below the %d s kept back for scoring and aggregation: no axis would get any time\n", *maxWall, config.AggregateReserveSeconds)
		return 2
	}
	log := newLogger()
	cfg, err := config.Load(*cfgPath, config.Overrides{Model: *model, ModelID: *modelID, JudgeOverlay: *overlay, ChatTemplate: *chatTemplate})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	abs, err := filepath.Abs(*cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if *runID == "" {
		*runID = unsafeID.ReplaceAllString(cfg.Model.ID, "_") + "-" + time.Now().UTC().Format("20060102T150405")
	}

	addr, ns, srv, err := ensureServer(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if srv != nil {
		defer srv.Stop()
		fmt.Fprintf(os.Stderr, "Temporal Web UI: %s (open while the run lasts; `glossobench dev` keeps it up)\n", srv.UIURL)
	}
	c, err := dial(addr, ns, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	// A remote cluster has its own workers; a local one gets one in this process.
	if runner.FromEnv().Address == "" {
		acts := activities.New(log)
		defer acts.Close()
		w, err := runner.StartWorkers(c, acts, runner.All)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer w.Stop()
	}

	ctx, stop := signalContext()
	defer stop()
	in := workflows.EvalRunInput{ConfigPath: abs, Model: *model, ModelID: *modelID, RunID: *runID, MaxWallSeconds: *maxWall, JudgeOverlay: *overlay, ChatTemplate: *chatTemplate}
	we, err := startRun(ctx, c, in, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "EvalRun %s (workflow %s, run %s)\n", *runID, we.GetID(), we.GetRunID())
	if *detach {
		return 0
	}
	done := make(chan struct{})
	go follow(ctx, c, we.GetID(), done)
	var res workflows.EvalRunResult
	err = we.Get(ctx, &res)
	close(done)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "\ninterrupted; the run's state is kept: resume it with --run-id %s\n", *runID)
			return 130
		}
		fmt.Fprintf(os.Stderr, "\nrun failed: %v\n", err)
		return 1
	}
	printSummary(res)
	path := res.Summary.ResultPath
	if *out != "" {
		p, err := copyResult(ctx, cfg, res, *out)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		path = p
	}
	if path == "" {
		path = cfg.Store.URI + "/" + res.Summary.ResultKey
	}
	fmt.Printf("result.json: %s\n", path)
	return 0
}

// startRun starts EvalRun, or attaches to it when a run with this id is
// still going (resume after a crashed client).
func startRun(ctx context.Context, c client.Client, in workflows.EvalRunInput, cfg *config.Config) (client.WorkflowRun, error) {
	opts := client.StartWorkflowOptions{
		ID:                       "evalrun-" + in.RunID,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		Memo:                     map[string]any{"model_id": cfg.Model.ID, "bench_version": cfg.BenchVersion},
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("GlossoModelID").ValueSet(cfg.Model.ID),
			temporal.NewSearchAttributeKeyKeyword("GlossoBenchVersion").ValueSet(cfg.BenchVersion),
			temporal.NewSearchAttributeKeyKeywordList("GlossoAxes").ValueSet(cfg.AxisNames()),
		),
	}
	we, err := c.ExecuteWorkflow(ctx, opts, workflows.WorkflowName, in)
	if err != nil && strings.Contains(strings.ToLower(err.Error()), "search attribute") {
		// A cluster without GlossoBench's search attributes still runs it; the memo carries the same facts.
		opts.TypedSearchAttributes = temporal.SearchAttributes{}
		we, err = c.ExecuteWorkflow(ctx, opts, workflows.WorkflowName, in)
	}
	if err != nil {
		return nil, fmt.Errorf("start EvalRun: %w", err)
	}
	return we, nil
}

// follow draws a progress bar per axis from the progress query.
func follow(ctx context.Context, c client.Client, wfID string, done <-chan struct{}) {
	tty := isTerminal(os.Stderr)
	start := time.Now()
	lines := 0
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := c.QueryWorkflow(qctx, wfID, "", workflows.ProgressQuery)
		cancel()
		if err != nil {
			continue
		}
		var p workflows.Progress
		if v.Get(&p) != nil {
			continue
		}
		var b strings.Builder
		for _, ax := range p.Axes {
			b.WriteString(progressLine(ax, time.Since(start)))
			b.WriteByte('\n')
		}
		text := b.String()
		if !tty {
			if text != last && time.Since(start) > 0 {
				fmt.Fprint(os.Stderr, text)
				last = text
			}
			continue
		}
		if lines > 0 {
			fmt.Fprintf(os.Stderr, "\033[%dA", lines)
		}
		fmt.Fprint(os.Stderr, strings.ReplaceAll(text, "\n", "\033[K\n"))
		lines = len(p.Axes)
	}
}

func progressLine(ax workflows.AxisProgress, elapsed time.Duration) string {
	const width = 30
	frac := 0.0
	if ax.Total > 0 {
		frac = float64(ax.Done) / float64(ax.Total)
	}
	n := int(frac * width)
	eta := "-"
	if ax.Done > 0 && ax.Done < ax.Total && ax.Stage == "inference" {
		eta = (time.Duration(float64(elapsed) / frac * (1 - frac))).Round(time.Second).String()
	}
	return fmt.Sprintf("%-10s [%s%s] %5d/%-5d %-9s ETA %s", ax.Axis, strings.Repeat("#", n), strings.Repeat(".", width-n), ax.Done, ax.Total, ax.Stage, eta)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func printSummary(res workflows.EvalRunResult) {
	s := res.Summary
	fmt.Println()
	fmt.Printf("run %s\n", res.RunID)
	for _, name := range config.Axes {
		v, ok := s.Axes[name]
		if !ok {
			continue
		}
		fmt.Printf("  %-10s %s\n", name, fmtScore(v))
	}
	for _, sk := range s.Skipped {
		fmt.Printf("  %-10s skipped: %s\n", sk.Axis, sk.Reason)
	}
	ci := ""
	if s.MSCI95 != nil {
		ci = fmt.Sprintf("  95%% CI [%.4f, %.4f]", s.MSCI95[0], s.MSCI95[1])
	}
	fmt.Printf("  ms_public  %s%s\n  ms_pooled  %s\n", fmtScore(s.MSPublic), ci, fmtScore(s.MSPooled))
	if s.MSExperimental != nil {
		fmt.Printf("  ms_experimental %s (self-built axes; not in the headline)\n", fmtScore(s.MSExperimental))
	}
	fmt.Printf("  ms_ranking %s  over %s (what leaderboards, compare, Elo and concord rank by)\n", fmtScore(s.MSRanking), strings.Join(s.MSRankingAxes, ", "))
	if len(s.NearChanceAxes) > 0 {
		fmt.Printf("  near chance (in ms_public, left out of ms_ranking): %s\n", strings.Join(s.NearChanceAxes, ", "))
	}
	for _, w := range s.Warnings {
		fmt.Printf("  %s\n", w)
	}
}

func fmtScore(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", *v)
}

func copyResult(ctx context.Context, cfg *config.Config, res workflows.EvalRunResult, dir string) (string, error) {
	uri := cfg.Store.URI
	st, err := store.Open(ctx, uri)
	if err != nil {
		return "", err
	}
	data, err := st.Get(ctx, res.Summary.ResultKey)
	if err != nil {
		return "", err
	}
	if !json.Valid(data) {
		return "", errors.New("result.json in the store is not valid JSON")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "result.json")
	return p, os.WriteFile(p, data, 0o644)
}
