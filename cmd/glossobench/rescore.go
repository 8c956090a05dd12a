package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/results/release"
)

func init() {
	register("rescore", "re-derive every headline of a release bundle; exit 1 when one differs", runRescore)
}

func runRescore(args []string) int { return rescoreMain(args, os.Stdout, os.Stderr) }

func rescoreMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rescore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	strict := fs.Bool("require-all", false, "also fail when an axis cannot be rescored")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench rescore BUNDLE [--require-all] [--out FILE]")
		fmt.Fprintln(stderr, "\nRe-derives each axis headline and ms_public / ms_pooled / ms_experimental from")
		fmt.Fprintln(stderr, "the bundle alone. Exactly rescorable: acc_cloze, acc_generate, prompt_level_strict_acc,")
		fmt.Fprintln(stderr, "mean_judge_score_normalized (mean of item scores), refusal_on_unsafe (share of harmful")
		fmt.Fprintln(stderr, "items refused), chrf++ (corpus chrF++ from the per-item chrf_stats) and ms_ci95 (the")
		fmt.Fprintln(stderr, "run's seeded bootstrap).")
		fmt.Fprintln(stderr, "Exit 0 when every number is reproduced, 1 when one differs or on error.")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(rest) != 1 {
		fs.Usage()
		return 1
	}
	m, items, err := release.Read(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "glossobench rescore: %v\n", err)
		return 1
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
			fmt.Fprintf(stderr, "glossobench rescore: %v\n", err)
			return 1
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
