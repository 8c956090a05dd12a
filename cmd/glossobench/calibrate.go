package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/results/calibrate"
	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/results/release"
)

func init() {
	register("calibrate", "accuracy per human-expected difficulty band and an easy→hard monotonicity verdict", runCalibrate)
}

func runCalibrate(args []string) int { return calibrateMain(args, os.Stdout, os.Stderr) }

func calibrateMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	anchorsPath := fs.String("anchors", "", "anchors CSV `FILE`: item_id,expected_difficulty[,expected_accuracy]")
	axis := fs.String("axis", "", "only this axis's items (when item ids repeat across axes)")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench calibrate RUNDIR --anchors FILE [--axis NAME] [--out FILE]")
		fmt.Fprintln(stderr, "\nThe anchors name items a fluent reader rated easy, medium or hard, optionally with the")
		fmt.Fprintln(stderr, "accuracy band expected of each (0.8-1.0 or 80-100%). A filled-in spotcheck worksheet")
		fmt.Fprintln(stderr, "works as is. Prints accuracy per band against the expected band and whether accuracy")
		fmt.Fprintln(stderr, "falls from easy to hard. Exit 0 when monotone (or undetermined), 2 when not, 1 on error.")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(rest) != 1 || *anchorsPath == "" {
		fs.Usage()
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "glossobench calibrate: %v\n", err)
		return 1
	}
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
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", b.Difficulty, b.Anchors, b.Scored, fmtOpt(b.Accuracy), exp, b.Verdict)
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
