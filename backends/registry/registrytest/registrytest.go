// Package registrytest opens the models the tests of other packages run
// against: the tiny GGUF model of testdata and a live llama-server.
package registrytest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
)

// EnvLlamaServer names a live llama-server serving the tiny model; CI sets it.
const EnvLlamaServer = "GLOSSOBENCH_LLAMA_SERVER_URL"

// TinyModelPath is the tiny Llama model of testdata, wherever the test runs.
func TinyModelPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "models", "tiny-llama", "tiny-llama.gguf")
}

// TinyModel opens the tiny model through the embedded GGUF backend, with
// the Question/Answer chat format it was trained on, closed when the test
// ends; with -short the test is skipped.
func TinyModel(t testing.TB) backends.Backend {
	t.Helper()
	if testing.Short() {
		t.Skip("short")
	}
	return open(t, "gguf:"+TinyModelPath(), registry.Options{ChatFormat: "qa"})
}

// LlamaServer opens the live llama-server EnvLlamaServer names, with a
// minute's timeout, closed when the test ends; without one the test is
// skipped.
func LlamaServer(t testing.TB) backends.Backend {
	t.Helper()
	url := os.Getenv(EnvLlamaServer)
	if url == "" {
		t.Skip(EnvLlamaServer + " not set")
	}
	return open(t, url, registry.Options{Timeout: time.Minute})
}

func open(t testing.TB, spec string, o registry.Options) backends.Backend {
	t.Helper()
	b, err := registry.Open(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
