// Command glossobench runs GlossoBench evaluations and its offline tools.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// command is one subcommand. It returns the process exit code.
type command struct {
	summary string
	run     func(args []string) int
}

var commands = map[string]command{}

// register adds a subcommand; each lives in its own file and registers in init.
func register(name, summary string, run func(args []string) int) {
	if _, dup := commands[name]; dup {
		panic("duplicate command " + name)
	}
	commands[name] = command{summary, run}
}

// registerIO adds a subcommand whose main writes to the writers it is given
// (so tests can read them); the command itself writes to stdout and stderr.
func registerIO(name, summary string, main func(args []string, stdout, stderr io.Writer) int) {
	register(name, summary, func(args []string) int { return main(args, os.Stdout, os.Stderr) })
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: glossobench <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
}

func main() { os.Exit(mainCode(os.Args[1:])) }

// subcommands lists the words a group command takes first.
var subcommands = map[string][]string{
	"leaderboard": {"append", "show"},
	"schedule":    {"create", "list", "delete"},
}

// mainCode runs the command line args (without the program name) and returns the exit code.
func mainCode(args []string) int {
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage()
		return 0
	case "help":
		if len(args) == 1 {
			usage()
			return 0
		}
		return help(args[1], args[2:])
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "glossobench: unknown command %q\n", args[0])
		usage()
		return 2
	}
	if wantsHelp(args[1:]) {
		return help(args[0], args[1:])
	}
	return c.run(args[1:])
}

// wantsHelp reports whether args ask for help (-h, -help or --help before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// help prints a command's usage (a group's subcommand's, when rest starts
// with one) by running it with -h alone, so `help CMD` and `CMD --help`
// print the same text; asking for help is a success.
func help(name string, rest []string) int {
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "glossobench: unknown command %q\n", name)
		usage()
		return 2
	}
	args := []string{"-h"}
	if len(rest) > 0 && slices.Contains(subcommands[name], rest[0]) {
		args = []string{rest[0], "-h"}
	}
	c.run(args)
	return 0
}
