package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

func init() {
	register("translation-delta", "raw-vs-translated score difference on items aligned across two datasets, with a paired CI", runTranslationDelta)
}

func runTranslationDelta(args []string) int {
	fs := commandFlags("translation-delta", os.Stderr, "translation-delta RUNDIR --axis AXIS --original DATASET --translated DATASET [--json]")
	axis := fs.String("axis", "nlu", "axis whose scores.jsonl holds both datasets")
	orig := fs.String("original", "", "dataset name of the items in their original language (e.g. belebele_en)")
	trans := fs.String("translated", "", "dataset name of the same items in translation (e.g. belebele_ms)")
	asJSON := fs.Bool("json", false, "print JSON")
	seed := fs.Uint64("seed", 1234, "bootstrap seed")
	rest, code, ok := parseArgs(fs, args, 1)
	if !ok {
		return code
	}
	dir := rest[0]
	if *orig == "" || *trans == "" {
		return usageError(fs, "--original and --translated are required")
	}
	d, err := translationDeltaOf(dir, *axis, *orig, *trans, *seed)
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
func translationDeltaOf(dir, axis, orig, trans string, seed uint64) (scorers.TranslationDelta, error) {
	scores, err := inputs.RunAxisScores(dir, axis)
	if err != nil {
		return scorers.TranslationDelta{}, err
	}
	d, err := scorers.DeltaOf(scores, axis, orig, trans, 2000, seed)
	if err != nil {
		return d, fmt.Errorf("%s: %w", filepath.Join(dir, runfiles.ScoresName(axis)), err)
	}
	return d, nil
}
