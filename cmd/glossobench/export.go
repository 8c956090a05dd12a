package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/glossobench/glossobench/infra/results/export"
	"github.com/glossobench/glossobench/infra/results/inputs"
)

func init() {
	registerIO("export", "write a finished run's result in another tool's schema (--format lm-eval|every-eval-ever)", exportMain)
}

func exportMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("export", stderr, "export --format lm-eval|every-eval-ever [--out FILE] RUNDIR",
		"\nlm-eval: one task per scored axis (glossobench_<axis>) with its headline as \"<metric>,none\",",
		"its 95% interval as \"<metric>_ci95,none\", n-samples, versions, and the mean score as task glossobench.",
		"every-eval-ever: one evaluation_results entry per scored axis and one for ms_public, with the bootstrap 95% interval.")
	format := fs.String("format", "", "`schema` to write: lm-eval (an lm-evaluation-harness results file) or every-eval-ever (an Every Eval Ever record, schema "+export.EEESchemaVersion+")")
	org := fs.String("org", "GlossoBench", "every-eval-ever: source_organization_name, who ran the evaluation")
	stamp := fs.Int64("timestamp", 0, "every-eval-ever: retrieved_timestamp in Unix seconds (default now)")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	if *format != "lm-eval" && *format != "every-eval-ever" {
		return usageError(fs, "--format %q: known: lm-eval, every-eval-ever", *format)
	}
	fail := failer(stderr, "export")
	runs, err := inputs.FindRuns(rest[0])
	if err != nil {
		return fail(err)
	}
	if len(runs) != 1 {
		return fail(fmt.Errorf("%s holds %d runs; name one run directory", rest[0], len(runs)))
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
		return fail(err)
	}
	return 0
}
