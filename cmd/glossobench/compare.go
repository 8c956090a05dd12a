package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

func init() {
	registerIO("compare", "per-axis score deltas of the models on two leaderboard versions", compareMain)
}

func compareMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("compare", stderr, "compare V1 V2 [--lang ms] [--store URI] [--strict-parity]",
		"\nFor every model on both leaderboard versions (e.g. v1 v2), its latest row on each",
		"and the per-axis and MS deltas V2 − V1. A model whose two rows differ in reasoning",
		"mode is flagged, or with --strict-parity refused (exit 1).")
	storeURI := fs.String("store", defaultStore, "leaderboard store `URI`")
	lang := fs.String("lang", "ms", "leaderboard language")
	strict := fs.Bool("strict-parity", false, "refuse when a model's rows differ in reasoning mode")
	rest, code, ok := parseArgs(fs, args, 2)
	if !ok {
		return code
	}
	fail := failer(stderr, "compare")
	v1, err := parseVersion(rest[0])
	if err != nil {
		return fail(err)
	}
	v2, err := parseVersion(rest[1])
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, *storeURI)
	if err != nil {
		return fail(err)
	}
	rows1, err := leaderboard.Read(ctx, st, *lang, v1)
	if err != nil {
		return fail(err)
	}
	rows2, err := leaderboard.Read(ctx, st, *lang, v2)
	if err != nil {
		return fail(err)
	}
	cmp := leaderboard.Compare(leaderboard.LatestByModel(rows1), leaderboard.LatestByModel(rows2))
	if len(cmp) == 0 {
		fmt.Fprintf(stdout, "no model is on both %s and %s\n", leaderboard.Dir(*lang, v1), leaderboard.Dir(*lang, v2))
		return 0
	}
	mismatched := leaderboard.ReasoningMismatches(cmp)
	if *strict && len(mismatched) > 0 {
		return fail(fmt.Errorf("--strict-parity: reasoning mode differs for %s", strings.Join(mismatched, ", ")))
	}
	fmt.Fprintf(stdout, "%s → %s (delta = v%d − v%d)\n", leaderboard.Dir(*lang, v1), leaderboard.Dir(*lang, v2), v2, v1)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model_id\taxis\tv1\tv2\tdelta")
	for _, c := range cmp {
		for _, d := range c.Deltas {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Model, d.Axis, runfiles.FormatScore(d.A), runfiles.FormatScore(d.B), fmtDeltaOpt(d.A, d.B))
		}
	}
	tw.Flush()
	for _, m := range mismatched {
		fmt.Fprintf(stdout, "warning: reasoning mode differs for %s: not a like-for-like comparison\n", m)
	}
	for _, m := range leaderboard.IdentityMismatches(cmp) {
		fmt.Fprintf(stdout, "warning: the two rows of %s measured other weights: the deltas compare two models\n", m)
	}
	return 0
}

func fmtDeltaOpt(a, b *float64) string {
	if a == nil || b == nil {
		return "-"
	}
	return fmt.Sprintf("%+.4f", *b-*a)
}
