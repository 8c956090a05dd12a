package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/glossobench/glossobench/backends/gguf"
)

func init() {
	register("tokenize", "print the token ids of a text under a GGUF model's tokenizer, as llama-tokenize --ids does", runTokenize)
}

// runTokenize prints the ids as a JSON list on one line, the output of
// llama.cpp's `llama-tokenize -m PATH --ids --no-escape` (the text is taken
// verbatim: no backslash escapes are processed). Only the tokenizer is read,
// so vocabulary-only files such as llama.cpp's ggml-vocab-*.gguf work.
func runTokenize(args []string) int {
	fs := commandFlags("tokenize", os.Stderr, "tokenize --model gguf:PATH [--no-bos] [--no-parse-special] [--file F | --prompt TEXT]  (else the text is read from standard input)")
	model := fs.String("model", "", "GGUF model or vocabulary, gguf:PATH")
	noBOS := fs.Bool("no-bos", false, "do not add the BOS (and EOS) tokens the model asks for")
	noSpecial := fs.Bool("no-parse-special", false, "tokenize the texts of control tokens as text")
	file := fs.String("file", "", "read the text from this file, verbatim")
	prompt := fs.String("prompt", "", "the text to tokenize")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	path, ok := strings.CutPrefix(*model, "gguf:")
	if !ok || path == "" {
		fmt.Fprintln(os.Stderr, "tokenize: --model gguf:PATH is required")
		fs.Usage()
		return 2
	}
	path, _, err := gguf.ParseSpec(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokenize:", err)
		return 2
	}
	if *file != "" && *prompt != "" {
		fmt.Fprintln(os.Stderr, "tokenize: give --file or --prompt, not both")
		return 2
	}
	text, err := tokenizeInput(*file, *prompt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokenize:", err)
		return 1
	}
	tk, err := gguf.OpenTokenizer(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokenize:", err)
		return 1
	}
	// llama-tokenize adds the special tokens exactly when the model adds BOS
	// and --no-bos is not given.
	if err := tk.WriteIDs(os.Stdout, text, tk.AddsBOS() && !*noBOS, !*noSpecial); err != nil {
		fmt.Fprintln(os.Stderr, "tokenize:", err)
		return 1
	}
	return 0
}

// tokenizeInput is the text to tokenize: the file's, else prompt, else
// what standard input holds when prompt is empty too.
func tokenizeInput(file, prompt string) (string, error) {
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return readAllString(f)
	case prompt == "":
		text, err := readAllString(os.Stdin)
		if err != nil {
			return "", fmt.Errorf("reading standard input: %w", err)
		}
		return text, nil
	}
	return prompt, nil
}

// readAllString reads r into one string, one buffer sized by the file when
// r is one (io.ReadAll and a conversion would hold the text three times).
func readAllString(r io.Reader) (string, error) {
	var b strings.Builder
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			b.Grow(int(st.Size()) + 1)
		}
	}
	_, err := io.Copy(&b, r)
	return b.String(), err
}
