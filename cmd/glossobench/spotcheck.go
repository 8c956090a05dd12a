package main

import (
	"fmt"
	"io"
	"os"

	"github.com/glossobench/glossobench/infra/results/release"
	"github.com/glossobench/glossobench/infra/results/spotcheck"
)

func init() {
	registerIO("spotcheck", "CSV worksheet of high-leverage items for a fluent reader, with an expected_difficulty column", spotcheckMain)
}

func spotcheckMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("spotcheck", stderr, "spotcheck RUNDIR [--n 50] [--seed 1] [--out FILE]",
		"\nA CSV worksheet of the run's highest-leverage items: cloze/generate disagreements,",
		"wrong answers, items of datasets not marked human_validated. A reviewer fills in",
		"expected_difficulty (easy, medium, hard); the filled sheet is an anchors file for",
		"`glossobench calibrate`. Text cells starting with = + - @ get a leading ' so a",
		"spreadsheet shows them as text.")
	n := fs.Int("n", 50, "items on the worksheet")
	seed := fs.Uint64("seed", 1, "seed of the order among equally ranked items")
	out := fs.String("out", "", "write the worksheet to `FILE` (default stdout)")
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	if *n < 1 {
		return usageError(fs, "--n %d: want at least 1", *n)
	}
	fail := failer(stderr, "spotcheck")
	run, err := release.LoadRun(rest[0])
	if err != nil {
		return fail(err)
	}
	if run.Config == nil {
		fmt.Fprintf(stderr, "glossobench spotcheck: note: %s has no manifest.json; every dataset counts as not human-validated\n", rest[0])
	}
	rows := spotcheck.Rows(run, *n, *seed)
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		w = f
	}
	if err := spotcheck.WriteWorksheet(w, rows); err != nil {
		return fail(err)
	}
	if *out != "" {
		fmt.Fprintf(stdout, "wrote %d item(s) to %s\n", len(rows), *out)
	}
	return 0
}
