package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/glossobench/glossobench/infra/results/release"
)

func init() {
	registerIO("release", "write a run's release bundle: scored items JSONL + manifest (licences, versions, dedup SHA-256)", releaseMain)
}

func releaseMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("release", stderr, "release RUNDIR --out DIR [--include-raw]",
		"\nRUNDIR is <store>/runs/<run_id>. Writes DIR/items.jsonl (one scored item per line,",
		"the same bytes for the same run) and DIR/manifest.json; `glossobench rescore DIR`",
		"re-derives every headline from them.")
	out := fs.String("out", "", "bundle `DIR` to write (created if needed)")
	raw := fs.Bool("include-raw", false, "keep the model's raw outputs (dropped by default)")
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	if *out == "" {
		return usageError(fs, "--out is required")
	}
	fail := failer(stderr, "release")
	run, err := release.LoadRun(rest[0])
	if err != nil {
		return fail(err)
	}
	m, err := release.Write(run, *out, release.Options{IncludeRaw: *raw})
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "wrote %d items of %d axes to %s (items sha256 %s)\n", m.Items, len(m.Axes), *out, m.ItemsSHA256)
	most := m.MostRestrictiveLicense
	if n := len(m.UnknownLicenses); n > 0 && most != release.Unknown {
		most += fmt.Sprintf(" (of the known licences; %d unknown)", n)
	}
	fmt.Fprintf(stdout, "most restrictive dataset licence: %s\n", most)
	for _, d := range m.Datasets {
		if d.License == release.Unknown {
			fmt.Fprintf(stderr, "warning: dataset %s (axis %s): licence unknown (%s)\n", d.Name, d.Axis, strings.TrimPrefix(d.LicenseFrom, "none: "))
		}
	}
	return 0
}
