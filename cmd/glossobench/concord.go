package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/stats"
)

func init() {
	register("concord", "rank-agree our model scores with an external leaderboard (Spearman, Kendall, permutation p)", runConcord)
}

// Verdict thresholds on Spearman's ρ (spec §10, §11).
const (
	rhoConverged = 0.7 // correlate: converged; concord: strong
	rhoDivergent = 0.5 // correlate: divergent below; concord: weak below
)

// rhoReaches reports whether ρ is at or above a verdict line, within the
// rounding of its computation (ρ exactly 0.5 computes to 0.49999999999999994),
// as the leakage audit compares its readings with its floor.
func rhoReaches(rho, line float64) bool { return rho >= line-1e-12 }

func runConcord(args []string) int { return concordMain(args, os.Stdout, os.Stderr) }

// concordMain exits 0 with a report whatever the agreement, 1 on bad input
// or usage.
func concordMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("concord", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scores := fs.String("scores", "", "our scores: a model_id,score `CSV` (header optional), or a directory of runs (their result.json ms_public)")
	external := fs.String("external", "", "the external leaderboard: a model_id,score `CSV` (header optional)")
	task := fs.String("task", "", "what to read from a peer's --external results: "+externalHelp)
	metric := fs.String("metric", "", "lm-eval: the `metric,filter` to read (default acc,none); HELM: the column")
	name := fs.String("name", "", "`name` of the external leaderboard, recorded in the report")
	out := fs.String("out", "", "write the JSON report to `FILE`")
	resamples := fs.Int("resamples", 10000, "Monte-Carlo permutations for the p-value")
	seed := fs.Uint64("seed", 1, "permutation seed")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench concord --scores CSV|RUNDIR --external CSV --name NAME [--out FILE] [--resamples N] [--seed S]")
		fmt.Fprintln(stderr, "\nAligns the two tables on model_id and reports tie-aware Spearman ρ and Kendall τ-b,")
		fmt.Fprintln(stderr, "a Monte-Carlo permutation p-value of ρ, and a per-model rank table (rank 1 = highest score).")
		fmt.Fprintln(stderr, "Agreement: strong (ρ ≥ 0.7), moderate (0.5 ≤ ρ < 0.7), weak (ρ < 0.5). Exit 0 with a report, 1 on error.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "glossobench concord: unexpected argument %q\n", fs.Arg(0))
		return 1
	}
	if *scores == "" || *external == "" || *name == "" {
		fmt.Fprintln(stderr, "glossobench concord: --scores, --external and --name are required")
		return 1
	}
	if *resamples < 1 {
		fmt.Fprintln(stderr, "glossobench concord: --resamples must be at least 1")
		return 1
	}
	ours, rankNote, err := readScoresArg(*scores)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
		return 1
	}
	if rankNote != "" {
		fmt.Fprintln(stdout, rankNote)
	}
	ext, err := readExternalScores(*external, *task, *metric)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
		return 1
	}
	rep, err := compareRankings(ours, ext)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
		return 1
	}
	rep.Name = *name
	rep.Resamples = *resamples
	rep.Seed = *seed
	_, rep.PermutationP, err = stats.SpearmanPermutation(rep.oursVec, rep.extVec, *resamples, *seed)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench concord: %v\n", err)
		return 1
	}
	switch {
	case rhoReaches(rep.Spearman, rhoConverged):
		rep.Verdict = "strong"
	case rhoReaches(rep.Spearman, rhoDivergent):
		rep.Verdict = "moderate"
	default:
		rep.Verdict = "weak"
	}
	fmt.Fprintf(stdout, "concord with %s: %d shared models\n", rep.Name, rep.N)
	rep.print(stdout)
	fmt.Fprintf(stdout, "permutation p = %.4g (%d permutations, seed %d)\n", rep.PermutationP, rep.Resamples, rep.Seed)
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

// readScoresArg reads --scores: a model_id,score CSV file, or a directory
// holding runs, whose result.json files give model_id → ranking mean (and
// a note naming the axes it is over).
func readScoresArg(path string) (map[string]inputs.ModelScore, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if !st.IsDir() {
		scores, err := inputs.ReadScoresCSVFile(path)
		return scores, "", err
	}
	runs, err := findRunResults(path)
	if err != nil {
		return nil, "", err
	}
	return runRankingScores(runs)
}

// runResult is a run folder's result.json, as the comparison tools read it.
type runResult struct {
	dir string // the run directory: <store>/runs/<run>
	*runfiles.Result
}

func (r runResult) path() string { return filepath.Join(r.dir, runfiles.ResultName) }

// findRunResults returns the runs at or under dir, in path order.
func findRunResults(dir string) ([]runResult, error) {
	dirs, err := runfiles.FindRuns(dir)
	if err != nil {
		return nil, err
	}
	runs := make([]runResult, len(dirs))
	for i, d := range dirs {
		if runs[i], err = readRunResult(d); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// readRunResult reads the result.json of the run folder dir.
func readRunResult(dir string) (runResult, error) {
	r := runResult{dir: dir}
	f, err := runfiles.Dir(dir)
	if err != nil {
		return r, err
	}
	defer f.Close()
	if r.Result, err = f.Result(); err != nil {
		return r, err
	}
	if r.ModelID == "" {
		return r, fmt.Errorf("%s: field model_id is missing or empty", r.path())
	}
	return r, nil
}

// runRankingScores maps each run's model_id to its ranking mean over the
// axes that discriminate for every run (spec §4, stats.CommonRanking), and
// says in note which axes those are and which it leaves out.
func runRankingScores(runs []runResult) (scores map[string]inputs.ModelScore, note string, err error) {
	scores = map[string]inputs.ModelScore{}
	from := map[string]string{}
	entries := make([]stats.RankingEntry, len(runs))
	for i, r := range runs {
		if prev, dup := from[r.ModelID]; dup {
			return nil, "", fmt.Errorf("model_id %q has two runs: %s and %s; keep one", r.ModelID, prev, r.path())
		}
		from[r.ModelID] = r.path()
		var axes []stats.RankingAxis
		for name, a := range r.Axes {
			if a.Score != nil {
				axes = append(axes, stats.RankingAxis{Name: name, Score: *a.Score, Weight: a.Weight, Public: a.Tier != "selfbuilt", Discriminates: a.Discriminates})
			}
		}
		e := stats.RankingEntry{Scores: map[string]float64{}}
		e.Weights, _ = stats.RankingWeights(axes)
		for _, a := range axes {
			e.Scores[a.Name] = a.Score
		}
		entries[i] = e
	}
	means, over, leftOut := stats.CommonRanking(entries)
	for i, r := range runs {
		if means[i] == nil {
			return nil, "", fmt.Errorf("%s: no axis discriminates for every run (%s), so there is no ranking mean; left out: %s", r.path(), orNone(over), orNone(leftOut))
		}
		scores[r.ModelID] = inputs.ModelScore{Score: *means[i], Line: 1}
	}
	note = "runs ranked by ms_ranking over the axes that discriminate for every run: " + strings.Join(over, ", ")
	if len(leftOut) > 0 {
		note += "; left out (near chance, or not scored, for some run): " + strings.Join(leftOut, ", ")
	}
	return scores, note, nil
}

// readRunAxisScores reads the item scores of one axis of the run folder
// dir: item_id → score.
func readRunAxisScores(dir, axis string) (map[string]float64, error) {
	f, err := runfiles.Dir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	err = f.EachScore(axis, func(s scorers.ItemScore) error {
		out[s.ItemID] = s.Score
		return nil
	})
	return out, err
}

// rankRow is one model in the rank table. Rank 1 is the highest score;
// ties share the average rank. Delta = external rank − our rank, so a
// positive delta means we rank the model higher than the external board.
type rankRow struct {
	ModelID      string  `json:"model_id"`
	Ours         float64 `json:"ours"`
	External     float64 `json:"external"`
	RankOurs     float64 `json:"rank_ours"`
	RankExternal float64 `json:"rank_external"`
	Delta        float64 `json:"rank_delta"`
}

// rankReport is the shared part of the correlate and concord reports.
type rankReport struct {
	Name         string    `json:"name,omitempty"`
	N            int       `json:"n_shared"`
	Spearman     float64   `json:"spearman_rho"`
	SpearmanP    float64   `json:"spearman_p"`
	Kendall      float64   `json:"kendall_tau_b"`
	KendallP     float64   `json:"kendall_p"`
	PermutationP float64   `json:"permutation_p,omitempty"`
	Resamples    int       `json:"permutations,omitempty"`
	Seed         uint64    `json:"seed,omitempty"`
	Verdict      string    `json:"verdict"`
	Note         string    `json:"note,omitempty"`
	Models       []rankRow `json:"models"`
	OnlyOurs     []string  `json:"only_ours"`
	OnlyExternal []string  `json:"only_external"`

	oursVec, extVec []float64
}

// compareRankings aligns two score tables on model_id and computes the rank
// correlations and the rank table. Fewer than three shared models, or a
// table whose shared scores are all equal, is an error.
func compareRankings(ours, ext map[string]inputs.ModelScore) (*rankReport, error) {
	rep := &rankReport{OnlyOurs: []string{}, OnlyExternal: []string{}}
	var shared []string
	for id := range ours {
		if _, ok := ext[id]; ok {
			shared = append(shared, id)
		} else {
			rep.OnlyOurs = append(rep.OnlyOurs, id)
		}
	}
	for id := range ext {
		if _, ok := ours[id]; !ok {
			rep.OnlyExternal = append(rep.OnlyExternal, id)
		}
	}
	slices.Sort(shared)
	slices.Sort(rep.OnlyOurs)
	slices.Sort(rep.OnlyExternal)
	rep.N = len(shared)
	if len(shared) < 3 {
		return nil, fmt.Errorf("only %d shared model_ids (%s); rank correlation needs at least 3 — rename rows so ids match",
			len(shared), strings.Join(shared, ", "))
	}
	for _, id := range shared {
		rep.oursVec = append(rep.oursVec, ours[id].Score)
		rep.extVec = append(rep.extVec, ext[id].Score)
	}
	var err error
	rep.Spearman, rep.SpearmanP, err = stats.Spearman(rep.oursVec, rep.extVec)
	if err != nil {
		return nil, fmt.Errorf("over the %d shared models: %w", len(shared), err)
	}
	rep.Kendall, rep.KendallP, err = stats.Kendall(rep.oursVec, rep.extVec)
	if err != nil {
		return nil, fmt.Errorf("over the %d shared models: %w", len(shared), err)
	}
	ro, re := descRanks(rep.oursVec), descRanks(rep.extVec)
	for i, id := range shared {
		rep.Models = append(rep.Models, rankRow{id, rep.oursVec[i], rep.extVec[i], ro[i], re[i], re[i] - ro[i]})
	}
	slices.SortStableFunc(rep.Models, func(a, b rankRow) int {
		if a.RankOurs != b.RankOurs {
			if a.RankOurs < b.RankOurs {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ModelID, b.ModelID)
	})
	if n := len(shared); n < 5 {
		// The smallest two-sided permutation p of ρ over n models is 2/n!.
		rep.Note = fmt.Sprintf("only %d shared models: even ρ = 1 is not significant at 0.05 (the smallest possible two-sided p is 2/%d! = %.3g); treat the result as directional",
			n, n, 2/factorialFloat(n))
	}
	return rep, nil
}

func factorialFloat(n int) float64 {
	f := 1.0
	for i := 2; i <= n; i++ {
		f *= float64(i)
	}
	return f
}

// descRanks ranks scores from the highest (rank 1), ties averaged.
func descRanks(v []float64) []float64 {
	neg := make([]float64, len(v))
	for i, x := range v {
		neg[i] = -x
	}
	return stats.Rank(neg)
}

func (rep *rankReport) print(w io.Writer) {
	width := len("model_id")
	for _, m := range rep.Models {
		width = max(width, len(m.ModelID))
	}
	fmt.Fprintf(w, "%-*s  %10s  %10s  %9s  %9s  %6s\n", width, "model_id", "ours", "external", "rank_ours", "rank_ext", "delta")
	for _, m := range rep.Models {
		fmt.Fprintf(w, "%-*s  %10.4g  %10.4g  %9s  %9s  %6s\n", width, m.ModelID, m.Ours, m.External,
			fmtRank(m.RankOurs), fmtRank(m.RankExternal), fmtDelta(m.Delta))
	}
	if len(rep.OnlyOurs) > 0 {
		fmt.Fprintf(w, "only in ours (%d): %s\n", len(rep.OnlyOurs), strings.Join(rep.OnlyOurs, ", "))
	}
	if len(rep.OnlyExternal) > 0 {
		fmt.Fprintf(w, "only in external (%d): %s\n", len(rep.OnlyExternal), strings.Join(rep.OnlyExternal, ", "))
	}
	fmt.Fprintf(w, "Spearman ρ = %.4f (p = %.4g), Kendall τ-b = %.4f (p = %.4g)\n", rep.Spearman, rep.SpearmanP, rep.Kendall, rep.KendallP)
}

// fmtRank prints 3 or 2.5.
func fmtRank(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// fmtDelta prints a rank delta with its sign: +2, -1.5, 0.
func fmtDelta(d float64) string {
	if d > 0 {
		return "+" + fmtRank(d)
	}
	return fmtRank(d)
}

func writeReportJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	return nil
}
