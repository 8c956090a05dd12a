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
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
)

func init() {
	register("run", "run an evaluation (an EvalRun workflow) and follow it", runRun)
}

func runRun(args []string) int {
	fs := commandFlags("run", os.Stderr, "run --config FILE [--model SPEC] [--model-id ID] [--limit N] [--out DIR] [--run-id ID]")
	var in workflows.EvalRunInput
	fs.StringVar(&in.ConfigPath, "config", "", "run config (YAML)")
	fs.StringVar(&in.Model, "model", "", "model spec (gguf:PATH, openai:URL); overrides model.spec")
	fs.StringVar(&in.ModelID, "model-id", "", "model id recorded in the result; overrides model.id")
	limit := limitFlag(fs)
	out := fs.String("out", "", "also copy result.json into this folder")
	fs.StringVar(&in.RunID, "run-id", "", "run id (default: model id and start time); reuse one to resume a crashed run")
	fs.IntVar(&in.MaxWallSeconds, "max-wall-seconds", 0, "wall-clock budget; overrides run.max_wall_seconds")
	detach := fs.Bool("detach", false, "start the run and return without following it")
	fs.StringVar(&in.ChatTemplate, "chat-template", "", "auto (raw prompts, the default) or always (the model's own chat template on the generate path); overrides run.chat_template")
	fs.BoolVar(&in.JudgeOverlay, "judge-overlay", false, "judges also rate the verifiable axes' generated responses (secondary judge_quality)")
	fs.BoolVar(&in.AllowNewModel, "allow-new-model", false, "resume --run-id on a model other than the one it started on (other weights behind the path, another served model): its unfinished axes start over, its scored ones are kept, and the notes say so")
	skipPreflight := fs.Bool("skip-preflight", false, "start the run without first checking datasets, model, judges and store from here (for workers that see files or servers this machine does not)")
	logFormatFlag(fs)
	metricsAddrFlag(fs)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	in.Limit = int(*limit)
	if err := runner.CheckInput(in); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		return 2
	}
	log := newLogger()
	cfg, err := runner.PrepareRun(context.Background(), &in, !*skipPreflight)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, ns, srv, stopAll, err := connectRun(log)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopAll()
	ctx, stop := signalContext()
	defer stop()
	we, err := runner.StartRun(ctx, c, in, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	log.Info().Str("workflow", we.GetID()).Msgf("EvalRun %s started", in.RunID)
	if *detach {
		return 0
	}
	res, err := awaitRun(ctx, c, we, log)
	if err != nil {
		return runFailed(ctx, log, err, in.RunID, we.GetID(), ns, srv)
	}
	return printRun(ctx, cfg, res, *out)
}

// awaitRun follows the run we on stderr until it ends and returns its result.
func awaitRun(ctx context.Context, c client.Client, we client.WorkflowRun, log zerolog.Logger) (workflows.EvalRunResult, error) {
	done := make(chan struct{})
	defer close(done)
	go follow(ctx, c, we.GetID(), newProgressView(os.Stderr, isTerminal(os.Stderr), log), done)
	var res workflows.EvalRunResult
	err := we.Get(ctx, &res)
	return res, err
}

// runFailed says why the run with workflow id wfID failed, or that it was
// interrupted and how to resume it, and returns the exit code.
func runFailed(ctx context.Context, log zerolog.Logger, err error, runID, wfID, ns string, srv *devserver.Server) int {
	if ctx.Err() != nil {
		fmt.Fprintf(os.Stderr, "\ninterrupted; the run's state is kept: resume it with --run-id %s\n", runID)
		return 130
	}
	// The activity's own message, not Temporal's chain of wrappers;
	// the whole history is in the Temporal UI under the workflow id.
	ui := "workflow id " + wfID + " (namespace " + ns + ")"
	if srv != nil && srv.UIURL != "" {
		ui = srv.UIURL + "/namespaces/" + ns + "/workflows/" + wfID
	}
	if logFormat == "json" {
		log.Error().Str("workflow", wfID).Str("namespace", ns).Msg("run failed: " + runner.Cause(err))
		return 1
	}
	fmt.Fprintf(os.Stderr, "run failed: %s\nTemporal UI: %s\n", runner.Cause(err), ui)
	return 1
}

// printRun prints a finished run's summary and where its result.json is
// (copied into out when out is set); it returns the exit code: 1 when an
// axis's model failed every request, which is no result to publish.
func printRun(ctx context.Context, cfg *config.Config, res workflows.EvalRunResult, out string) int {
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
	if out != "" {
		p, err := copyResult(data, out)
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

// connectRun serves --metrics-addr, finds or starts the Temporal server and
// dials it; a local server gets a worker in this process (a remote cluster
// has its own). stop undoes it all.
func connectRun(log zerolog.Logger) (c client.Client, ns string, srv *devserver.Server, stop func(), err error) {
	var undo []func()
	stop = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	stopMetrics, err := serveMetrics(log)
	if err != nil {
		return nil, "", nil, nil, err
	}
	undo = append(undo, stopMetrics)
	addr, ns, srv, err := ensureServer(log)
	if err != nil {
		return nil, "", nil, nil, err
	}
	if srv != nil {
		undo = append(undo, srv.Stop)
		log.Info().Str("url", srv.UIURL).Msg("Temporal Web UI (open while the run lasts; `glossobench dev` keeps it up)")
	}
	c, err = dial(addr, ns, log)
	if err != nil {
		return nil, "", nil, nil, err
	}
	undo = append(undo, c.Close)
	if runner.FromEnv().Address == "" {
		w, err := runner.Serve(c, log, runner.All)
		if err != nil {
			return nil, "", nil, nil, err
		}
		undo = append(undo, w.Stop)
	}
	return c, ns, srv, stop, nil
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
