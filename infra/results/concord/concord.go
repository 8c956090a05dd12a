// Package concord measures how far our ranking of models agrees with
// another instrument's: it aligns two score tables on model_id and reports
// tie-aware Spearman ρ and Kendall τ-b with a per-model rank table. The
// concord and correlate commands print its reports; run folders are read
// by their ranking mean (spec §4).
package concord

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/stats"
)

// Verdict thresholds on Spearman's ρ (spec §10, §11).
const (
	RhoConverged = 0.7 // correlate: converged; concord: strong
	RhoDivergent = 0.5 // correlate: divergent below; concord: weak below
)

// Reaches reports whether ρ is at or above a verdict line, within the
// rounding of its computation (ρ exactly 0.5 computes to 0.49999999999999994),
// as the leakage audit compares its readings with its floor.
func Reaches(rho, line float64) bool { return rho >= line-1e-12 }

// Row is one model in the rank table. Rank 1 is the highest score; ties
// share the average rank. Delta = external rank − our rank, so a positive
// delta means we rank the model higher than the external board.
type Row struct {
	ModelID      string  `json:"model_id"`
	Ours         float64 `json:"ours"`
	External     float64 `json:"external"`
	RankOurs     float64 `json:"rank_ours"`
	RankExternal float64 `json:"rank_external"`
	Delta        float64 `json:"rank_delta"`
}

// Report is what correlate and concord print and write.
type Report struct {
	Name         string  `json:"name,omitempty"`
	N            int     `json:"n_shared"`
	Spearman     float64 `json:"spearman_rho"`
	SpearmanP    float64 `json:"spearman_p"`
	Kendall      float64 `json:"kendall_tau_b"`
	KendallP     float64 `json:"kendall_p"`
	PMethod      string  `json:"p_method"`
	PermutationP float64 `json:"permutation_p,omitempty"`
	Resamples    int     `json:"permutations,omitempty"`
	Seed         uint64  `json:"seed,omitempty"`
	// Direction says how each side ranks: "higher is better", or "lower is
	// better" for a peer column marked so (HELM's lower_is_better).
	OursDirection     string   `json:"ours_direction"`
	ExternalDirection string   `json:"external_direction"`
	Verdict           string   `json:"verdict"`
	Note              string   `json:"note,omitempty"`
	Models            []Row    `json:"models"`
	OnlyOurs          []string `json:"only_ours"`
	OnlyExternal      []string `json:"only_external"`

	// oursVec and extVec are merits, higher better: a lower-is-better
	// side's scores negated, so ranks and correlations read its direction.
	oursVec, extVec []float64
}

// Concord ranks ours against the external leaderboard name: the rank
// correlations, a Monte-Carlo permutation p of ρ (resamples rounds from
// seed) and the agreement: strong, moderate or weak.
func Concord(ours, ext map[string]inputs.ModelScore, name string, resamples int, seed uint64) (*Report, error) {
	rep, err := Compare(ours, ext)
	if err != nil {
		return nil, err
	}
	rep.Name = name
	if rep.N <= stats.ExactLimit {
		// Every pairing was enumerated for SpearmanP: the exact
		// permutation p, which sampling could only approximate.
		rep.PermutationP = rep.SpearmanP
	} else {
		rep.Resamples, rep.Seed = resamples, seed
		if _, rep.PermutationP, err = stats.SpearmanPermutation(rep.oursVec, rep.extVec, resamples, seed); err != nil {
			return nil, err
		}
	}
	rep.Verdict = verdict(rep.Spearman, "strong", "moderate", "weak")
	return rep, nil
}

// Correlate ranks our instrument against an external one on the same
// models; the verdict is converged, moderate or divergent.
func Correlate(ours, ext *inputs.Instrument) (*Report, error) {
	rep, err := Compare(ours.Scores, ext.Scores)
	if err != nil {
		return nil, err
	}
	rep.Name = ext.Title()
	rep.Verdict = verdict(rep.Spearman, "converged", "moderate", "divergent")
	return rep, nil
}

// verdict names where ρ falls: at or above RhoConverged, at or above
// RhoDivergent, or below.
func verdict(rho float64, high, middle, low string) string {
	switch {
	case Reaches(rho, RhoConverged):
		return high
	case Reaches(rho, RhoDivergent):
		return middle
	}
	return low
}

// Compare aligns two score tables on model_id and computes the rank
// correlations and the rank table. Fewer than three shared models, or a
// table whose shared scores are all equal, is an error.
func Compare(ours, ext map[string]inputs.ModelScore) (*Report, error) {
	rep := &Report{OnlyOurs: []string{}, OnlyExternal: []string{}}
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
	rep.OursDirection, rep.ExternalDirection = direction(ours, shared), direction(ext, shared)
	for _, id := range shared {
		rep.oursVec = append(rep.oursVec, merit(ours[id]))
		rep.extVec = append(rep.extVec, merit(ext[id]))
	}
	spearman, kendall := stats.Spearman, stats.Kendall
	rep.PMethod = "asymptotic (scipy's spearmanr and kendalltau defaults)"
	if rep.N <= stats.ExactLimit {
		// A t or normal approximation over a handful of models reads
		// ρ = 1 as p = 0; the exact p counts the n! pairings.
		spearman = func(x, y []float64) (float64, float64, error) { return stats.SpearmanExact(x, y, stats.TwoSided) }
		kendall = func(x, y []float64) (float64, float64, error) { return stats.KendallExactTies(x, y, stats.TwoSided) }
		rep.PMethod = fmt.Sprintf("exact (all %d! pairings)", rep.N)
	}
	var err error
	rep.Spearman, rep.SpearmanP, err = spearman(rep.oursVec, rep.extVec)
	if err != nil {
		return nil, fmt.Errorf("over the %d shared models: %w", len(shared), err)
	}
	rep.Kendall, rep.KendallP, err = kendall(rep.oursVec, rep.extVec)
	if err != nil {
		return nil, fmt.Errorf("over the %d shared models: %w", len(shared), err)
	}
	ro, re := descRanks(rep.oursVec), descRanks(rep.extVec)
	for i, id := range shared {
		rep.Models = append(rep.Models, Row{id, ours[id].Score, ext[id].Score, ro[i], re[i], re[i] - ro[i]})
	}
	slices.SortStableFunc(rep.Models, func(a, b Row) int {
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
			n, n, 2/stats.Factorial(n))
	}
	return rep, nil
}

func merit(s inputs.ModelScore) float64 {
	if s.LowerIsBetter {
		return -s.Score
	}
	return s.Score
}

func direction(scores map[string]inputs.ModelScore, ids []string) string {
	if scores[ids[0]].LowerIsBetter {
		return "lower is better"
	}
	return "higher is better"
}

// descRanks ranks scores from the highest (rank 1), ties averaged.
func descRanks(v []float64) []float64 {
	neg := make([]float64, len(v))
	for i, x := range v {
		neg[i] = -x
	}
	return stats.Rank(neg)
}

// PrintCorrelation writes a Correlate report of our instrument (titled
// ours) as `glossobench correlate` prints it: the models shared, the rank
// table and correlations (Print), the verdict and its note.
func (rep *Report) PrintCorrelation(w io.Writer, ours string) {
	fmt.Fprintf(w, "%s vs %s: %d shared models\n", ours, rep.Name, rep.N)
	rep.Print(w)
	fmt.Fprintf(w, "verdict: %s\n", rep.Verdict)
	if rep.Note != "" {
		fmt.Fprintf(w, "note: %s\n", rep.Note)
	}
}

// Print writes the rank table, the models only one side has, and the two
// correlations.
func (rep *Report) Print(w io.Writer) {
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
	if rep.OursDirection != rep.ExternalDirection || rep.ExternalDirection != "higher is better" {
		fmt.Fprintf(w, "rank direction: ours %s, external %s (rank 1 is the best on each side)\n", rep.OursDirection, rep.ExternalDirection)
	}
	fmt.Fprintf(w, "Spearman ρ = %.4f (p = %.4g), Kendall τ-b = %.4f (p = %.4g); p-values %s\n",
		rep.Spearman, rep.SpearmanP, rep.Kendall, rep.KendallP, rep.PMethod)
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
