// Package llamatest starts llama.cpp's llama-server for the tests that
// compare GlossoBench with it (backends/gguf's architecture and chat
// template tests, cmd/glossobench's quick start parity).
package llamatest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Start runs llama-server (the binary bin) on model on a free local port,
// with two threads, one slot (no batching across requests, which rounds
// differently), a window of ctx tokens and no context checkpoints, its log
// written to logPath. It returns the server's URL once /health answers,
// and a function that stops it (safe to call twice); t fails with the log
// when the server is not up within a minute.
//
// --ctx-checkpoints 0: llama-server then evaluates each prompt in one
// batch, as the GGUF backend does. With its default context checkpoints it
// evaluates the last 4 tokens of a sliding-window model's prompt (Gemma)
// as a batch of their own, whose queries take ggml's one-query attention
// kernel where the rest of a prompt of 64+ tokens takes the tiled one; no
// single pass over a text gives both (up to 7e-3 apart on gemma3 BF16).
func Start(t testing.TB, bin, model string, ctx int, logPath string) (url string, stop func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "-t", "2", "-np", "1",
		"-c", strconv.Itoa(ctx), "--ctx-checkpoints", "0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait(); log.Close() }) }
	url = fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 300 {
		if r, err := http.Get(url + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return url, stop
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	b, _ := os.ReadFile(logPath)
	t.Fatalf("llama-server did not start on %s:\n%s", model, b)
	return "", nil
}
