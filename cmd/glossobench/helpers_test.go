package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
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
