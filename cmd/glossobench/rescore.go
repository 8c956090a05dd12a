package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/results/release"
)

func init() {
	registerIO("rescore", "re-derive every headline of a release bundle; exit 1 when one differs", rescoreMain)
}

func rescoreMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("rescore", stderr, "rescore BUNDLE [--require-all] [--out FILE]",
		"\nRe-derives each axis headline and ms_public / ms_pooled / ms_experimental from",
		"the bundle alone. Exactly rescorable: acc_cloze, acc_generate, prompt_level_strict_acc,",
		"mean_judge_score_normalized (mean of item scores), refusal_on_unsafe (share of harmful",
		"items refused), chrf++ (corpus chrF++ from the per-item chrf_stats) and ms_ci95 (the",
		"run's seeded bootstrap).",
		"Exit 0 when every number is reproduced, 1 when one differs or on error.")
	strict := fs.Bool("require-all", false, "also fail when an axis cannot be rescored")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	fail := failer(stderr, "rescore")
	m, items, err := release.Read(rest[0])
	if err != nil {
		return fail(err)
	}
	rep := release.Rescore(m, items)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "number\tmethod\tpublished\trescored\tstatus")
	unchecked := 0
	for _, c := range append(rep.Axes, rep.MS...) {
		status := c.Status
		if c.Detail != "" {
			status += ": " + c.Detail
		}
		if c.Status == release.StatusNotChecked {
			unchecked++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Method, fmtPtr(c.Published), fmtPtr(c.Rescored), status)
	}
	tw.Flush()
	if *out != "" {
		if err := writeReportJSON(*out, rep); err != nil {
			return fail(err)
		}
	}
	if !rep.OK() {
		fmt.Fprintln(stdout, "result: DIFFERS from the manifest")
		return 1
	}
	if unchecked > 0 && *strict {
		fmt.Fprintf(stdout, "result: %d number(s) could not be rescored (--require-all)\n", unchecked)
		return 1
	}
	fmt.Fprintln(stdout, "result: reproduced")
	return 0
}

// fmtPtr prints a number exactly (shortest round-trip form), or "-".
func fmtPtr(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}
