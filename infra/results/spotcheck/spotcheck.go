// Package spotcheck picks a run's highest-leverage items for a fluent
// reader — cloze/generate disagreements, wrong answers, items of datasets
// nobody fluent has validated — and writes them as a CSV worksheet whose
// filled-in expected_difficulty column makes it an anchors file for
// calibrate.
package spotcheck

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/release"
)

// Reasons an item is worth a human look, with their weight in the ranking:
// a cloze/generate disagreement says the format, not the knowledge, decided
// the item; a wrong answer may be a wrong key; an unvalidated dataset has
// keys nobody fluent has confirmed.
const (
	ReasonDisagree     = "cloze_generate_disagree"
	ReasonWrong        = "wrong_answer"
	ReasonNotValidated = "dataset_not_human_validated"
)

var ReasonWeight = map[string]int{ReasonDisagree: 4, ReasonWrong: 2, ReasonNotValidated: 1}

// Row is one worksheet line; WriteWorksheet writes it.
type Row struct {
	axis, id, dataset, lang string
	reasons                 []string
	leverage                int
	tie                     uint64
	score                   float64
	label                   bool
	gold, cloze, generate   string
	prompt, choices         string
}

// Header is the worksheet's first line.
var Header = []string{"axis", "item_id", "dataset", "lang", "reasons", "score", "correct", "gold", "cloze_pred", "generate_pred", "prompt", "choices", "expected_difficulty", "reviewer_note"}

// Rows ranks every scored item of the run by leverage (ties in a
// seeded order) and returns the top n.
func Rows(run *release.Run, n int, seed uint64) []Row {
	var rows []Row
	for _, axis := range run.AxisNames() {
		ad := run.Axes[axis]
		for _, s := range ad.Scores {
			it, haveItem := ad.Items[s.ItemID]
			r := Row{axis: axis, id: s.ItemID, dataset: it.Dataset, lang: cmp.Or(s.Lang, it.Lang), score: s.Score, label: s.Label}
			if c, ok := s.Fields["cloze_correct"].(bool); ok && c != s.Label {
				r.reasons = append(r.reasons, ReasonDisagree)
			}
			if !s.Label {
				r.reasons = append(r.reasons, ReasonWrong)
			}
			if d, ok := run.Dataset(axis, it.Dataset); !ok || !d.HumanValidated {
				r.reasons = append(r.reasons, ReasonNotValidated)
			}
			for _, why := range r.reasons {
				r.leverage += ReasonWeight[why]
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
	slices.SortFunc(rows, func(a, b Row) int {
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

// WriteWorksheet writes rows as the CSV worksheet, with empty
// expected_difficulty and reviewer_note columns for the reviewer.
func WriteWorksheet(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
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
