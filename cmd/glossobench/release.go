package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/glossobench/glossobench/infra/results/release"
)

func init() {
	register("release", "write a run's release bundle: scored items JSONL + manifest (licences, versions, dedup SHA-256)", runRelease)
}

func runRelease(args []string) int { return releaseMain(args, os.Stdout, os.Stderr) }

func releaseMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "bundle `DIR` to write (created if needed)")
	raw := fs.Bool("include-raw", false, "keep the model's raw outputs (dropped by default)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench release RUNDIR --out DIR [--include-raw]")
		fmt.Fprintln(stderr, "\nRUNDIR is <store>/runs/<run_id>. Writes DIR/items.jsonl (one scored item per line,")
		fmt.Fprintln(stderr, "the same bytes for the same run) and DIR/manifest.json; `glossobench rescore DIR`")
		fmt.Fprintln(stderr, "re-derives every headline from them.")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(rest) != 1 || *out == "" {
		fs.Usage()
		return 1
	}
	run, err := release.LoadRun(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "glossobench release: %v\n", err)
		return 1
	}
	m, err := release.Write(run, *out, release.Options{IncludeRaw: *raw})
	if err != nil {
		fmt.Fprintf(stderr, "glossobench release: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %d items of %d axes to %s (items sha256 %s)\n", m.Items, len(m.Axes), *out, m.ItemsSHA256)
	fmt.Fprintf(stdout, "most restrictive dataset licence: %s\n", m.MostRestrictiveLicense)
	for _, d := range m.Datasets {
		if d.License == release.Unstated {
			fmt.Fprintf(stdout, "warning: dataset %s (axis %s) has no known licence\n", d.Name, d.Axis)
		}
	}
	return 0
}

// flagExit is the exit code after a flag parse error: 0 for -h.
func flagExit(err error) int {
	if err == flag.ErrHelp {
		return 0
	}
	return 1
}
