package main

import (
	"bytes"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/config"
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
	for _, words := range everyCommand() {
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

// everyCommand lists every command and every subcommand of a group, as the
// words that name it.
func everyCommand() [][]string {
	var calls [][]string
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		calls = append(calls, []string{n})
		for _, sub := range groups[n] {
			calls = append(calls, []string{n, sub.name})
		}
	}
	return calls
}

// TestEveryCommandHelpAndBadFlag walks every command and subcommand: its
// --help prints its own usage (not its group's), and a flag it does not know
// is a usage error, exit 2, that names the flag — exit 1 for the commands
// whose exit 2 is a verdict (calibrate: not monotone, correlate: divergent,
// reproduce: not reproduced).
func TestEveryCommandHelpAndBadFlag(t *testing.T) {
	verdict := map[string]bool{"calibrate": true, "correlate": true, "reproduce": true}
	walked := 0
	for _, words := range everyCommand() {
		name := strings.Join(words, " ")
		_, text := captured(t, func() int { return mainCode(append(slices.Clone(words), "--help")) })
		if own := "usage: glossobench " + name; !strings.Contains(text, own+" ") && !strings.Contains(text, own+"\n") {
			t.Errorf("glossobench %s --help does not print its own usage:\n%s", name, text)
		}
		code, text := captured(t, func() int { return mainCode(append(slices.Clone(words), "--no-such-flag")) })
		want := 2
		if verdict[words[0]] {
			want = 1
		}
		if code != want || !strings.Contains(text, "no-such-flag") {
			t.Errorf("glossobench %s --no-such-flag: exit %d (want %d), output:\n%s", name, code, want, text)
		}
		walked++
	}
	// The group subcommands the usage once lacked are walked too.
	if walked < len(commands)+10 {
		t.Errorf("walked %d commands and subcommands, want every one of %d commands and their subcommands", walked, len(commands))
	}
	for _, words := range [][]string{{"leaderboard", "export"}, {"schedule", "describe"}, {"schedule", "trigger"}} {
		if !slices.ContainsFunc(everyCommand(), func(w []string) bool { return slices.Equal(w, words) }) {
			t.Errorf("%v is not a subcommand", words)
		}
	}
}

// A mistyped command or subcommand is a usage error that names the nearest
// one; a word near none gets no guess.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"leaderbord"}, `did you mean "leaderboard"?`},
		{[]string{"sigtset"}, `did you mean "sigtest"?`},
		{[]string{"translation"}, `did you mean "translation-delta"?`},
		{[]string{"schedule", "creat"}, `did you mean "create"?`},
		{[]string{"leaderboard", "shwo"}, `did you mean "show"?`},
	} {
		code, text := captured(t, func() int { return mainCode(c.args) })
		if code != 2 || !strings.Contains(text, c.want) {
			t.Errorf("glossobench %v: exit %d, want 2 and %s; output:\n%s", c.args, code, c.want, text)
		}
	}
	code, text := captured(t, func() int { return mainCode([]string{"zzzzzzzz"}) })
	if code != 2 || strings.Contains(text, "did you mean") {
		t.Errorf("glossobench zzzzzzzz: exit %d, output:\n%s", code, text)
	}
}

// --version prints the bench version results carry, the module version and
// the commit.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		code, text := captured(t, func() int { return mainCode([]string{arg}) })
		if code != 0 || !strings.Contains(text, "glossobench "+config.BenchVersion+"\n") || !strings.Contains(text, "module ") || !strings.Contains(text, "commit ") {
			t.Errorf("glossobench %s: exit %d, output:\n%s", arg, code, text)
		}
	}
	var b bytes.Buffer
	printVersion(&b)
	if lines := strings.Count(b.String(), "\n"); lines != 3 {
		t.Errorf("printVersion wrote %d lines:\n%s", lines, b.String())
	}
}
