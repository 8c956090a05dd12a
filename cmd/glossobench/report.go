package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/glossobench/glossobench/infra/results/report"
	"github.com/glossobench/glossobench/infra/runfiles"
)

func init() {
	registerIO("report", "write one self-contained HTML page of a run: scores with CIs, measurement profile, notes", reportMain)
}

func reportMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("report", stderr, "report RUNDIR [--out FILE]",
		"\nRUNDIR is <store>/runs/<run_id>; its result.json is rendered. The page loads",
		"nothing and runs no script; the plot is embedded.")
	out := fs.String("out", "", "HTML `FILE` to write (default RUNDIR/report.html)")
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	fail := failer(stderr, "report")
	res, err := readRunFolderResult(rest[0])
	if err != nil {
		return fail(err)
	}
	var b bytes.Buffer
	if err := report.Write(&b, res); err != nil {
		return fail(err)
	}
	if *out == "" {
		*out = filepath.Join(rest[0], "report.html")
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		return fail(err)
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
