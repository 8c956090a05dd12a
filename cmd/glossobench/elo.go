package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/glossobench/glossobench/infra/results/elo"
	"github.com/glossobench/glossobench/stats"
)

func init() {
	registerIO("elo", "rank models from several runs by Elo (or Bradley–Terry) over item-level pairwise matches", eloMain)
}

// eloMain exits 0 with a ranking, 1 on bad input or usage.
func eloMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("elo", stderr, "elo [--json] [--bt] [--seed S] [--resamples N] [--ties] [--axes a,b] [--judges CONFIG] RUNDIR...",
		"\nA RUNDIR is a run's store folder runs/<run> (holding result.json and <axis>/scores.jsonl),",
		"or a store root holding runs/*/result.json. For every pair of models and every item both scored",
		"on an exact-match axis (deterministic-rule, 0/1 scores), the model that got it right wins; on",
		"MT (judge-scored), the higher mean judge rating wins, or with --judges the judges compare the",
		"two answers directly. Works with zero judges (spec §4).")
	asJSON := fs.Bool("json", false, "print the ranking as JSON")
	bt := fs.Bool("bt", false, "fit Bradley–Terry by maximum likelihood (SEA-HELM's convention) instead of sequential Elo")
	seed := fs.Uint64("seed", 1, "seed of the Elo match order and of the bootstrap")
	resamples := fs.Int("resamples", 1000, "bootstrap resamples of the matches for the 95% CIs")
	k := fs.Float64("k", 32, "Elo update step")
	prior := fs.Float64("prior", 0, "Bradley–Terry: virtual ties added between every pair that met (keeps ratings finite when a model never loses)")
	ties := fs.Bool("ties", false, "count items both models got right (or both wrong) as ties; by default only decisive items are matches")
	axesFlag := fs.String("axes", "", "comma-separated axes to use (default: every exact-match axis, plus mt when judged)")
	judgesCfg := fs.String("judges", "", "a run `CONFIG` whose judges decide MT matches pairwise (each pair of answers in both orders) instead of by single-answer scores")
	runDirs, code, ok := parseArgs(fs, args, anyArgs)
	if !ok {
		return code
	}
	if len(runDirs) == 0 {
		return usageError(fs, "no RUNDIR given")
	}
	if *resamples < 1 {
		return usageError(fs, "--resamples must be at least 1")
	}
	set := elo.Settings{BT: *bt, Seed: *seed, Resamples: *resamples, K: *k, Prior: *prior, Ties: *ties}
	if *axesFlag != "" {
		set.Axes = strings.Split(*axesFlag, ",")
	}
	rep, err := elo.RankDirs(context.Background(), runDirs, *judgesCfg, set)
	if errors.Is(err, stats.ErrNoMLE) {
		err = fmt.Errorf("%v; add --prior 1 (or more) to regularise", err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "glossobench elo: %v\n", err)
		return 1
	}
	if *asJSON {
		printJSON(stdout, rep)
		return 0
	}
	rep.WriteText(stdout)
	return 0
}
