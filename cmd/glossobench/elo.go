package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/results/elo"
	"github.com/glossobench/glossobench/infra/runplan"
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
	var runs []*elo.Run
	for _, arg := range runDirs {
		rs, err := elo.LoadRuns(arg)
		if err != nil {
			fmt.Fprintf(stderr, "glossobench elo: %v\n", err)
			return 1
		}
		runs = append(runs, rs...)
	}
	var judged []stats.Match
	var notes []string
	if *judgesCfg != "" {
		var err error
		judged, notes, err = pairwiseMT(context.Background(), *judgesCfg, runs)
		if err != nil {
			fmt.Fprintf(stderr, "glossobench elo: %v\n", err)
			return 1
		}
	}
	rep, err := elo.Rank(runs, judged, set)
	if err != nil {
		if errors.Is(err, stats.ErrNoMLE) {
			err = fmt.Errorf("%v; add --prior 1 (or more) to regularise", err)
		}
		fmt.Fprintf(stderr, "glossobench elo: %v\n", err)
		return 1
	}
	rep.Notes = append(rep.Notes, notes...)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return 0
	}
	fmt.Fprintf(stdout, "%s over %d item-level matches (each item both models scored is a game; not the axes' headlines) (%s), seed %d, %d resamples\n", rep.Method, rep.Matches, axisCounts(rep.ByAxis), rep.Seed, rep.Resamples)
	fmt.Fprintf(stdout, "%4s  %-32s %8s  %8s %8s  %5s %5s %5s\n", "rank", "model", "rating", "ci_lo", "ci_hi", "win", "loss", "tie")
	for i, p := range rep.Players {
		fmt.Fprintf(stdout, "%4d  %-32s %8.1f  %8.1f %8.1f  %5d %5d %5d\n", i+1, p.Player, p.Rating, p.Lo, p.Hi, p.Wins, p.Losses, p.Ties)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	return 0
}

func axisCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// pairwiseMT has the config's judges decide the MT matches pairwise.
func pairwiseMT(ctx context.Context, cfgPath string, runs []*elo.Run) ([]stats.Match, []string, error) {
	cfg, err := config.Load(cfgPath, config.Overrides{})
	if err != nil {
		return nil, nil, err
	}
	if len(cfg.Judges) == 0 {
		return nil, nil, fmt.Errorf("%s: field judges: empty; --judges needs at least one judge", cfgPath)
	}
	return elo.PairwiseMT(ctx, runplan.Judges(cfg), runs)
}
