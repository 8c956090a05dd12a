package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/glossobench/glossobench/scorers/ifeval"
)

func init() {
	register("ifeval", "score saved responses with the IFEval checkers", runIFEval)
}

func runIFEval(args []string) int {
	fs := commandFlags("ifeval", os.Stderr, "ifeval --input PROMPTS.jsonl --responses RESPONSES.jsonl [--format ifeval|sea_ifeval] [--lang LANG] [--json]")
	input := fs.String("input", "", "prompt file (IFEval input_data.jsonl, or SEA-IFEval with -format sea_ifeval)")
	responses := fs.String("responses", "", `response file: {"prompt", "response"} per line`)
	format := fs.String("format", ifeval.DialectIFEval, "prompt file format: ifeval | sea_ifeval")
	lang := fs.String("lang", "", "only prompts in this language (SEA-IFEval)")
	asJSON := fs.Bool("json", false, "print the accuracies as JSON numbers in [0, 1]")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *input == "" || *responses == "" {
		return usageError(fs, "--input and --responses are required")
	}
	res, err := ifeval.ScoreFiles(*input, *responses, *format, *lang)
	if err != nil {
		fmt.Fprintln(os.Stderr, "glossobench ifeval:", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, "glossobench ifeval:", err)
			return 1
		}
		return 0
	}
	printIFEvalReport(os.Stdout, res)
	return 0
}

func printIFEvalReport(w io.Writer, res ifeval.Result) {
	fmt.Fprintf(w, "prompts: %d  instructions: %d\n", res.Prompts, res.Instructions)
	fmt.Fprintf(w, "prompt-level strict:      %.4f\n", res.PromptStrict)
	fmt.Fprintf(w, "instruction-level strict: %.4f\n", res.InstStrict)
	fmt.Fprintf(w, "prompt-level loose:       %.4f\n", res.PromptLoose)
	fmt.Fprintf(w, "instruction-level loose:  %.4f\n\n", res.InstLoose)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "instruction\tn\tstrict\tloose")
	for _, table := range []map[string]ifeval.InstructionStats{res.PerCategory, res.PerInstruction} {
		for _, id := range ifeval.SortedIDs(table) {
			s := table[id]
			fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.4f\n", id, s.N, s.Strict, s.Loose)
		}
		fmt.Fprintln(tw, "\t\t\t")
	}
	tw.Flush()
	if len(res.PerLanguage) > 1 {
		fmt.Fprintln(w, "language  prompts  prompt-strict  inst-strict  prompt-loose  inst-loose")
		for lang, a := range res.PerLanguage {
			fmt.Fprintf(w, "%-8s  %7d  %13.4f  %11.4f  %12.4f  %10.4f\n", lang, a.Prompts, a.PromptStrict, a.InstStrict, a.PromptLoose, a.InstLoose)
		}
	}
}
