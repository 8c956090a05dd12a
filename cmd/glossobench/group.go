package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/config"

	"github.com/glossobench/glossobench/internal/editdist"
)

// subcommand is one action of a group command (leaderboard append,
// schedule create, ...): its own flags, usage and --help.
type subcommand struct {
	name, summary string
	main          func(args []string, stdout, stderr io.Writer) int
}

// groups holds each group command's subcommands, in the order its usage
// lists them.
var groups = map[string][]subcommand{}

// registerGroup adds a command whose first argument names one of subs;
// main runs runGroup over them.
func registerGroup(name, summary string, main func(args []string, stdout, stderr io.Writer) int, subs ...subcommand) {
	groups[name] = subs
	registerIO(name, summary, main)
}

// runGroup runs the subcommand args[0] names. No subcommand or an unknown
// one is a usage error; -h alone prints the group's usage.
func runGroup(name, about string, subs []subcommand, args []string, stdout, stderr io.Writer) int {
	usage := func() {
		fmt.Fprintf(stderr, "usage: glossobench %s <subcommand> [flags]   (glossobench %s <subcommand> --help: its flags)\n\nsubcommands:\n", name, name)
		for _, s := range subs {
			fmt.Fprintf(stderr, "  %-9s %s\n", s.name, s.summary)
		}
		if about != "" {
			fmt.Fprintln(stderr, "\n"+about)
		}
	}
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage()
		return 0
	}
	i := slices.IndexFunc(subs, func(s subcommand) bool { return s.name == args[0] })
	if i < 0 {
		names := make([]string, len(subs))
		for j, s := range subs {
			names[j] = s.name
		}
		fmt.Fprintf(stderr, "glossobench %s: unknown subcommand %q%s\n", name, args[0], didYouMean(args[0], names))
		usage()
		return 2
	}
	return subs[i].main(args[1:], stdout, stderr)
}

// didYouMean is ", did you mean X?" for the known name nearest to name
// (at most a third of its letters, or two, edited away, or a prefix), else "".
func didYouMean(name string, known []string) string {
	best, bestD := "", max(2, len(name)/3)+1
	for _, k := range slices.Sorted(slices.Values(known)) {
		d := editdist.Levenshtein(name, k)
		if strings.HasPrefix(k, name) && len(name) >= 2 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(", did you mean %q?", best)
}

// printVersion prints the bench version results are published under, the
// module's version and the commit the binary was built from (as the Go
// toolchain records them; "(devel)" and "unknown" for `go run`).
func printVersion(w io.Writer) {
	module, commit, dirty := "(devel)", "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			module = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = " (modified)"
				}
			}
		}
	}
	fmt.Fprintf(w, "glossobench %s\nmodule      %s\ncommit      %s%s\n", config.BenchVersion, module, commit, dirty)
}
