package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/release"
)

func init() {
	register("spotcheck", "CSV worksheet of high-leverage items for a fluent reader, with an expected_difficulty column", runSpotcheck)
}

func runSpotcheck(args []string) int { return spotcheckMain(args, os.Stdout, os.Stderr) }

// Reasons an item is worth a human look, with their weight in the ranking:
// a cloze/generate disagreement says the format, not the knowledge, decided
// the item; a wrong answer may be a wrong key; an unvalidated dataset has
// keys nobody fluent has confirmed.
const (
	reasonDisagree     = "cloze_generate_disagree"
	reasonWrong        = "wrong_answer"
	reasonNotValidated = "dataset_not_human_validated"
)

var reasonWeight = map[string]int{reasonDisagree: 4, reasonWrong: 2, reasonNotValidated: 1}

// spotRow is one worksheet line.
type spotRow struct {
	axis, id, dataset, lang string
	reasons                 []string
	leverage                int
	tie                     uint64
	score                   float64
	label                   bool
	gold, cloze, generate   string
	prompt, choices         string
}

var worksheetHeader = []string{"axis", "item_id", "dataset", "lang", "reasons", "score", "correct", "gold", "cloze_pred", "generate_pred", "prompt", "choices", "expected_difficulty", "reviewer_note"}

// spotcheckRows ranks every scored item of the run by leverage (ties in a
// seeded order) and returns the top n.
func spotcheckRows(run *release.Run, n int, seed uint64) []spotRow {
	var rows []spotRow
	for _, axis := range run.AxisNames() {
		ad := run.Axes[axis]
		for _, s := range ad.Scores {
			it, haveItem := ad.Items[s.ItemID]
			r := spotRow{axis: axis, id: s.ItemID, dataset: it.Dataset, lang: cmp.Or(s.Lang, it.Lang), score: s.Score, label: s.Label}
			if c, ok := s.Fields["cloze_correct"].(bool); ok && c != s.Label {
				r.reasons = append(r.reasons, reasonDisagree)
			}
			if !s.Label {
				r.reasons = append(r.reasons, reasonWrong)
			}
			if d, ok := run.Dataset(axis, it.Dataset); !ok || !d.HumanValidated {
				r.reasons = append(r.reasons, reasonNotValidated)
			}
			for _, why := range r.reasons {
				r.leverage += reasonWeight[why]
			}
			if r.leverage == 0 {
				continue
			}
			if haveItem {
				r.prompt = clip(it.Prompt, 500)
				var ch []string
				for i, c := range it.Choices {
					ch = append(ch, fmt.Sprintf("%c) %s", 'A'+i, c))
				}
				r.choices = clip(strings.Join(ch, " | "), 500)
				if it.Gold >= 0 && it.Gold < len(it.Choices) {
					r.gold = string(rune('A' + it.Gold))
				} else {
					r.gold = it.Label
				}
			}
			r.cloze, _ = s.Fields["cloze_pred"].(string)
			r.generate, _ = s.Fields["generate_pred"].(string)
			h := sha256.Sum256([]byte(strconv.FormatUint(seed, 10) + "\x00" + axis + "\x00" + s.ItemID))
			r.tie = binary.BigEndian.Uint64(h[:8])
			rows = append(rows, r)
		}
	}
	slices.SortFunc(rows, func(a, b spotRow) int {
		if a.leverage != b.leverage {
			return b.leverage - a.leverage
		}
		return cmp.Compare(a.tie, b.tie)
	})
	return rows[:min(n, len(rows))]
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// cell keeps a spreadsheet from reading data as a formula (CSV injection).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func writeWorksheet(w io.Writer, rows []spotRow) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(worksheetHeader); err != nil {
		return err
	}
	for _, r := range rows {
		correct := "no"
		if r.label {
			correct = "yes"
		}
		rec := []string{r.axis, r.id, cell(r.dataset), r.lang, strings.Join(r.reasons, ";"),
			strconv.FormatFloat(r.score, 'g', -1, 64), correct, cell(r.gold), r.cloze, r.generate,
			cell(r.prompt), cell(r.choices), "", ""}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func spotcheckMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("spotcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 50, "items on the worksheet")
	seed := fs.Uint64("seed", 1, "seed of the order among equally ranked items")
	out := fs.String("out", "", "write the worksheet to `FILE` (default stdout)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench spotcheck RUNDIR [--n 50] [--seed 1] [--out FILE]")
		fmt.Fprintln(stderr, "\nA CSV worksheet of the run's highest-leverage items: cloze/generate disagreements,")
		fmt.Fprintln(stderr, "wrong answers, items of datasets not marked human_validated. A reviewer fills in")
		fmt.Fprintln(stderr, "expected_difficulty (easy, medium, hard); the filled sheet is an anchors file for")
		fmt.Fprintln(stderr, "`glossobench calibrate`. Text cells starting with = + - @ get a leading ' so a")
		fmt.Fprintln(stderr, "spreadsheet shows them as text.")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(rest) != 1 {
		fs.Usage()
		return 1
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "glossobench spotcheck: %v\n", err)
		return 1
	}
	if *n < 1 {
		return fail(fmt.Errorf("--n %d: want at least 1", *n))
	}
	run, err := release.LoadRun(rest[0])
	if err != nil {
		return fail(err)
	}
	if run.Config == nil {
		fmt.Fprintf(stderr, "glossobench spotcheck: note: %s has no manifest.json; every dataset counts as not human-validated\n", rest[0])
	}
	rows := spotcheckRows(run, *n, *seed)
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		w = f
	}
	if err := writeWorksheet(w, rows); err != nil {
		return fail(err)
	}
	if *out != "" {
		fmt.Fprintf(stdout, "wrote %d item(s) to %s\n", len(rows), *out)
	}
	return 0
}
