package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/glossobench/glossobench/scorers/chrf"
)

func init() {
	register("chrf", "score a hypothesis file with chrF++ (like sacrebleu -m chrf)", runChrf)
}

// refFiles collects repeated --ref flags.
type refFiles []string

func (r *refFiles) String() string     { return strings.Join(*r, ",") }
func (r *refFiles) Set(s string) error { *r = append(*r, s); return nil }

func runChrf(args []string) int {
	return chrfMain(args, os.Stdout, os.Stderr)
}

func chrfMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("chrf", stderr, "chrf --hyp FILE --ref FILE [--ref FILE2 ...] [--word-order N] [--sentence] [--json]",
		"\nScores a saved system output the way sacrebleu 2.x's chrF does; scores are 0-100.")
	var refs refFiles
	hyp := fs.String("hyp", "", "hypothesis `file`, one segment per line (required)")
	fs.Var(&refs, "ref", "reference `file`, one segment per line; repeat for several references (required)")
	wordOrder := fs.Int("word-order", 2, "word n-gram order: 2 = chrF++ (the NLG axis metric), 0 = chrF (sacrebleu's -m chrf default)")
	charOrder := fs.Int("char-order", chrf.DefaultCharOrder, "character n-gram order")
	beta := fs.Int("beta", chrf.DefaultBeta, "recall weight beta")
	lowercase := fs.Bool("lowercase", false, "case-insensitive (sacrebleu --chrf-lowercase)")
	whitespace := fs.Bool("whitespace", false, "keep whitespace in character n-grams (sacrebleu --chrf-whitespace)")
	epsSmoothing := fs.Bool("eps-smoothing", false, "epsilon smoothing as chrF++.py/NLTK instead of effective order (sacrebleu --chrf-eps-smoothing)")
	sentence := fs.Bool("sentence", false, "also print one score per line")
	asJSON := fs.Bool("json", false, "print JSON in sacrebleu's -f json layout (plus \"sentences\" with --sentence)")
	width := fs.Int("width", 1, "decimals printed (sacrebleu --width)")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *hyp == "" || len(refs) == 0 {
		return usageError(fs, "--hyp and at least one --ref are required")
	}
	opts := chrf.Options{CharOrder: *charOrder, WordOrder: *wordOrder, Beta: *beta,
		Lowercase: *lowercase, Whitespace: *whitespace, EpsSmoothing: *epsSmoothing}
	if err := opts.Validate(); err != nil || *charOrder == 0 || *beta == 0 || *width < 0 {
		fmt.Fprintln(stderr, "glossobench chrf: --char-order and --beta must be positive, --word-order and --width not negative")
		return 2
	}

	hyps, streams, err := chrf.ReadFiles(*hyp, refs)
	if err != nil {
		fmt.Fprintln(stderr, "glossobench chrf:", err)
		return 1
	}
	m := chrf.New(opts)
	var sents []chrf.Score
	if *sentence {
		sents = m.Sentences(hyps, streams)
	}
	total := m.Corpus(hyps, streams)
	if total.Err != nil { // ReadFiles checked what Corpus checks
		fmt.Fprintln(stderr, "glossobench chrf:", total.Err)
		return 1
	}
	if *asJSON {
		stdout.Write(chrf.JSON(total, sents, *width))
		return 0
	}
	for _, s := range sents {
		fmt.Fprintln(stdout, s.Format(*width, s.Signature))
	}
	fmt.Fprintln(stdout, total.Format(*width, total.Signature))
	return 0
}
