package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/sigtest"
)

func init() {
	registerIO("sigtest", "is A better than B? per-axis and MS paired bootstrap CI and permutation p on shared items", sigtestMain)
}

const itemScoresHelp = `Each input is JSONL, one scored item per line:
  {"axis": "knowledge", "item_id": "global_mmlu/17", "score": 1}
Items are paired on (axis, item_id); items scored by only one system are
counted and left out. MS is the weighted mean of the axis means (weights 1
unless --weights says otherwise).
A run directory (<store>/runs/<run>) is read from its result.json and
<axis>/scores.jsonl; MS is then over the axes of both runs' ms_public, with
the runs' axis weights.`

func sigtestMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("sigtest", stderr, "sigtest [flags] A B   (or --a A --b B); A and B are JSONL files or run directories",
		"\nPer axis and for MS: A − B on shared items, a paired bootstrap percentile interval",
		"(items resampled within each axis) and a paired sign-flip permutation p-value.",
		"Exit 0 with a report, 1 on error, 3 when --strict-parity refuses.",
		"\n"+itemScoresHelp)
	aPath := fs.String("a", "", "system A's per-item scores: a JSONL `FILE` or a run directory (or the first argument)")
	bPath := fs.String("b", "", "system B's per-item scores: a JSONL `FILE` or a run directory (or the second argument)")
	resamples := fs.Int("resamples", 2000, "bootstrap resamples and permutation rounds")
	seed := fs.Uint64("seed", 1, "random seed")
	level := fs.Float64("level", 0.95, "confidence level of the intervals")
	weights := fs.String("weights", "", "axis weights in MS, e.g. `knowledge=1,nlu=2` (default 1 each)")
	out := fs.String("out", "", "also write the JSON report to `FILE`")
	strictParity := fs.Bool("strict-parity", false, "refuse unless A and B are runs with the same model_meta.reasoning_mode (spec §10 #11); exit 3")
	rest, code, ok := parseArgs(fs, args, anyArgs)
	if !ok {
		return code
	}
	if *aPath == "" && len(rest) > 0 {
		*aPath, rest = rest[0], rest[1:]
	}
	if *bPath == "" && len(rest) > 0 {
		*bPath, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return usageError(fs, "unexpected argument %q", rest[0])
	}
	if *aPath == "" || *bPath == "" {
		return usageError(fs, "two score files are required")
	}
	w, err := parseWeights(*weights)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench sigtest: --weights: %v\n", err)
		return 1
	}
	rep, err := sigtest.Run(*aPath, *bPath, sigtest.Options{Weights: w, Resamples: *resamples, Seed: *seed, Level: *level, StrictParity: *strictParity})
	var parity *sigtest.ParityError
	if errors.As(err, &parity) {
		fmt.Fprintf(stderr, "glossobench sigtest: --strict-parity: %v\n", err)
		return 3
	}
	if err != nil {
		fmt.Fprintf(stderr, "glossobench sigtest: %v\n", err)
		return 1
	}
	rep.Print(stdout)
	if *out != "" {
		if err := writeReportJSON(*out, rep); err != nil {
			fmt.Fprintf(stderr, "glossobench sigtest: %v\n", err)
			return 1
		}
	}
	return 0
}

func parseWeights(s string) (map[string]float64, error) {
	w := map[string]float64{}
	if s == "" {
		return w, nil
	}
	for _, part := range strings.Split(s, ",") {
		axis, val, ok := strings.Cut(part, "=")
		axis = strings.TrimSpace(axis)
		if !ok || axis == "" {
			return nil, fmt.Errorf("%q: want axis=weight", part)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q: weight must be a positive number", part)
		}
		w[axis] = v
	}
	return w, nil
}
