package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands' tests share these: a file to feed a command, a command's
// exit code and output, and what a command prints on os.Stdout.

// writeTemp writes content to a file name in a fresh folder and returns its path.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readFile returns the file at p.
func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runCmd runs a command's main with args and returns its exit code, stdout and stderr.
func runCmd(main func(args []string, stdout, stderr io.Writer) int, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// captureStdout runs f with os.Stdout redirected and returns what it printed.
func captureStdout(t *testing.T, f func() int) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	code := f()
	w.Close()
	os.Stdout = old
	return <-done, code
}

// runOK runs a command's main as runCmd does, fails t unless it exits 0,
// and returns its stdout.
func runOK(t *testing.T, main func(args []string, stdout, stderr io.Writer) int, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCmd(main, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return stdout
}

// wantOutput fails t for every one of want that out does not hold.
func wantOutput(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// readJSON decodes the JSON file at p into v.
func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(readFile(t, p)), v); err != nil {
		t.Fatal(err)
	}
}
