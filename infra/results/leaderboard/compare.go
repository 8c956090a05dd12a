package leaderboard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/stats"
)

// LatestByModel keeps each model's last-appended row.
func LatestByModel(rows []Row) map[string]Row {
	out := map[string]Row{}
	for _, r := range rows {
		if old, ok := out[r.ModelID]; !ok || r.Seq > old.Seq {
			out[r.ModelID] = r
		}
	}
	return out
}

// AxisDelta is one number of a model on two boards; nil where a row has
// none.
type AxisDelta struct {
	Axis string
	A, B *float64
}

// ModelCompare is a model's rows on two boards and their deltas.
type ModelCompare struct {
	Model  string
	A, B   Row
	Deltas []AxisDelta // per axis in either row, then "MS", then the ranking mean
}

// Compare pairs the models on both boards (each model's row, as
// LatestByModel gives it), in model order, with their per-axis scores,
// ms_public and ranking mean on each.
//
// A model on one board only is paired by its identity instead: a row of the
// other board, itself unpaired by id, whose weights pin (model_sha256) is
// the same; the pair is named "idA = idB".
func Compare(a, b map[string]Row) []ModelCompare {
	var out []ModelCompare
	bySHA := map[string]string{} // model_sha256 → model id on b, for b's rows not on a
	for m, rb := range b {
		if _, ok := a[m]; !ok && rb.Pins["model_sha256"] != "" {
			bySHA[rb.Pins["model_sha256"]] = m
		}
	}
	for m, ra := range a {
		name := m
		rb, ok := b[m]
		if !ok {
			other, found := bySHA[ra.Pins["model_sha256"]]
			if ra.Pins["model_sha256"] == "" || !found {
				continue
			}
			rb, name = b[other], m+" = "+other
		}
		c := ModelCompare{Model: name, A: ra, B: rb}
		var axes []string
		for ax := range ra.Scores {
			axes = append(axes, ax)
		}
		for ax := range rb.Scores {
			if _, dup := ra.Scores[ax]; !dup {
				axes = append(axes, ax)
			}
		}
		slices.Sort(axes)
		for _, ax := range axes {
			d := AxisDelta{Axis: ax}
			if v, ok := ra.Scores[ax]; ok {
				d.A = &v
			}
			if v, ok := rb.Scores[ax]; ok {
				d.B = &v
			}
			c.Deltas = append(c.Deltas, d)
		}
		msA, msB := ra.MS, rb.MS
		c.Deltas = append(c.Deltas, AxisDelta{Axis: "MS", A: &msA, B: &msB})
		// The two rows rank on the axes that discriminate in both (spec §4).
		means, over, _ := RankRows([]Row{ra, rb})
		c.Deltas = append(c.Deltas, AxisDelta{Axis: "MS_ranking (" + orNone(over) + ")", A: means[0], B: means[1]})
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y ModelCompare) int { return strings.Compare(x.Model, y.Model) })
	return out
}

// ReasoningMismatches names the compared models whose two rows differ in
// reasoning mode: "model (mode A vs mode B)".
func ReasoningMismatches(cmp []ModelCompare) []string {
	var out []string
	for _, c := range cmp {
		if c.A.ReasoningMode != c.B.ReasoningMode {
			out = append(out, fmt.Sprintf("%s (%s vs %s)", c.Model, modeName(c.A.ReasoningMode), modeName(c.B.ReasoningMode)))
		}
	}
	return out
}

// identityPins are the pins that name the weights measured.
var identityPins = []string{"model_sha256", "server_model", "model_revision"}

// IdentityMismatches names the compared models whose two rows pin other
// weights (model_sha256, server_model or model_revision, where both rows
// record it): the same model id measured on different models.
func IdentityMismatches(cmp []ModelCompare) []string {
	var out []string
	for _, c := range cmp {
		var diff []string
		for _, k := range identityPins {
			va, vb := c.A.Pins[k], c.B.Pins[k]
			if va != "" && vb != "" && va != vb {
				diff = append(diff, fmt.Sprintf("%s %s vs %s", k, va, vb))
			}
		}
		if len(diff) > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", c.Model, strings.Join(diff, "; ")))
		}
	}
	return out
}

// ReasoningModes lists the reasoning modes of rows, sorted, "unspecified"
// for a row that records none.
func ReasoningModes(rows []Row) []string {
	var modes []string
	for _, r := range rows {
		if m := modeName(r.ReasoningMode); !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	slices.Sort(modes)
	return modes
}

func modeName(m string) string {
	if m == "" {
		return "unspecified"
	}
	return m
}

// RankRows is the ranking mean of rows compared together
// (stats.CommonRanking): each row's weighted mean over the axes every row
// ranks on. A row from before rows recorded ranking_weights ranks on every
// axis it scored, weight 1.
func RankRows(rows []Row) (means []*float64, axes, leftOut []string) {
	entries := make([]stats.RankingEntry, len(rows))
	for i, r := range rows {
		w := r.RankingWeights
		if w == nil {
			w = map[string]float64{}
			for a := range r.Scores {
				w[a] = 1
			}
		}
		entries[i] = stats.RankingEntry{Scores: r.Scores, Weights: w}
	}
	return stats.CommonRanking(entries)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// RankOrder orders rows by their ranking means (as RankRows gives them),
// highest first: the indexes of rows, rows without a mean last, ties in
// append order.
func RankOrder(rows []Row, means []*float64) []int {
	rank := make([]int, len(rows))
	for i := range rank {
		rank[i] = i
	}
	slices.SortStableFunc(rank, func(i, j int) int {
		a, b := means[i], means[j]
		switch {
		case a != nil && (b == nil || *a > *b):
			return -1
		case b != nil && (a == nil || *a < *b):
			return 1
		}
		return rows[i].Seq - rows[j].Seq
	})
	return rank
}
