// Package registry opens a backend from a model spec, the one string a user
// writes wherever a model can be named (run, judges, loglik, generate):
//
//	gguf:PATH[?chat=qa&threads=N&ctx=N]  the embedded pure-Go GGUF runtime
//	openai:URL | http(s)://URL an OpenAI-compatible server (vLLM, llama-server, SGLang, TGI, Ollama)
package registry

import (
	"fmt"
	"strings"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/gguf"
	"github.com/glossobench/glossobench/backends/openai"
)

// Options are the settings a config can give a backend. Secrets are never
// here: APIKeyEnv names the environment variable that holds the key.
type Options struct {
	Name        string // model name sent to a server
	APIKeyEnv   string
	Flavor      string // auto | vllm | llama-server | chat-only
	Concurrency int
	Timeout     time.Duration
	MaxRetries  int
	// ChatFormat (qa | chatml | llama3 | gemma) is rendered above the
	// backend for a GGUF and for a server alike; "" = the model's own template.
	ChatFormat string
	// StrictContext makes a request longer than the model's window an error
	// instead of left-truncating it, on every backend (backends.FitGeneration,
	// FitScore; a server's window is the one it reports).
	StrictContext bool
	// MaxResponseBytes caps one server response (0: the client's default).
	MaxResponseBytes int64
}

// GGUFPath is the model file a gguf: spec names, without its ?options
// (gguf:PATH?ctx=N names PATH); ok is false for any other spec.
func GGUFPath(spec string) (path string, ok bool) {
	rest, ok := strings.CutPrefix(spec, "gguf:")
	if !ok {
		return "", false
	}
	path, _, _ = strings.Cut(rest, "?")
	return path, true
}

// Open returns the backend a spec names.
func Open(spec string, o Options) (backends.Backend, error) {
	switch {
	case strings.HasPrefix(spec, "gguf:"):
		// gguf:PATH[?chat=qa&threads=N&ctx=N]; config options fill what the spec leaves out.
		path, opt, err := gguf.ParseSpec(strings.TrimPrefix(spec, "gguf:"))
		if err != nil {
			return nil, err
		}
		if opt.ChatFormat == "" {
			opt.ChatFormat = o.ChatFormat
		}
		opt.TruncateLeft = !o.StrictContext
		m, err := gguf.Open(path, opt)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return m, nil
	case strings.HasPrefix(spec, "openai:"), strings.HasPrefix(spec, "http://"), strings.HasPrefix(spec, "https://"):
		return openai.New(openai.Config{
			BaseURL:     strings.TrimPrefix(spec, "openai:"),
			Model:       o.Name,
			APIKeyEnv:   o.APIKeyEnv,
			Flavor:      o.Flavor,
			Concurrency: o.Concurrency,
			Timeout:     o.Timeout,
			MaxRetries:  o.MaxRetries,
			ChatFormat:  o.ChatFormat,

			StrictContext:    o.StrictContext,
			MaxResponseBytes: o.MaxResponseBytes,
		})
	}
	return nil, fmt.Errorf("model spec %q: want gguf:PATH, openai:URL or an http(s) URL", spec)
}
