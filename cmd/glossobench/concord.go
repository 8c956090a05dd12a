package main

import (
	"fmt"
	"io"

	"github.com/glossobench/glossobench/infra/results/concord"
)

func init() {
	registerIO("concord", "rank-agree our model scores with an external leaderboard (Spearman, Kendall, permutation p)", concordMain)
}

// concordMain exits 0 with a report whatever the agreement, 1 on bad input
// or usage.
func concordMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("concord", stderr, "concord --scores CSV|RUNDIR --external CSV --name NAME [--out FILE] [--resamples N] [--seed S]",
		"\nAligns the two tables on model_id and reports tie-aware Spearman ρ and Kendall τ-b,",
		"a permutation p-value of ρ (exact over all n! pairings up to 9 models, else Monte-Carlo), and a per-model rank table (rank 1 = highest score).",
		"Agreement: strong (ρ ≥ 0.7), moderate (0.5 ≤ ρ < 0.7), weak (ρ < 0.5). Exit 0 with a report, 1 on error.")
	scores := fs.String("scores", "", "our scores: a model_id,score `CSV` (header optional), or a directory of runs (their result.json ms_public)")
	external := fs.String("external", "", "the external leaderboard: a model_id,score `CSV` (header optional)")
	task := fs.String("task", "", "what to read from a peer's --external results: "+externalHelp)
	metric := fs.String("metric", "", "lm-eval: the `metric,filter` to read (default acc,none); HELM: the column")
	run := fs.String("run", "", "SEA-HELM: the `datetime` of the run to read from <model>_seahelm_results_<datetime>.json files (default each model's newest)")
	name := fs.String("name", "", "`name` of the external leaderboard, recorded in the report")
	out := fs.String("out", "", "write the JSON report to `FILE`")
	resamples := fs.Int("resamples", 10000, "Monte-Carlo permutations for the p-value")
	seed := fs.Uint64("seed", 1, "permutation seed")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *scores == "" || *external == "" || *name == "" {
		return usageError(fs, "--scores, --external and --name are required")
	}
	if *resamples < 1 {
		return usageError(fs, "--resamples must be at least 1")
	}
	ours, rankNote, err := concord.ReadScores(*scores)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
		return 1
	}
	if rankNote != "" {
		fmt.Fprintln(stdout, rankNote)
	}
	ext, err := concord.ReadExternalScores(*external, concord.Peer{Task: *task, Metric: *metric, Run: *run})
	if err != nil {
		fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
		return 1
	}
	rep, err := concord.Concord(ours, ext, *name, *resamples, *seed)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "concord with %s: %d shared models\n", rep.Name, rep.N)
	rep.Print(stdout)
	if rep.Resamples == 0 {
		fmt.Fprintf(stdout, "permutation p = %.4g (exact: all %d! pairings)\n", rep.PermutationP, rep.N)
	} else {
		fmt.Fprintf(stdout, "permutation p = %.4g ((k+1)/(m+1) over m = %d permutations, seed %d)\n", rep.PermutationP, rep.Resamples, rep.Seed)
	}
	fmt.Fprintf(stdout, "agreement: %s\n", rep.Verdict)
	if rep.Note != "" {
		fmt.Fprintf(stdout, "note: %s\n", rep.Note)
	}
	if *out != "" {
		if err := writeReportJSON(*out, rep); err != nil {
			fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
			return 1
		}
	}
	return 0
}
