package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
)

func init() {
	register("loglik", "print log P(continuation | context) per token from a model", runLoglik)
}

// openModel opens any model spec the registry knows (gguf:PATH, openai:URL, http(s)://URL).
func openModel(spec string) (backends.Backend, error) {
	return registry.Open(spec, registry.Options{})
}

func runLoglik(args []string) int {
	fs := commandFlags("loglik", os.Stderr, "loglik --model SPEC [--context TEXT] --continuation TEXT [--json]")
	model := fs.String("model", "", "model spec, e.g. gguf:testdata/models/tiny-llama/tiny-llama.gguf")
	ctxText := fs.String("context", "", "context text")
	cont := fs.String("continuation", "", "continuation text to score")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *model == "" || *cont == "" {
		return usageError(fs, "--model and --continuation are required")
	}
	m, err := openModel(*model)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loglik:", err)
		return 1
	}
	defer m.Close()
	res, err := m.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "1", Context: *ctxText, Continuation: *cont}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "loglik:", err)
		return 1
	}
	r := res[0]
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, "loglik:", err)
			return 1
		}
		return 0
	}
	fmt.Printf("logprob\t%.6f\ngreedy\t%v\n", r.LogProb, r.IsGreedy)
	for i, lp := range r.TokenLogProbs {
		tok := ""
		if i < len(r.Tokens) {
			tok = fmt.Sprint(r.Tokens[i])
		}
		fmt.Printf("token\t%s\t%.6f\n", tok, lp)
	}
	return 0
}
