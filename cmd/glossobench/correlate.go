package main

import (
	"fmt"
	"io"

	"github.com/glossobench/glossobench/infra/results/concord"
)

func init() {
	registerIO("correlate", "rank-correlate our scores with an external benchmark on the same models (exit 2 if divergent)", correlateMain)
}

// Exit codes of correlate. Divergence is the CI gate (spec §10), so errors
// use 1 and never 2.
const (
	correlateExitOK        = 0 // also "moderate"
	correlateExitError     = 1
	correlateExitDivergent = 2
	correlateExitOverlap   = 3 // --overlap-free refused: the instruments share items
)

const scoresFormatHelp = `Score files are JSON, in one of three shapes:
  {"instrument": "seahelm", "item_hashes": ["<sha256 hex>", ...],
   "scores": [{"model_id": "m1", "score": 0.71, "item_ids": ["ds/1", ...]}, ...]}
  [{"model_id": "m1", "score": 0.71}, ...]
  {"m1": 0.71, "m2": 0.64}
item_hashes are lower-case SHA-256 hex digests of item ids; item_ids are hashed
the same way. Both may sit at the top level (the instrument's scored items)
or on a score (that model's scored items); --overlap-free reads their union.`

func correlateMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("correlate", stderr, "correlate --ours OURS.json --external EXTERNAL.json [--overlap-free] [--out FILE]",
		"\nAligns on model_id; prints Spearman ρ, Kendall τ-b and a per-model rank-delta table.",
		"converged (ρ ≥ 0.7) exits 0, moderate (0.5 ≤ ρ < 0.7) exits 0, divergent (ρ < 0.5) exits 2;",
		"--overlap-free refusing exits 3; bad input exits 1.",
		"\n"+scoresFormatHelp)
	oursPath := fs.String("ours", "", "our scores: a JSON `FILE`, or a directory of runs (result.json ms_public, scores.jsonl item ids)")
	extPath := fs.String("external", "", "the external instrument's scores on the same models: a JSON `FILE` (or a directory of runs)")
	task := fs.String("task", "", "what to read from a peer's --external results: "+externalHelp)
	metric := fs.String("metric", "", "lm-eval: the `metric,filter` to read (default acc,none); HELM: the column")
	run := fs.String("run", "", "SEA-HELM: the `datetime` of the run to read from <model>_seahelm_results_<datetime>.json files (default each model's newest)")
	overlapFree := fs.Bool("overlap-free", false, "refuse unless the two instruments share no scored item (checked by item-id hashes)")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	// Exit 2 is the divergence verdict here (the CI gate), so a usage
	// error exits 1 instead.
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return min(code, correlateExitError)
	}
	if *oursPath == "" || *extPath == "" {
		usageError(fs, "--ours and --external are required")
		return correlateExitError
	}
	fail := failer(stderr, "correlate") // exits correlateExitError
	ours, err := concord.ReadInstrument(*oursPath)
	if err != nil {
		return fail(err)
	}
	ext, err := concord.ReadExternalInstrument(*extPath, concord.Peer{Task: *task, Metric: *metric, Run: *run})
	if err != nil {
		return fail(err)
	}
	if *overlapFree {
		if err := concord.OverlapFree(ours, ext); err != nil {
			fmt.Fprintf(stderr, "glossobench correlate: --overlap-free: %v\n", err)
			return correlateExitOverlap
		}
		fmt.Fprintf(stdout, "overlap-free: %s (%d items) and %s (%d items) share no scored item\n",
			ours.Title(), len(ours.Items), ext.Title(), len(ext.Items))
	}
	rep, err := concord.Correlate(ours, ext)
	if err != nil {
		return fail(err)
	}
	rep.PrintCorrelation(stdout, ours.Title())
	if *out != "" {
		if err := writeReportJSON(*out, rep); err != nil {
			return fail(err)
		}
	}
	if rep.Verdict == "divergent" {
		return correlateExitDivergent
	}
	return correlateExitOK
}
