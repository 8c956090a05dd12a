package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/results/calibrate"
	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/results/release"
	"github.com/glossobench/glossobench/infra/runfiles"
)

func init() {
	registerIO("calibrate", "accuracy per human-expected difficulty band and an easy→hard monotonicity verdict", calibrateMain)
}

func calibrateMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("calibrate", stderr, "calibrate RUNDIR --anchors FILE [--axis NAME] [--out FILE]",
		"\nThe anchors name items a fluent reader rated easy, medium or hard, optionally with the",
		"accuracy band expected of each (0.8-1.0 or 80-100%). A filled-in spotcheck worksheet",
		"works as is. Prints accuracy per band against the expected band and whether accuracy",
		"falls from easy to hard. Exit 0 when monotone (or undetermined), 2 when not, 1 on error.")
	anchorsPath := fs.String("anchors", "", "anchors CSV `FILE`: item_id,expected_difficulty[,expected_accuracy]")
	axis := fs.String("axis", "", "only this axis's items (when item ids repeat across axes)")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	// Exit 2 is the not-monotone verdict here, so a usage error exits 1.
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return min(code, 1)
	}
	if *anchorsPath == "" {
		usageError(fs, "--anchors is required")
		return 1
	}
	fail := failer(stderr, "calibrate")
	set, err := inputs.ReadAnchorsFile(*anchorsPath)
	if err != nil {
		return fail(err)
	}
	run, err := release.LoadRun(rest[0])
	if err != nil {
		return fail(err)
	}
	c, err := calibrate.Run(run, set, *axis)
	if err != nil {
		return fail(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "difficulty\tanchors\tscored\taccuracy\texpected\tverdict")
	for _, b := range c.Bands {
		exp := "-"
		if b.Expected != nil {
			exp = b.Expected.String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", b.Difficulty, b.Anchors, b.Scored, runfiles.FormatScore(b.Accuracy), exp, b.Verdict)
	}
	tw.Flush()
	if len(c.Missing) > 0 {
		fmt.Fprintf(stdout, "note: %d anchored item(s) not scored in this run (first: %s)\n", len(c.Missing), c.Missing[0])
	}
	if set.Blank > 0 {
		fmt.Fprintf(stdout, "note: %d row(s) without an expected_difficulty skipped\n", set.Blank)
	}
	fmt.Fprintf(stdout, "easy→hard: %s (%s)\n", c.Monotonicity, c.Detail)
	if *out != "" {
		if err := writeReportJSON(*out, c); err != nil {
			return fail(err)
		}
	}
	if c.Monotonicity == "not monotone" {
		return 2
	}
	return 0
}
