package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/activities/fakerun"
)

// TestViewCommand: view serves the store it is given on the address it
// prints, and stops when its context ends; bad flags and stores fail.
func TestViewCommand(t *testing.T) {
	dir := t.TempDir()
	if _, err := fakerun.WriteRun(dir, fakerun.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- viewMain(ctx, []string{"--store", dir, "--addr", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no address printed: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`http://[0-9.:]+/`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `data-run="fake-run"`) {
		t.Errorf("the served page lacks the store's run:\n%.1000s", body)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("exit %d after the context ended, want 0", c)
	}

	var stderr strings.Builder
	if c := viewMain(context.Background(), []string{"--store", "ftp://x/y"}, io.Discard, &stderr); c != 1 || !strings.Contains(stderr.String(), "unknown scheme") {
		t.Errorf("bad store: exit %d, %q", c, stderr.String())
	}
	if c := viewMain(context.Background(), []string{"-h"}, io.Discard, io.Discard); c != 0 {
		t.Errorf("-h: exit %d, want 0", c)
	}
}
