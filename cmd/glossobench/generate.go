package main

import (
	"context"
	"fmt"
	"os"

	"github.com/glossobench/glossobench/backends"
)

func init() {
	register("generate", "print a model's greedy completion of a prompt", runGenerate)
}

func runGenerate(args []string) int {
	fs := commandFlags("generate", os.Stderr, "generate --model SPEC --prompt TEXT [--max-tokens N]")
	model := fs.String("model", "", "model spec, e.g. gguf:testdata/models/tiny-llama/tiny-llama.gguf")
	prompt := fs.String("prompt", "", "prompt text, sent raw (no chat template)")
	maxTokens := fs.Int("max-tokens", 64, "most tokens to generate")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *model == "" {
		return usageError(fs, "--model is required")
	}
	if *maxTokens <= 0 {
		fmt.Fprintln(os.Stderr, "generate: --max-tokens must be positive")
		return 2
	}
	m, err := openModel(*model)
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		return 1
	}
	defer m.Close()
	g, err := m.Generate(context.Background(), []backends.GenRequest{{ID: "1", Prompt: *prompt, MaxTokens: *maxTokens}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		return 1
	}
	fmt.Println(g[0].Text)
	if g[0].Truncated() {
		fmt.Fprintf(os.Stderr, "generate: stopped at --max-tokens %d\n", *maxTokens)
	}
	return 0
}
