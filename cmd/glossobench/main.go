// Command glossobench runs GlossoBench evaluations and its offline tools.
package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
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

// usage lists the commands, a group's subcommands each on its own line.
func usage() {
	fmt.Fprintln(os.Stderr, "usage: glossobench <command> [flags]   (glossobench <command> --help: its flags; --version: the version)\n\ncommands:")
	names := slices.Sorted(maps.Keys(commands))
	width := 0
	for _, n := range names {
		width = max(width, len(n))
		for _, s := range groups[n] {
			width = max(width, len(s.name)+2)
		}
	}
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-*s  %s\n", width, n, commands[n].summary)
		for _, s := range groups[n] {
			fmt.Fprintf(os.Stderr, "    %-*s  %s\n", width-2, s.name, s.summary)
		}
	}
}

func main() { os.Exit(mainCode(os.Args[1:])) }

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
	case "-version", "--version", "version":
		printVersion(os.Stdout)
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
		return unknownCommand(args[0])
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
		return unknownCommand(name)
	}
	args := []string{"-h"}
	if len(rest) > 0 && slices.ContainsFunc(groups[name], func(s subcommand) bool { return s.name == rest[0] }) {
		args = []string{rest[0], "-h"}
	}
	c.run(args)
	return 0
}

// unknownCommand says the command name is none of ours, suggests the
// nearest one, and returns the usage error's exit code.
func unknownCommand(name string) int {
	fmt.Fprintf(os.Stderr, "glossobench: unknown command %q%s\n", name, didYouMean(name, slices.Collect(maps.Keys(commands))))
	usage()
	return 2
}
