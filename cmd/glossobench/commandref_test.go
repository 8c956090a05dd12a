package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/COMMANDS.md from the commands' help texts")

// commandReference is docs/COMMANDS.md: the command list and every
// command's and subcommand's --help text, as the program prints them.
func commandReference(t *testing.T) string {
	t.Helper()
	// A default of runtime.GOMAXPROCS(0) is this machine's: the page says
	// GOMAXPROCS instead, from an unmistakable stand-in.
	const procs = 7919
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var b strings.Builder
	b.WriteString("# Command reference\n\n")
	b.WriteString("Every `glossobench` command's help text, as `glossobench help COMMAND` prints it. This page is\n")
	b.WriteString("generated: `go generate ./cmd/glossobench/` (or `go test ./cmd/glossobench/ -run TestCommandReference\n")
	b.WriteString("-update`) rewrites it, and the test fails when a help text changes without it. What the commands\n")
	b.WriteString("are for, in prose: [GUIDE.md](GUIDE.md).\n\n")
	_, list := captured(t, func() int { return mainCode([]string{"help"}) })
	fmt.Fprintf(&b, "```text\n%s```\n", strings.TrimLeft(list, "\n"))
	for _, words := range everyCommand() {
		_, text := captured(t, func() int { return mainCode(append([]string{"help"}, words...)) })
		fmt.Fprintf(&b, "\n## %s\n\n```text\n%s```\n", strings.Join(words, " "), text)
	}
	return strings.ReplaceAll(b.String(), fmt.Sprintf("(default %d)", procs), "(default GOMAXPROCS)")
}

// TestCommandReference: docs/COMMANDS.md holds every command's help text
// as the program prints it now. Run with -update to rewrite it.
func TestCommandReference(t *testing.T) {
	want := commandReference(t)
	for _, local := range []string{os.Getenv("HOME"), os.TempDir()} {
		if local != "" && local != "/" && strings.Contains(want, local) {
			t.Fatalf("a help text names %s, a path of this machine: the reference would differ on every machine", local)
		}
	}
	path := filepath.Join("..", "..", "docs", "COMMANDS.md")
	if *updateDocs {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Errorf("docs/COMMANDS.md differs from the commands' help texts (%v): run `go generate ./cmd/glossobench/` and commit it", err)
	}
}
