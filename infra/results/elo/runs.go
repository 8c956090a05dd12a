package elo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/stats"
)

// LoadRuns reads a run folder (or its result.json), or every run under a
// store root (runs/*/result.json), in path order.
func LoadRuns(arg string) ([]*Run, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() && filepath.Base(arg) == "result.json" {
		arg = filepath.Dir(arg)
	}
	dirs := []string{arg}
	if !fileExists(filepath.Join(arg, "result.json")) {
		matches, _ := filepath.Glob(filepath.Join(arg, "runs", "*", "result.json"))
		if len(matches) == 0 {
			return nil, fmt.Errorf("%s: no result.json (want a run folder runs/<run> or a store root)", arg)
		}
		slices.Sort(matches)
		dirs = dirs[:0]
		for _, m := range matches {
			dirs = append(dirs, filepath.Dir(m))
		}
	}
	var out []*Run
	for _, dir := range dirs {
		f, err := runfiles.Dir(dir)
		if err != nil {
			return nil, err
		}
		r, err := Load(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// PairwiseMT has judges decide the MT matches pairwise, reading each
// run's conversations from its folder.
func PairwiseMT(ctx context.Context, configs []judge.Config, runs []*Run) ([]stats.Match, []string, error) {
	var judges []*judge.Judge
	for _, c := range configs {
		j, err := judge.Dial(c)
		if err != nil {
			return nil, nil, err
		}
		defer j.Close()
		judges = append(judges, j)
	}
	turns := make([]Turns, len(runs))
	for i, r := range runs {
		f, err := runfiles.Dir(r.Where)
		if err != nil {
			return nil, nil, err
		}
		turns[i], err = MTTurns(f)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return PairMatches(ctx, judges, runs, turns)
}
