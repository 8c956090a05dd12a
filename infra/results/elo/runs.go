package elo

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
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

// RankDirs ranks the runs under dirs (LoadRuns each, in order). With
// judgesConfig, a run config, its judges decide the MT matches pairwise
// (PairwiseMT) and their notes follow the ranking's.
func RankDirs(ctx context.Context, dirs []string, judgesConfig string, set Settings) (Report, error) {
	var runs []*Run
	for _, d := range dirs {
		rs, err := LoadRuns(d)
		if err != nil {
			return Report{}, err
		}
		runs = append(runs, rs...)
	}
	var judged []stats.Match
	var notes []string
	if judgesConfig != "" {
		cfg, err := config.Load(judgesConfig, config.Overrides{})
		if err != nil {
			return Report{}, err
		}
		if len(cfg.Judges) == 0 {
			return Report{}, fmt.Errorf("%s: field judges: empty; --judges needs at least one judge", judgesConfig)
		}
		if judged, notes, err = PairwiseMT(ctx, runplan.Judges(cfg), runs); err != nil {
			return Report{}, err
		}
	}
	rep, err := Rank(runs, judged, set)
	if err != nil {
		return Report{}, err
	}
	rep.Notes = append(rep.Notes, notes...)
	return rep, nil
}

// WriteText prints the ranking as `glossobench elo` does: how it was
// made, a table of the players, then the notes.
func (r Report) WriteText(w io.Writer) {
	byAxis := make([]string, 0, len(r.ByAxis))
	for _, a := range slices.Sorted(maps.Keys(r.ByAxis)) {
		byAxis = append(byAxis, fmt.Sprintf("%s %d", a, r.ByAxis[a]))
	}
	fmt.Fprintf(w, "%s over %d item-level matches (each item both models scored is a game; not the axes' headlines) (%s), seed %d, %d resamples\n", r.Method, r.Matches, strings.Join(byAxis, ", "), r.Seed, r.Resamples)
	fmt.Fprintf(w, "%4s  %-32s %8s  %8s %8s  %5s %5s %5s\n", "rank", "model", "rating", "ci_lo", "ci_hi", "win", "loss", "tie")
	for i, p := range r.Players {
		fmt.Fprintf(w, "%4d  %-32s %8.1f  %8.1f %8.1f  %5d %5d %5d\n", i+1, p.Player, p.Rating, p.Lo, p.Hi, p.Wins, p.Losses, p.Ties)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}
