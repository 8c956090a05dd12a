package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

func init() {
	registerIO("leaderboard", "append a run to the append-only leaderboard, show it by model class, verify it, or export its leaderboard.jsonl", leaderboardMain)
}

// defaultStore is the config's default store folder.
const defaultStore = ".glossobench/store"

func leaderboardMain(args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintln(stderr, "usage: glossobench leaderboard append RUNDIR [--store URI] [--lang ms]")
		fmt.Fprintln(stderr, "       glossobench leaderboard show [--class base|instruct|...] [--lang ms] [--version v1] [--store URI] [--strict-parity]")
		fmt.Fprintln(stderr, "       glossobench leaderboard export [--lang ms] [--version v1] [--store URI] [--out FILE | --publish]")
		fmt.Fprintln(stderr, "       glossobench leaderboard verify [--lang ms] [--version v1] [--store URI]")
		fmt.Fprintln(stderr, "\nappend adds the run's row (model_id, pins = bench_version + plugin versions +")
		fmt.Fprintln(stderr, "config_hash, model_meta, per-axis scores, ms_public) to leaderboard/<lang>/v<MAJOR>,")
		fmt.Fprintln(stderr, "MAJOR from bench_version; an identical (model_id, pins) is refused.")
		fmt.Fprintln(stderr, "RUNDIR is <store>/runs/<run_id>; the leaderboard goes to that store unless --store says otherwise.")
		fmt.Fprintln(stderr, "append also rewrites the store's leaderboard/<lang>/v<MAJOR>/leaderboard.jsonl from the rows,")
		fmt.Fprintln(stderr, "and keeps the row's SHA-256 in the run's folder (runs/<run_id>/anchors/), outside the leaderboard.")
		fmt.Fprintln(stderr, "\nshow and verify check the hash chain and every row against its run's anchor: a row edited")
		fmt.Fprintln(stderr, "and re-hashed after it was appended is an error (exit 1); rows without an anchor are named.")
		fmt.Fprintln(stderr, "\nexport verifies every row and writes leaderboard.jsonl (one row per line, append order;")
		fmt.Fprintln(stderr, "the SHA-256 of a line names its row object) to stdout, to --out, or, with --publish, into the store.")
	}
	if len(args) == 0 {
		usage()
		return 1
	}
	switch args[0] {
	case "append":
		return leaderboardAppend(args[1:], stdout, stderr)
	case "show":
		return leaderboardShow(args[1:], stdout, stderr)
	case "export":
		return leaderboardExport(args[1:], stdout, stderr)
	case "verify":
		return leaderboardVerify(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		usage()
		return 0
	}
	fmt.Fprintf(stderr, "glossobench leaderboard: unknown subcommand %q\n", args[0])
	usage()
	return 1
}

func leaderboardAppend(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("leaderboard append", stderr, "leaderboard append RUNDIR [--store URI] [--lang ms]")
	storeURI := fs.String("store", "", "leaderboard store `URI` (default: the store RUNDIR is in)")
	lang := fs.String("lang", "", "leaderboard language (default: the run config's language, else ms)")
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	fail := failer(stderr, "leaderboard append")
	runDir := rest[0]
	rd, err := leaderboard.ReadRunDir(runDir)
	if err != nil {
		return fail(err)
	}
	row, major := rd.Row, rd.Major
	if *lang == "" {
		*lang = cmp.Or(rd.Language, "ms")
	}
	if *storeURI == "" {
		if *storeURI, err = leaderboard.StoreOfRunDir(runDir); err != nil {
			return fail(err)
		}
	}
	ctx := context.Background()
	st, err := store.Open(ctx, *storeURI)
	if err != nil {
		return fail(err)
	}
	if err := leaderboard.Append(ctx, st, *lang, major, row); err != nil {
		if errors.Is(err, leaderboard.ErrDuplicate) {
			fmt.Fprintf(stderr, "glossobench leaderboard append: refused: %v\n", err)
			return 1
		}
		return fail(err)
	}
	if err := leaderboard.Publish(ctx, st, *lang, major); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "appended %s (ms_public %s) to %s on %s\n", row.ModelID, strconv.FormatFloat(row.MS, 'f', 4, 64), leaderboard.Dir(*lang, major), st.Describe())
	// The row's hash also goes to the run's folder, outside the
	// leaderboard, where show and verify check it.
	if row.RunStore == "" {
		fmt.Fprintf(stdout, "note: %s is not <store>/runs/<run_id>: the row's hash is kept nowhere outside the leaderboard\n", runDir)
		return 0
	}
	anc, err := leaderboard.Locate(ctx, st, *lang, major, row)
	if err != nil {
		return fail(err)
	}
	runs, err := store.Open(ctx, row.RunStore)
	if err != nil {
		return fail(err)
	}
	if err := leaderboard.WriteAnchor(ctx, runs, anc); err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "anchored row %d (sha256 %s) in %s\n", anc.Seq, anc.RowSHA256, runs.Describe()+"/"+runfiles.AnchorKey(anc.RunID, anc.RowSHA256))
	return 0
}

// verifyBoard reads a leaderboard and checks every row against the anchor
// its run keeps (leaderboard.Verify); rows without one are named on w.
func verifyBoard(ctx context.Context, st store.Store, lang string, major int, w io.Writer) ([]leaderboard.Row, error) {
	rows, unanchored, err := leaderboard.Verify(ctx, st, lang, major, openExisting)
	if err != nil {
		return nil, err
	}
	if len(unanchored) > 0 {
		fmt.Fprintf(w, "warning: %d of %d rows are not anchored outside the leaderboard, so an edit that re-hashes them would not be seen: %s\n",
			len(unanchored), len(rows), leaderboard.DescribeUnanchored(unanchored))
	}
	return rows, nil
}

// openExisting opens a row's run store, but not a local folder that is
// gone (opening a local store would create it).
func openExisting(ctx context.Context, uri string) (store.Store, error) {
	dir, local := strings.CutPrefix(uri, "file://")
	if !local {
		dir, local = strings.CutPrefix(uri, "file:")
	}
	if !local && !strings.Contains(uri, "://") {
		dir, local = uri, true
	}
	if local {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
	}
	return store.Open(ctx, uri)
}

func leaderboardVerify(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("leaderboard verify", stderr, "leaderboard verify [--lang ms] [--version v1] [--store URI]")
	board := addBoardFlags(fs)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	fail := failer(stderr, "leaderboard verify")
	ctx := context.Background()
	st, major, err := board.open(ctx)
	if err != nil {
		return fail(err)
	}
	rows, err := verifyBoard(ctx, st, *board.lang, major, stdout)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stdout, "%s: %d rows, chain intact, no row differs from its run's anchor\n", leaderboard.Dir(*board.lang, major), len(rows))
	return 0
}

// boardFlags name one leaderboard: its store, language and major version,
// as show and export take them.
type boardFlags struct{ storeURI, lang, version *string }

func addBoardFlags(fs *flag.FlagSet) boardFlags {
	return boardFlags{
		storeURI: fs.String("store", defaultStore, "leaderboard store `URI`"),
		lang:     fs.String("lang", "ms", "leaderboard language"),
		version:  fs.String("version", "v1", "leaderboard major version"),
	}
}

// open opens the leaderboard's store and reads its major version.
func (b boardFlags) open(ctx context.Context) (store.Store, int, error) {
	major, err := parseVersion(*b.version)
	if err != nil {
		return nil, 0, err
	}
	st, err := store.Open(ctx, *b.storeURI)
	return st, major, err
}

// parseVersion reads a leaderboard version argument: "v2" or "2".
func parseVersion(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V"))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("version %q: want v1, v2, ...", s)
	}
	return n, nil
}

func leaderboardShow(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("leaderboard show", stderr, "leaderboard show [--class base|instruct|...] [--lang ms] [--version v1] [--store URI] [--strict-parity]")
	board := addBoardFlags(fs)
	class := fs.String("class", "", "show only this model_class (base, instruct, ...)")
	strict := fs.Bool("strict-parity", false, "refuse a view whose rows differ in reasoning mode")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	fail := failer(stderr, "leaderboard show")
	ctx := context.Background()
	st, major, err := board.open(ctx)
	if err != nil {
		return fail(err)
	}
	rows, err := verifyBoard(ctx, st, *board.lang, major, stdout)
	if err != nil {
		return fail(err)
	}
	notes, err := leaderboard.Notes(ctx, st, *board.lang, major)
	if err != nil {
		return fail(err)
	}
	var classes []leaderboard.ClassView
	for _, cv := range leaderboard.View(rows) {
		if *class == "" || cv.Class == *class {
			classes = append(classes, cv)
		}
	}
	if len(classes) == 0 {
		fmt.Fprintf(stdout, "no rows on %s%s\n", leaderboard.Dir(*board.lang, major), map[bool]string{true: " of class " + *class, false: ""}[*class != ""])
		return 0
	}
	for _, cv := range classes {
		if *strict && len(cv.Modes) > 1 {
			return fail(fmt.Errorf("class %s mixes reasoning modes %s; --strict-parity refuses to rank them together", cv.Class, strings.Join(cv.Modes, ", ")))
		}
		fmt.Fprintf(stdout, "%s, class %s (%d rows)\n", leaderboard.Dir(*board.lang, major), cv.Class, len(cv.Rows))
		fmt.Fprintf(stdout, "ranked by ms_ranking over the axes that discriminate for every row: %s\n", orNone(cv.RankedOn))
		if len(cv.LeftOut) > 0 {
			fmt.Fprintf(stdout, "left out of the ranking (near chance, or not scored, for some row): %s\n", strings.Join(cv.LeftOut, ", "))
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "rank\tmodel_id\tms_ranking\tms_public\tms_ci95\t%s\treasoning\tconfig_hash\tseq\n", strings.Join(cv.Axes, "\t"))
		for _, r := range cv.Rows {
			ci := "-"
			if len(r.MSCI95) == 2 {
				ci = fmt.Sprintf("[%.4f, %.4f]", r.MSCI95[0], r.MSCI95[1])
			}
			var cells []string
			for _, a := range cv.Axes {
				if v, ok := r.Scores[a]; ok {
					cells = append(cells, strconv.FormatFloat(v, 'f', 4, 64))
				} else {
					cells = append(cells, "-")
				}
			}
			mode := r.ReasoningMode
			if mode == "" {
				mode = "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\t%s\t%s\t%s\t%s\t%d\n", r.Rank, r.ModelID, fmtOpt(r.Mean), r.MS, ci, strings.Join(cells, "\t"), mode, r.Pins["config_hash"], r.Seq)
		}
		tw.Flush()
		for _, n := range notes {
			if slices.ContainsFunc(cv.Rows, func(r leaderboard.Ranked) bool { return r.Seq == n.Seq }) {
				fmt.Fprintf(stdout, "note on row %d (%s): %s: %s\n", n.Seq, n.ModelID, n.Kind, n.Text)
			}
		}
	}
	return 0
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func leaderboardExport(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("leaderboard export", stderr, "leaderboard export [--lang ms] [--version v1] [--store URI] [--out FILE | --publish]")
	board := addBoardFlags(fs)
	out := fs.String("out", "", "write to `FILE` instead of stdout")
	publish := fs.Bool("publish", false, "rewrite the store's leaderboard/<lang>/v<MAJOR>/leaderboard.jsonl")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	fail := failer(stderr, "leaderboard export")
	if *out != "" && *publish {
		return fail(errors.New("--out and --publish: give one"))
	}
	ctx := context.Background()
	st, major, err := board.open(ctx)
	if err != nil {
		return fail(err)
	}
	switch {
	case *publish:
		if err := leaderboard.Publish(ctx, st, *board.lang, major); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "wrote %s on %s\n", leaderboard.JSONLPath(*board.lang, major), st.Describe())
	case *out != "":
		var buf bytes.Buffer
		if err := leaderboard.Export(ctx, st, *board.lang, major, &buf); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
			return fail(err)
		}
	default:
		if err := leaderboard.Export(ctx, st, *board.lang, major, stdout); err != nil {
			return fail(err)
		}
	}
	return 0
}
