package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/glossobench/glossobench/infra/results/report"
	"github.com/glossobench/glossobench/infra/runfiles"
)

func init() {
	register("report", "write one self-contained HTML page of a run: scores with CIs, measurement profile, notes", runReport)
}

func runReport(args []string) int { return reportMain(args, os.Stdout, os.Stderr) }

func reportMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "HTML `FILE` to write (default RUNDIR/report.html)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench report RUNDIR [--out FILE]")
		fmt.Fprintln(stderr, "\nRUNDIR is <store>/runs/<run_id>; its result.json is rendered. The page loads")
		fmt.Fprintln(stderr, "nothing and runs no script; the plot is embedded.")
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
	res, err := readRunFolderResult(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "glossobench report: %v\n", err)
		return 1
	}
	var b bytes.Buffer
	if err := report.Write(&b, res); err != nil {
		fmt.Fprintf(stderr, "glossobench report: %v\n", err)
		return 1
	}
	if *out == "" {
		*out = filepath.Join(rest[0], "report.html")
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "glossobench report: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return 0
}

// readRunFolderResult reads the result.json of the run folder dir.
func readRunFolderResult(dir string) (*runfiles.Result, error) {
	f, err := runfiles.Dir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Result()
}
