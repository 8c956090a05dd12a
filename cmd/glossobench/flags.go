package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
)

// rowLimit is --limit N of run and check (lm-evaluation-harness's --limit):
// every dataset read to at most N rows; 0 while the flag is not given.
type rowLimit int

func (l *rowLimit) String() string { return strconv.Itoa(int(*l)) }

func (l *rowLimit) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("the rows read from every dataset must be a whole number of at least 1, got %q", s)
	}
	*l = rowLimit(n)
	return nil
}

// limitFlag defines --limit on fs.
func limitFlag(fs *flag.FlagSet) *rowLimit {
	l := new(rowLimit)
	fs.Var(l, "limit", "read at most `N` rows of every dataset (a quick, partial run; recorded in result.json and the config hash); overrides run.limit")
	return l
}

// Every command declares its flags with commandFlags and parses them with
// parseArgs, so all of them take flags before, between or after their
// arguments, print their usage on -h, --help and `glossobench help CMD`
// (exit 0), and exit 2 on a usage error (a bad flag, a missing one, the
// wrong number of arguments) and 1 when the work itself fails (failer).

// commandFlags returns the flag set of the command name: its errors and its
// usage go to stderr, the usage being "usage: glossobench " + synopsis, each
// line of about, then the flags.
func commandFlags(name string, stderr io.Writer, synopsis string, about ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench "+synopsis)
		for _, line := range about {
			fmt.Fprintln(stderr, line)
		}
		fs.PrintDefaults()
	}
	return fs
}

// anyArgs is parseArgs's n for a command that takes any number of
// positional arguments (and checks their count itself).
const anyArgs = -1

// parseArgs parses args, flags before or after the positional arguments, and
// wants n positional arguments (anyArgs: any number). When ok is false the
// command stops with exit code: 0 after -h, 2 after a bad flag or, the usage
// printed, another count.
func parseArgs(fs *flag.FlagSet, args []string, n int) (rest []string, code int, ok bool) {
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, flagExit(err), false
	}
	if n != anyArgs && len(rest) != n {
		if len(rest) > n {
			fmt.Fprintf(fs.Output(), "glossobench %s: unexpected argument %q\n", fs.Name(), rest[n])
		}
		fs.Usage()
		return nil, 2, false
	}
	return rest, 0, true
}

// usageError reports a usage error of the command fs belongs to (a flag
// missing, two that exclude each other) with its usage, and returns 2.
func usageError(fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(fs.Output(), "glossobench %s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.Usage()
	return 2
}

// failer returns the error exit of the command name: it prints
// "glossobench name: err" to stderr and returns 1.
func failer(stderr io.Writer, name string) func(error) int {
	return func(err error) int {
		fmt.Fprintf(stderr, "glossobench %s: %v\n", name, err)
		return 1
	}
}

// printJSON writes v to w as indented JSON, as a command's --json prints it.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeReportJSON writes a command's report as indented JSON to path.
func writeReportJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	return nil
}

// flagExit is the exit code after a flag parse error: 0 for -h, else 2.
func flagExit(err error) int {
	if err == flag.ErrHelp {
		return 0
	}
	return 2
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
