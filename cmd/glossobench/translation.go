package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/glossobench/glossobench/stats"
)

func init() {
	register("translation-delta", "raw-vs-translated score difference on items aligned across two datasets, with a paired CI", runTranslationDelta)
}

// translationDelta is the published difference (spec §0, principle 3).
type translationDelta struct {
	Axis       string     `json:"axis"`
	Original   string     `json:"original"`
	Translated string     `json:"translated"`
	Pairs      int        `json:"pairs"`
	ScoreOrig  float64    `json:"score_original"`
	ScoreTrans float64    `json:"score_translated"`
	Delta      float64    `json:"delta"` // translated - original
	CI95       [2]float64 `json:"delta_ci95"`
	Unpaired   int        `json:"unpaired"`
}

func runTranslationDelta(args []string) int {
	fs := newFlagSet("translation-delta", "glossobench translation-delta RUNDIR --axis AXIS --original DATASET --translated DATASET [--json]")
	axis := fs.String("axis", "nlu", "axis whose scores.jsonl holds both datasets")
	orig := fs.String("original", "", "dataset name of the items in their original language (e.g. belebele_en)")
	trans := fs.String("translated", "", "dataset name of the same items in translation (e.g. belebele_ms)")
	asJSON := fs.Bool("json", false, "print JSON")
	seed := fs.Uint64("seed", 1234, "bootstrap seed")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs.Usage()
		return 2
	}
	dir := args[0]
	if !parse(fs, args[1:]) {
		return 2
	}
	if *orig == "" || *trans == "" {
		fmt.Fprintln(os.Stderr, "translation-delta: --original and --translated are required")
		return 2
	}
	path := filepath.Join(dir, *axis, "scores.jsonl")
	d, err := translationDeltaOf(path, *axis, *orig, *trans, *seed)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(d)
		return 0
	}
	fmt.Printf("%s: %s %.4f vs %s %.4f on %d aligned items: delta %+.4f (95%% CI %+.4f to %+.4f); %d unpaired\n",
		d.Axis, d.Original, d.ScoreOrig, d.Translated, d.ScoreTrans, d.Pairs, d.Delta, d.CI95[0], d.CI95[1], d.Unpaired)
	return 0
}

// translationDeltaOf pairs "<orig>/<row>" with "<trans>/<row>" item scores.
func translationDeltaOf(path, axis, orig, trans string, seed uint64) (translationDelta, error) {
	scores, err := readRunAxisScores(path)
	if err != nil {
		return translationDelta{}, err
	}
	byRow := map[string]map[string]float64{orig: {}, trans: {}}
	for id, score := range scores {
		ds, row, ok := strings.Cut(id, "/")
		if m, want := byRow[ds]; ok && want {
			m[row] = score
		}
	}
	d := translationDelta{Axis: axis, Original: orig, Translated: trans}
	var rows []string
	for row := range byRow[orig] {
		if _, ok := byRow[trans][row]; ok {
			rows = append(rows, row)
		} else {
			d.Unpaired++
		}
	}
	d.Unpaired += len(byRow[trans]) - len(rows)
	if len(rows) < 2 {
		return d, fmt.Errorf("%s: only %d items of %s and %s share a row id", path, len(rows), orig, trans)
	}
	sort.Strings(rows)
	a, b := make([]float64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		a[i], b[i] = byRow[trans][r], byRow[orig][r]
		d.ScoreTrans += a[i]
		d.ScoreOrig += b[i]
	}
	d.ScoreTrans /= float64(len(rows))
	d.ScoreOrig /= float64(len(rows))
	d.Pairs = len(rows)
	diff, lo, hi, err := stats.PairedBootstrap(a, b, 2000, seed, 0.95)
	if err != nil {
		return d, fmt.Errorf("%s: %w", path, err)
	}
	d.Delta, d.CI95 = diff, [2]float64{lo, hi}
	return d, nil
}
