package main

import (
	"io"
	"os"
	"sort"
	"strings"
	"testing"
)

// captured runs fn with os.Stdout and os.Stderr sent to one file and returns
// what was written.
func captured(t *testing.T, fn func() int) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	so, se := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = f, f
	code := fn()
	os.Stdout, os.Stderr = so, se
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

// TestHelpEveryCommand asks every registered command (and every subcommand of
// a group) for help both ways: `CMD --help` and `help CMD` exit 0 and print
// the same usage text.
func TestHelpEveryCommand(t *testing.T) {
	var calls [][]string
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		calls = append(calls, []string{n})
		for _, sub := range subcommands[n] {
			calls = append(calls, []string{n, sub})
		}
	}
	for _, words := range calls {
		name := strings.Join(words, " ")
		for _, flag := range []string{"--help", "-h"} {
			code, text := captured(t, func() int { return mainCode(append(append([]string{}, words...), flag)) })
			if code != 0 {
				t.Errorf("glossobench %s %s: exit %d, want 0; output:\n%s", name, flag, code, text)
			}
			if !strings.Contains(strings.ToLower(text), "usage") {
				t.Errorf("glossobench %s %s printed no usage:\n%s", name, flag, text)
			}
			code, viaHelp := captured(t, func() int { return mainCode(append([]string{"help"}, words...)) })
			if code != 0 {
				t.Errorf("glossobench help %s: exit %d, want 0", name, code)
			}
			if viaHelp != text {
				t.Errorf("glossobench help %s printed\n%s\nbut %s %s printed\n%s", name, viaHelp, name, flag, text)
			}
		}
	}
	code, text := captured(t, func() int { return mainCode([]string{"help"}) })
	if code != 0 || !strings.Contains(text, "elo") {
		t.Errorf("glossobench help: exit %d, output:\n%s", code, text)
	}
}
