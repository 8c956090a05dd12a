// Command ggufref prints log-likelihoods of the tiny model from the pure-Go
// backends/gguf runtime, as an independent reference for the llama-server
// live test in backends/openai (cases the torch reference in the model's
// SOURCE.txt does not cover, such as multi-byte characters that the model's
// byte-fallback tokenizer splits across tokens).
//
//	go run ./testdata/openai/ggufref /work/shared/models/tiny-llama/tiny-llama.gguf
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/gguf"
)

func main() {
	m, err := gguf.Open(os.Args[1], gguf.Options{Threads: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer m.Close()
	res, err := m.LogLikelihood(context.Background(), []backends.LLRequest{
		{ID: "paris", Context: "Question: What is the capital of France?\nAnswer:", Continuation: " Paris"},
		{ID: "rome", Context: "Question: What is the capital of France?\nAnswer:", Continuation: " Rome"},
		{ID: "utf8", Context: "Question: What is the capital of France?\nAnswer:", Continuation: " Café ภาษา"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, r := range res {
		fmt.Printf("%s\t%.5f\t%v\t%v\n", r.ID, r.LogProb, r.IsGreedy, r.Tokens)
	}
}
