package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/stats"
)

func init() {
	register("elo", "rank models from several runs by Elo (or Bradley–Terry) over item-level pairwise matches", runElo)
}

func runElo(args []string) int { return eloMain(args, os.Stdout, os.Stderr) }

// eloRun is the part of a run's result.json (activities.Result) Elo reads.
type eloRun struct {
	RunID   string `json:"run_id"`
	ModelID string `json:"model_id"`
	Axes    map[string]struct {
		ScorerType string `json:"scorer_type"`
		ScoresKey  string `json:"scores_key"` // runs/<run>/<axis>/scores.jsonl, relative to the store root
	} `json:"axes"`

	dir    string
	player string
	scores map[string]map[string]float64 // axis → item id → score
}

// eloItem is the part of a scores.jsonl row (scorers.ItemScore) Elo reads.
type eloItem struct {
	ItemID string   `json:"item_id"`
	Score  *float64 `json:"score"`
}

// Scorer types (scorers.ScorerRule, scorers.ScorerJudge) as result.json prints them.
const (
	eloRuleScorer  = "deterministic-rule"
	eloJudgeScorer = "llm-judge"
)

// eloMain exits 0 with a ranking, 1 on bad input or usage.
func eloMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("elo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the ranking as JSON")
	bt := fs.Bool("bt", false, "fit Bradley–Terry by maximum likelihood (SEA-HELM's convention) instead of sequential Elo")
	seed := fs.Uint64("seed", 1, "seed of the Elo match order and of the bootstrap")
	resamples := fs.Int("resamples", 1000, "bootstrap resamples of the matches for the 95% CIs")
	k := fs.Float64("k", 32, "Elo update step")
	prior := fs.Float64("prior", 0, "Bradley–Terry: virtual ties added between every pair that met (keeps ratings finite when a model never loses)")
	ties := fs.Bool("ties", false, "count items both models got right (or both wrong) as ties; by default only decisive items are matches")
	axesFlag := fs.String("axes", "", "comma-separated axes to use (default: every exact-match axis, plus mt when judged)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench elo [--json] [--bt] [--seed S] [--resamples N] [--ties] [--axes a,b] RUNDIR...")
		fmt.Fprintln(stderr, "\nA RUNDIR is a run's store folder runs/<run> (holding result.json and <axis>/scores.jsonl),")
		fmt.Fprintln(stderr, "or a store root holding runs/*/result.json. For every pair of models and every item both scored")
		fmt.Fprintln(stderr, "on an exact-match axis (deterministic-rule, 0/1 scores), the model that got it right wins; on")
		fmt.Fprintln(stderr, "MT (judge-scored), the higher mean judge rating wins. Works with zero judges (spec §4).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 1
	}
	if *resamples < 1 {
		fmt.Fprintln(stderr, "glossobench elo: --resamples must be at least 1")
		return 1
	}
	var only []string
	if *axesFlag != "" {
		only = strings.Split(*axesFlag, ",")
	}
	var runs []*eloRun
	for _, arg := range fs.Args() {
		rs, err := loadEloRuns(arg)
		if err != nil {
			fmt.Fprintf(stderr, "glossobench elo: %v\n", err)
			return 1
		}
		runs = append(runs, rs...)
	}
	rep, err := eloReport(runs, eloSettings{BT: *bt, Seed: *seed, Resamples: *resamples, K: *k, Prior: *prior, Ties: *ties, Axes: only})
	if err != nil {
		fmt.Fprintf(stderr, "glossobench elo: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return 0
	}
	fmt.Fprintf(stdout, "%s over %d matches (%s), seed %d, %d resamples\n", rep.Method, rep.Matches, axisCounts(rep.ByAxis), rep.Seed, rep.Resamples)
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

// loadEloRuns reads a run folder, or every run under a store root.
func loadEloRuns(arg string) ([]*eloRun, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() && filepath.Base(arg) == "result.json" {
		arg = filepath.Dir(arg)
	}
	if _, err := os.Stat(filepath.Join(arg, "result.json")); err == nil {
		r, err := loadEloRun(arg)
		if err != nil {
			return nil, err
		}
		return []*eloRun{r}, nil
	}
	matches, _ := filepath.Glob(filepath.Join(arg, "runs", "*", "result.json"))
	if len(matches) == 0 {
		return nil, fmt.Errorf("%s: no result.json (want a run folder runs/<run> or a store root)", arg)
	}
	slices.Sort(matches)
	var out []*eloRun
	for _, m := range matches {
		r, err := loadEloRun(filepath.Dir(m))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func loadEloRun(dir string) (*eloRun, error) {
	path := filepath.Join(dir, "result.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &eloRun{dir: dir, scores: map[string]map[string]float64{}}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.Axes == nil {
		return nil, fmt.Errorf("%s: field axes: missing", path)
	}
	r.player = r.ModelID
	if r.player == "" {
		r.player = r.RunID
	}
	if r.player == "" {
		r.player = filepath.Base(dir)
	}
	for axis, a := range r.Axes {
		if a.ScorerType != eloRuleScorer && !(axis == "mt" && a.ScorerType == eloJudgeScorer) {
			continue
		}
		// The scores sit next to result.json; a run folder copied elsewhere
		// keeps that layout even when scores_key no longer resolves.
		sp := filepath.Join(dir, axis, "scores.jsonl")
		if k := a.ScoresKey; k != "" {
			root := filepath.Dir(filepath.Dir(dir)) // runs/<run> → the store root
			if alt := filepath.Join(root, filepath.FromSlash(k)); fileExists(alt) {
				sp = alt
			}
		}
		items, err := readEloScores(sp)
		if errors.Is(err, os.ErrNotExist) {
			continue // the axis produced no per-item scores
		}
		if err != nil {
			return nil, err
		}
		r.scores[axis] = items
	}
	return r, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func readEloScores(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var it eloItem
		if err := json.Unmarshal([]byte(b), &it); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if it.ItemID == "" {
			return nil, fmt.Errorf("%s:%d: field item_id: missing", path, line)
		}
		if it.Score == nil || math.IsNaN(*it.Score) {
			return nil, fmt.Errorf("%s:%d: field score: missing", path, line)
		}
		if _, dup := out[it.ItemID]; dup {
			return nil, fmt.Errorf("%s:%d: item %q scored twice", path, line, it.ItemID)
		}
		out[it.ItemID] = *it.Score
	}
	return out, sc.Err()
}

type eloSettings struct {
	BT        bool
	Seed      uint64
	Resamples int
	K         float64
	Prior     float64
	Ties      bool
	Axes      []string
}

// EloPlayer is one model in the ranking.
type EloPlayer struct {
	stats.RatingCI
	Wins   int      `json:"wins"`
	Losses int      `json:"losses"`
	Ties   int      `json:"ties"`
	Runs   []string `json:"runs"`
}

// EloReport is what `glossobench elo` prints.
type EloReport struct {
	Method    string         `json:"method"` // elo | bradley-terry
	Seed      uint64         `json:"seed"`
	Resamples int            `json:"resamples"`
	Matches   int            `json:"matches"`
	ByAxis    map[string]int `json:"matches_by_axis"`
	Skipped   int            `json:"skipped_resamples"`
	Players   []EloPlayer    `json:"players"`
	Notes     []string       `json:"notes"`
}

// eloMatches builds the pairwise matches: on every axis both runs scored,
// every shared item is a match. Exact-match axes need 0/1 scores (an axis with
// any other score is not exact-match and is skipped with a note); on MT the
// higher normalised judge score wins. Equal results are ties, kept only with
// ties=true.
func eloMatches(runs []*eloRun, set eloSettings) (matches []stats.Match, byAxis map[string]int, notes []string) {
	byAxis = map[string]int{}
	binary := map[string]bool{}
	for _, r := range runs {
		for axis, items := range r.scores {
			if _, seen := binary[axis]; !seen {
				binary[axis] = true
			}
			for _, s := range items {
				if s != 0 && s != 1 {
					binary[axis] = false
				}
			}
		}
	}
	var axes []string
	for a, ok := range binary {
		if len(set.Axes) > 0 && !slices.Contains(set.Axes, a) {
			continue
		}
		if !ok && a != "mt" {
			notes = append(notes, fmt.Sprintf("axis %s: scores are not 0/1 exact match; not used", a))
			continue
		}
		axes = append(axes, a)
	}
	slices.Sort(axes)
	slices.Sort(notes)
	for i := 0; i < len(runs); i++ {
		for j := i + 1; j < len(runs); j++ {
			a, b := runs[i], runs[j]
			for _, axis := range axes {
				sa, sb := a.scores[axis], b.scores[axis]
				if sa == nil || sb == nil {
					continue
				}
				ids := make([]string, 0, len(sa))
				for id := range sa {
					if _, ok := sb[id]; ok {
						ids = append(ids, id)
					}
				}
				slices.Sort(ids) // deterministic match order before the seeded shuffle
				for _, id := range ids {
					x, y := sa[id], sb[id]
					var score float64
					switch {
					case x > y:
						score = 1
					case x < y:
						score = 0
					default:
						if !set.Ties {
							continue
						}
						score = 0.5
					}
					matches = append(matches, stats.Match{A: a.player, B: b.player, Score: score})
					byAxis[axis]++
				}
			}
		}
	}
	return matches, byAxis, notes
}

func eloReport(runs []*eloRun, set eloSettings) (EloReport, error) {
	rep := EloReport{Method: "elo", Seed: set.Seed, Resamples: set.Resamples, Notes: []string{}}
	if set.BT {
		rep.Method = "bradley-terry"
	}
	if len(runs) < 2 {
		return rep, fmt.Errorf("need at least two runs, got %d", len(runs))
	}
	seen := map[string]string{}
	for _, r := range runs {
		if prev, dup := seen[r.player]; dup {
			return rep, fmt.Errorf("model %q appears in two runs (%s and %s): rank one run per model", r.player, prev, r.dir)
		}
		seen[r.player] = r.dir
	}
	matches, byAxis, notes := eloMatches(runs, set)
	rep.ByAxis, rep.Matches = byAxis, len(matches)
	rep.Notes = append(rep.Notes, notes...)
	if len(matches) == 0 {
		return rep, errors.New("no pairwise matches: the runs share no item on an exact-match axis (or every shared item is a tie; try --ties)")
	}
	rate := func(m []stats.Match) (map[string]float64, error) {
		return stats.Elo(m, stats.EloOptions{K: set.K, Seed: set.Seed})
	}
	if set.BT {
		rate = func(m []stats.Match) (map[string]float64, error) {
			return stats.BradleyTerry(m, stats.BTOptions{Prior: set.Prior})
		}
	}
	cis, skipped, err := stats.RatingsBootstrap(matches, rate, set.Resamples, set.Seed, 0.95)
	if err != nil {
		if errors.Is(err, stats.ErrNoMLE) {
			return rep, fmt.Errorf("%v; add --prior 1 (or more) to regularise", err)
		}
		return rep, err
	}
	rep.Skipped = skipped
	if skipped > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d resamples could not be rated and were skipped", skipped, set.Resamples))
	}
	tally := map[string]*EloPlayer{}
	for _, c := range cis {
		tally[c.Player] = &EloPlayer{RatingCI: c, Runs: []string{}}
	}
	for _, m := range matches {
		a, b := tally[m.A], tally[m.B]
		switch m.Score {
		case 1:
			a.Wins++
			b.Losses++
		case 0:
			a.Losses++
			b.Wins++
		default:
			a.Ties++
			b.Ties++
		}
	}
	for _, r := range runs {
		if p, ok := tally[r.player]; ok {
			p.Runs = append(p.Runs, r.RunID)
		} else {
			rep.Notes = append(rep.Notes, fmt.Sprintf("model %s (run %s) played no match and is not ranked", r.player, r.RunID))
		}
	}
	for _, c := range cis {
		rep.Players = append(rep.Players, *tally[c.Player])
	}
	return rep, nil
}
