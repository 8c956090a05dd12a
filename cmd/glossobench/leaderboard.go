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
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

func init() {
	registerGroup("leaderboard", "append a run to the append-only leaderboard, show it by model class, verify it, or export its leaderboard.jsonl", leaderboardMain, leaderboardCommands...)
}

// defaultStore is the config's default store folder.
const defaultStore = ".glossobench/store"

var leaderboardCommands = []subcommand{
	{"append", "add a run's row to leaderboard/<lang>/v<MAJOR> and rewrite its leaderboard.jsonl", leaderboardAppend},
	{"show", "print the leaderboard, by model class", leaderboardShow},
	{"export", "verify every row and write leaderboard.jsonl", leaderboardExport},
	{"verify", "check the hash chain and every row against its run's anchor", leaderboardVerify},
}

const leaderboardAbout = `append adds the run's row (model_id, pins = bench_version + plugin versions +
config_hash, model_meta, per-axis scores, ms_public) to leaderboard/<lang>/v<MAJOR>,
MAJOR from bench_version; an identical (model_id, pins) is refused.
RUNDIR is <store>/runs/<run_id>; the leaderboard goes to that store unless --store says otherwise.
append also rewrites the store's leaderboard/<lang>/v<MAJOR>/leaderboard.jsonl from the rows,
and keeps the row's SHA-256 in the run's folder (runs/<run_id>/anchors/), outside the leaderboard.

show and verify check the hash chain and every row against its run's anchor: a row edited
and re-hashed after it was appended is an error (exit 1); rows without an anchor are named.

export verifies every row and writes leaderboard.jsonl (one row per line, append order;
the SHA-256 of a line names its row object) to stdout, to --out, or, with --publish, into the store.`

func leaderboardMain(args []string, stdout, stderr io.Writer) int {
	return runGroup("leaderboard", leaderboardAbout, leaderboardCommands, args, stdout, stderr)
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

// verify opens the leaderboard and checks every row against the anchor
// its run keeps (leaderboard.Verify), as show and verify do; rows without
// one are named on w.
func (b boardFlags) verify(ctx context.Context, w io.Writer) (store.Store, int, []leaderboard.Row, error) {
	st, major, err := b.open(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	rows, unanchored, err := leaderboard.Verify(ctx, st, *b.lang, major, openExisting)
	if err != nil {
		return nil, 0, nil, err
	}
	if len(unanchored) > 0 {
		fmt.Fprintf(w, "warning: %d of %d rows are not anchored outside the leaderboard, so an edit that re-hashes them would not be seen: %s\n",
			len(unanchored), len(rows), leaderboard.DescribeUnanchored(unanchored))
	}
	return st, major, rows, nil
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
	_, major, rows, err := board.verify(context.Background(), stdout)
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
		return 0, fmt.Errorf("version %q: want v followed by a whole number of at least 1 (v1, v2)", s)
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
	st, major, rows, err := board.verify(ctx, stdout)
	if err != nil {
		return fail(err)
	}
	notes, err := leaderboard.Notes(ctx, st, *board.lang, major)
	if err != nil {
		return fail(err)
	}
	dir := leaderboard.Dir(*board.lang, major)
	views := leaderboard.Select(leaderboard.View(rows), *class)
	if len(views) == 0 {
		fmt.Fprintf(stdout, "no rows on %s%s\n", dir, map[bool]string{true: " of class " + *class, false: ""}[*class != ""])
		return 0
	}
	if err := leaderboard.WriteView(stdout, dir, views, notes, *strict); err != nil {
		return fail(err)
	}
	return 0
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
