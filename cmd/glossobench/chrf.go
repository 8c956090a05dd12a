package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
	fs := flag.NewFlagSet("chrf", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench chrf --hyp FILE --ref FILE [--ref FILE2 ...] [--word-order N] [--sentence] [--json]")
		fmt.Fprintln(stderr, "\nScores a saved system output the way sacrebleu 2.x's chrF does; scores are 0-100.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "glossobench chrf: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *hyp == "" || len(refs) == 0 {
		fmt.Fprintln(stderr, "glossobench chrf: --hyp and at least one --ref are required")
		fs.Usage()
		return 2
	}
	opts := chrf.Options{CharOrder: *charOrder, WordOrder: *wordOrder, Beta: *beta,
		Lowercase: *lowercase, Whitespace: *whitespace, EpsSmoothing: *epsSmoothing}
	if err := opts.Validate(); err != nil || *charOrder == 0 || *beta == 0 || *width < 0 {
		fmt.Fprintln(stderr, "glossobench chrf: --char-order and --beta must be positive, --word-order and --width not negative")
		return 2
	}

	hyps, streams, err := readChrfInputs(*hyp, refs)
	if err != nil {
		fmt.Fprintln(stderr, "glossobench chrf:", err)
		return 1
	}
	m := chrf.New(opts)
	var sents []chrf.Score
	if *sentence {
		sents = make([]chrf.Score, len(hyps))
		segRefs := make([]string, len(streams))
		for i, h := range hyps {
			for k, s := range streams {
				segRefs[k] = s[i]
			}
			sents[i] = m.Sentence(h, segRefs)
		}
	}
	total := m.Corpus(hyps, streams)
	if total.Err != nil { // readChrfInputs checked what Corpus checks
		fmt.Fprintln(stderr, "glossobench chrf:", total.Err)
		return 1
	}
	if *asJSON {
		stdout.Write(chrfJSON(total, sents, *width))
		return 0
	}
	for _, s := range sents {
		fmt.Fprintln(stdout, s.Format(*width, s.Signature))
	}
	fmt.Fprintln(stdout, total.Format(*width, total.Signature))
	return 0
}

// readChrfInputs reads the hypothesis and reference files as sacrebleu's
// command line does: lines split on "\n" only, trailing whitespace stripped.
func readChrfInputs(hypPath string, refPaths []string) ([]string, [][]string, error) {
	hyps, err := readSegments(hypPath)
	if err != nil {
		return nil, nil, err
	}
	if len(hyps) == 0 {
		return nil, nil, fmt.Errorf("%s: no lines to score", hypPath)
	}
	streams := make([][]string, len(refPaths))
	for k, p := range refPaths {
		if streams[k], err = readSegments(p); err != nil {
			return nil, nil, err
		}
		if len(streams[k]) != len(hyps) {
			return nil, nil, fmt.Errorf("line count mismatch: %s has %d lines but %s has %d", hypPath, len(hyps), p, len(streams[k]))
		}
	}
	for i := range hyps {
		empty := true
		for _, s := range streams {
			empty = empty && s[i] == ""
		}
		if empty {
			return nil, nil, fmt.Errorf("line %d: empty reference in %s (sacrebleu refuses it too)", i+1, strings.Join(refPaths, ", "))
		}
	}
	return hyps, streams, nil
}

func readSegments(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if !utf8.ValidString(l) {
			return nil, fmt.Errorf("%s:%d: not valid UTF-8", path, i+1)
		}
		// Python's str.rstrip(): str.isspace characters, which include U+001C..U+001F.
		lines[i] = strings.TrimRightFunc(l, func(r rune) bool {
			return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
		})
	}
	return lines, nil
}

// chrfJSON renders the score like sacrebleu's Score.format(is_json=True):
// json.dumps(indent=1) of name, score rounded to width, signature and the
// signature's fields as strings.
func chrfJSON(total chrf.Score, sents []chrf.Score, width int) []byte {
	var b bytes.Buffer
	field := func(k, v string, last bool) {
		kb, _ := json.Marshal(k)
		b.WriteString(" " + string(kb) + ": " + v)
		if !last {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	str := func(s string) string { sb, _ := json.Marshal(s); return string(sb) }
	b.WriteString("{\n")
	field("name", str(total.Name), false)
	field("score", pyRounded(total.Score, width), false)
	field("signature", str(total.Signature), false)
	parts := strings.Split(total.Signature, "|")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, ":")
		field(k, str(v), i == len(parts)-1 && sents == nil)
	}
	if sents != nil {
		vals := make([]string, len(sents))
		for i, s := range sents {
			vals[i] = "  " + pyRounded(s.Score, width)
		}
		field("sentences", "[\n"+strings.Join(vals, ",\n")+"\n ]", true)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// pyRounded prints float(f'{x:.{width}f}') as Python's json does: 54.3, 100.0.
func pyRounded(x float64, width int) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', width, 64), 64)
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
