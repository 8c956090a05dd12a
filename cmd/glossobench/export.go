package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/glossobench/glossobench/infra/results/export"
	"github.com/glossobench/glossobench/infra/results/inputs"
)

func init() {
	register("export", "write a finished run's result in another tool's schema (--format lm-eval|every-eval-ever)", runExport)
}

func runExport(args []string) int { return exportMain(args, os.Stdout, os.Stderr) }

func exportMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "", "`schema` to write: lm-eval (an lm-evaluation-harness results file) or every-eval-ever (an Every Eval Ever record, schema "+export.EEESchemaVersion+")")
	org := fs.String("org", "GlossoBench", "every-eval-ever: source_organization_name, who ran the evaluation")
	stamp := fs.Int64("timestamp", 0, "every-eval-ever: retrieved_timestamp in Unix seconds (default now)")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench export --format lm-eval|every-eval-ever [--out FILE] RUNDIR")
		fmt.Fprintln(stderr, "\nlm-eval: one task per scored axis (glossobench_<axis>) with its headline as \"<metric>,none\",")
		fmt.Fprintln(stderr, "its 95% interval as \"<metric>_ci95,none\", n-samples, versions, and the mean score as task glossobench.")
		fmt.Fprintln(stderr, "every-eval-ever: one evaluation_results entry per scored axis and one for ms_public, with the bootstrap 95% interval.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 1
	}
	if fs.NArg() != 1 || *format == "" {
		fs.Usage()
		return 1
	}
	if *format != "lm-eval" && *format != "every-eval-ever" {
		fmt.Fprintf(stderr, "glossobench export: --format %q: known: lm-eval, every-eval-ever\n", *format)
		return 1
	}
	runs, err := inputs.FindRuns(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "glossobench export: %v\n", err)
		return 1
	}
	if len(runs) != 1 {
		fmt.Fprintf(stderr, "glossobench export: %s holds %d runs; name one run directory\n", fs.Arg(0), len(runs))
		return 1
	}
	r := runs[0].Result
	var doc any = export.LMEval(r)
	if *format == "every-eval-ever" {
		ts := *stamp
		if ts == 0 {
			ts = time.Now().Unix()
		}
		doc = export.EveryEvalEver(r, *org, ts)
	}
	data, _ := json.MarshalIndent(doc, "", "  ")
	data = append(data, '\n')
	if *out == "" {
		stdout.Write(data)
		return 0
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "glossobench export: %v\n", err)
		return 1
	}
	return 0
}
