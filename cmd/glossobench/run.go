package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runner"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/workflows"
)

func init() {
	register("run", "run an evaluation (an EvalRun workflow) and follow it", runRun)
}

func runRun(args []string) int {
	fs := newFlagSet("run", "glossobench run --config FILE [--model SPEC] [--model-id ID] [--limit N] [--out DIR] [--run-id ID]")
	cfgPath := fs.String("config", "", "run config (YAML)")
	model := fs.String("model", "", "model spec (gguf:PATH, openai:URL); overrides model.spec")
	modelID := fs.String("model-id", "", "model id recorded in the result; overrides model.id")
	limit := limitFlag(fs)
	out := fs.String("out", "", "also copy result.json into this folder")
	runID := fs.String("run-id", "", "run id (default: model id and start time); reuse one to resume a crashed run")
	maxWall := fs.Int("max-wall-seconds", 0, "wall-clock budget; overrides run.max_wall_seconds")
	detach := fs.Bool("detach", false, "start the run and return without following it")
	chatTemplate := fs.String("chat-template", "", "auto (raw prompts, the default) or always (the model's own chat template on the generate path); overrides run.chat_template")
	overlay := fs.Bool("judge-overlay", false, "judges also rate the verifiable axes' generated responses (secondary judge_quality)")
	allowNewModel := fs.Bool("allow-new-model", false, "resume --run-id on a model other than the one it started on (other weights behind the path, another served model): its unfinished axes start over, its scored ones are kept, and the notes say so")
	skipPreflight := fs.Bool("skip-preflight", false, "start the run without first checking datasets, model, judges and store from here (for workers that see files or servers this machine does not)")
	logFormatFlag(fs)
	metricsAddrFlag(fs)
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
	if *runID != "" {
		// Checked before anything starts, as Prepare checks the workflow input's.
		if err := runfiles.CheckRunID(*runID); err != nil {
			fmt.Fprintf(os.Stderr, "run: --run-id %v\n", err)
			return 2
		}
	}
	log := newLogger()
	ov := config.Overrides{Model: *model, ModelID: *modelID, JudgeOverlay: *overlay, ChatTemplate: *chatTemplate, Limit: int(*limit)}
	cfg, err := config.Load(*cfgPath, ov)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if !*skipPreflight {
		// What a run needs from outside is checked before a workflow exists:
		// a model that never answered fails here, in seconds, not in retries.
		if problems := checkRun(context.Background(), *cfgPath, cfg, ov); len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintln(os.Stderr, p)
			}
			fmt.Fprintln(os.Stderr, "nothing was started.")
			return 1
		}
	}
	abs, err := filepath.Abs(*cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if *runID == "" {
		*runID = runfiles.RunIDFrom(cfg.Model.ID, "-"+time.Now().UTC().Format("20060102T150405"))
	}

	stopMetrics, err := serveMetrics(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopMetrics()
	addr, ns, srv, err := ensureServer(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if srv != nil {
		defer srv.Stop()
		log.Info().Str("url", srv.UIURL).Msg("Temporal Web UI (open while the run lasts; `glossobench dev` keeps it up)")
	}
	c, err := dial(addr, ns, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	// A remote cluster has its own workers; a local one gets one in this process.
	if runner.FromEnv().Address == "" {
		w, err := runner.Serve(c, log, runner.All)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer w.Stop()
	}

	ctx, stop := signalContext()
	defer stop()
	// A GGUF path on the command line is relative to this directory; the
	// worker that loads it may run in another (as the config's path).
	spec := *model
	if p, ok := strings.CutPrefix(spec, "gguf:"); ok && !filepath.IsAbs(p) {
		if a, err := filepath.Abs(p); err == nil {
			spec = "gguf:" + a
		}
	}
	in := workflows.EvalRunInput{ConfigPath: abs, Model: spec, ModelID: *modelID, RunID: *runID, MaxWallSeconds: *maxWall, JudgeOverlay: *overlay, ChatTemplate: *chatTemplate, Limit: int(*limit), AllowNewModel: *allowNewModel}
	we, err := startRun(ctx, c, in, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log.Info().Str("workflow", we.GetID()).Msgf("EvalRun %s started", *runID)
	if *detach {
		return 0
	}
	done := make(chan struct{})
	go follow(ctx, c, we.GetID(), newProgressView(os.Stderr, isTerminal(os.Stderr), log), done)
	var res workflows.EvalRunResult
	err = we.Get(ctx, &res)
	close(done)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "\ninterrupted; the run's state is kept: resume it with --run-id %s\n", *runID)
			return 130
		}
		// The activity's own message, not Temporal's chain of wrappers;
		// the whole history is in the Temporal UI under the workflow id.
		ui := "workflow id " + we.GetID() + " (namespace " + ns + ")"
		if srv != nil && srv.UIURL != "" {
			ui = srv.UIURL + "/namespaces/" + ns + "/workflows/" + we.GetID()
		}
		if logFormat == "json" {
			log.Error().Str("workflow", we.GetID()).Str("namespace", ns).Msg("run failed: " + runner.Cause(err))
			return 1
		}
		fmt.Fprintf(os.Stderr, "run failed: %s\nTemporal UI: %s\n", runner.Cause(err), ui)
		return 1
	}
	data, result, err := readResult(ctx, cfg, res)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	printSummary(os.Stdout, res.RunID, result)
	if l := cfg.Run.Limit; l != nil {
		fmt.Printf("  limit      %d rows a dataset at most (--limit): a partial run, not comparable with a full one\n", *l)
	}
	path := res.Summary.ResultPath
	if *out != "" {
		p, err := copyResult(data, *out)
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
	// An axis whose model failed every request is no result to publish.
	code := 0
	for _, sk := range res.Summary.Skipped {
		if sk.Failed {
			fmt.Fprintf(os.Stderr, "axis %s failed: %s\n", sk.Axis, sk.Reason)
			code = 1
		}
	}
	return code
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
			workflows.ModelIDAttribute.ValueSet(cfg.Model.ID),
			workflows.BenchVersionAttribute.ValueSet(cfg.BenchVersion),
			workflows.AxesAttribute.ValueSet(cfg.AxisNames()),
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

// follow shows the run's progress from the progress query until done.
func follow(ctx context.Context, c client.Client, wfID string, v *progressView, done <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		p, err := workflows.QueryProgress(qctx, c, wfID)
		cancel()
		if err != nil {
			continue
		}
		v.show(p)
	}
}

// progressView draws a bar per axis, redrawn in place on a terminal. Into a
// file or pipe it writes one line each time an axis enters a stage (as a log
// event with --log-format json), and every 30 s while its count moves, so a
// saved log reads as a short story with ETAs. Each
// report also sets the items planned and done gauges of --metrics-addr.
type progressView struct {
	w     io.Writer
	tty   bool
	log   zerolog.Logger
	now   func() time.Time
	lines int                 // lines drawn last time (terminal)
	stage map[string]string   // each axis's stage last reported (file or pipe)
	said  map[string]rateMark // each axis's line last written (file or pipe)
	rate  map[string]rateMark
}

// pipeEvery is how often, into a file or pipe, an axis whose count moves
// within a stage gets a line (with its ETA) besides its stage changes.
const pipeEvery = 30 * time.Second

// rateMark is where an axis's count stood when it entered its stage (or
// when the view first saw it there): the ETA is the rate since then.
type rateMark struct {
	stage string
	at    time.Time
	done  int
}

func newProgressView(w io.Writer, tty bool, log zerolog.Logger) *progressView {
	return &progressView{w: w, tty: tty, log: log, now: time.Now, stage: map[string]string{}, said: map[string]rateMark{}, rate: map[string]rateMark{}}
}

func (v *progressView) show(p workflows.Progress) {
	now := v.now()
	etas := make([]string, len(p.Axes))
	for i, ax := range p.Axes {
		metrics.Progress(p.RunID, ax.Axis, ax.Stage, ax.Total, ax.Done)
		etas[i] = v.eta(ax, now)
	}
	if !v.tty {
		for i, ax := range p.Axes {
			if v.stage[ax.Axis] == ax.Stage && (ax.Done == v.said[ax.Axis].done || now.Sub(v.said[ax.Axis].at) < pipeEvery) {
				continue
			}
			v.stage[ax.Axis] = ax.Stage
			v.said[ax.Axis] = rateMark{stage: ax.Stage, at: now, done: ax.Done}
			if logFormat == "json" {
				v.log.Info().Str("axis", ax.Axis).Str("stage", ax.Stage).Int("done", ax.Done).Int("total", ax.Total).Msg("axis stage")
				continue
			}
			fmt.Fprintf(v.w, "%s %s\n", now.Format(time.TimeOnly), progressLine(ax, etas[i]))
		}
		return
	}
	var b strings.Builder
	for i, ax := range p.Axes {
		b.WriteString(progressLine(ax, etas[i]))
		b.WriteString("\033[K\n")
	}
	if v.lines > 0 {
		fmt.Fprintf(v.w, "\033[%dA", v.lines)
	}
	fmt.Fprint(v.w, b.String())
	v.lines = len(p.Axes)
}

// eta is how long the axis's stage has left at the rate its done count
// moved since the view saw it enter the stage; "-" until the count moves
// or once it reaches the total.
func (v *progressView) eta(ax workflows.AxisProgress, now time.Time) string {
	m, ok := v.rate[ax.Axis]
	if !ok || m.stage != ax.Stage || ax.Done < m.done {
		v.rate[ax.Axis] = rateMark{stage: ax.Stage, at: now, done: ax.Done}
		return "-"
	}
	moved, took := ax.Done-m.done, now.Sub(m.at)
	if moved <= 0 || ax.Done >= ax.Total || took <= 0 {
		return "-"
	}
	left := time.Duration(float64(took) / float64(moved) * float64(ax.Total-ax.Done))
	return left.Round(time.Second).String()
}

func progressLine(ax workflows.AxisProgress, eta string) string {
	const width = 30
	frac := 0.0
	if ax.Total > 0 {
		frac = min(1, float64(ax.Done)/float64(ax.Total))
	}
	n := int(frac * width)
	return fmt.Sprintf("%-10s [%s%s] %5d/%-5d %-9s ETA %s", ax.Axis, strings.Repeat("#", n), strings.Repeat(".", width-n), ax.Done, ax.Total, ax.Stage, eta)
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printSummary writes the run's outcome as a short table, one row per axis
// (n, headline score, its 95% CI, the headline metric), the mean scores
// under it and the warnings after it, so a first run reads as what it is.
func printSummary(w io.Writer, runID string, r *runfiles.Result) {
	scored := 0
	for _, ax := range r.Axes {
		if ax.Score != nil {
			scored++
		}
	}
	total := len(r.Axes) + len(r.Summary.SkippedAxes)
	fmt.Fprintf(w, "\nrun %s finished: %d of %d axes scored\n\n", runID, scored, total)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  axis\tn\tscore\t95% CI\theadline metric")
	for _, name := range scorers.AxisNames() {
		ax, ok := r.Axes[name]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", name, ax.N, fmtScore(ax.Score), fmtCI(ax.CI95), ax.Metric)
	}
	for _, sk := range r.Summary.SkippedAxes {
		what := "skipped"
		if sk.Failed {
			what = "failed"
		}
		fmt.Fprintf(tw, "  %s\t-\t-\t-\t%s: %s\n", sk.Axis, what, sk.Reason)
	}
	fmt.Fprintf(tw, "  ms_public\t\t%s\t%s\tmean over %s\n", fmtScore(r.Summary.MSPublic), fmtCI(r.Summary.MSCI95), strings.Join(r.Summary.MSAxes, ", "))
	if r.Summary.MSExperimental != nil {
		fmt.Fprintf(tw, "  ms_experimental\t\t%s\t\tself-built axes; not in the headline\n", fmtScore(r.Summary.MSExperimental))
	}
	fmt.Fprintf(tw, "  ms_ranking\t\t%s\t\tover %s (what leaderboards, compare, Elo and concord rank by)\n", fmtScore(r.Summary.MSRanking), strings.Join(r.Summary.MSRankingAxes, ", "))
	tw.Flush()
	if len(r.Summary.NearChanceAxes) > 0 {
		fmt.Fprintf(w, "\nnear chance (in ms_public, left out of ms_ranking): %s\n", strings.Join(r.Summary.NearChanceAxes, ", "))
	}
	if len(r.Summary.Warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings:\n")
		for _, warn := range r.Summary.Warnings {
			fmt.Fprintf(w, "  - %s\n", warn)
		}
	}
	fmt.Fprintln(w)
}

func fmtCI(ci *[2]float64) string {
	if ci == nil {
		return "-"
	}
	return fmt.Sprintf("[%.4f, %.4f]", ci[0], ci[1])
}

func fmtScore(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", *v)
}

// readResult reads the run's result.json from the store it was written to.
func readResult(ctx context.Context, cfg *config.Config, res workflows.EvalRunResult) ([]byte, *runfiles.Result, error) {
	st, err := store.Open(ctx, cfg.Store.URI)
	if err != nil {
		return nil, nil, err
	}
	data, err := st.Get(ctx, res.Summary.ResultKey)
	if err != nil {
		return nil, nil, err
	}
	var r runfiles.Result
	if err := runfiles.DecodeJSON(res.Summary.ResultKey, data, &r); err != nil {
		return nil, nil, err
	}
	return data, &r, nil
}

func copyResult(data []byte, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "result.json")
	return p, os.WriteFile(p, data, 0o644)
}
