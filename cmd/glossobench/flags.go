package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

// newFlagSet returns a flag set that prints usage on -h and returns errors.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: "+usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args; false means the command should exit with status 2.
func parse(fs *flag.FlagSet, args []string) bool {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return false
	}
	return true
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
