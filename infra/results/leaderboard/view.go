package leaderboard

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// ClassView is one model class of a leaderboard as every view shows it
// (`leaderboard show`, the viewer's /leaderboard): its rows ranked by the
// ranking mean they are compared on (RankRows, RankOrder), within the class
// only (spec §10).
type ClassView struct {
	Class string
	Rows  []Ranked // in rank order
	// RankedOn are the axes every row of the class ranks on; LeftOut the
	// axes some row scored but that not every row ranks on.
	RankedOn, LeftOut []string
	Axes              []string // every axis some row of the class scored
	Modes             []string // the rows' reasoning modes (ReasoningModes)
}

// Ranked is a row with its place in its class.
type Ranked struct {
	Rank int      // from 1
	Mean *float64 // ranking mean; nil when the row scored none of RankedOn
	Row
}

// View groups rows by model class (ByClass), classes in name order, and
// ranks each class.
func View(rows []Row) []ClassView {
	groups := ByClass(rows)
	var out []ClassView
	for _, c := range slices.Sorted(maps.Keys(groups)) {
		g := groups[c]
		means, over, leftOut := RankRows(g)
		cv := ClassView{Class: c, RankedOn: over, LeftOut: leftOut, Axes: Axes(g), Modes: ReasoningModes(g)}
		for i, k := range RankOrder(g, means) {
			cv.Rows = append(cv.Rows, Ranked{Rank: i + 1, Mean: means[k], Row: g[k]})
		}
		out = append(out, cv)
	}
	return out
}

// Select keeps the class views of class; "" keeps them all.
func Select(views []ClassView, class string) []ClassView {
	if class == "" {
		return views
	}
	return slices.DeleteFunc(views, func(cv ClassView) bool { return cv.Class != class })
}

// WriteView prints each class view of the leaderboard in dir as a table
// (rank, model, ranking mean, ms_public and its CI, each axis's score,
// reasoning mode, config hash, seq), with the notes on its rows, as
// `leaderboard show` shows it. With strict a class whose rows differ in
// reasoning mode is refused when its turn comes (spec §10's parity).
func WriteView(w io.Writer, dir string, views []ClassView, notes []Note, strict bool) error {
	for _, cv := range views {
		if strict && len(cv.Modes) > 1 {
			return fmt.Errorf("class %s mixes reasoning modes %s; --strict-parity refuses to rank them together", cv.Class, strings.Join(cv.Modes, ", "))
		}
		fmt.Fprintf(w, "%s, class %s (%d rows)\n", dir, cv.Class, len(cv.Rows))
		fmt.Fprintf(w, "ranked by ms_ranking over the axes that discriminate for every row: %s\n", orNone(cv.RankedOn))
		if len(cv.LeftOut) > 0 {
			fmt.Fprintf(w, "left out of the ranking (near chance, or not scored, for some row): %s\n", strings.Join(cv.LeftOut, ", "))
		}
		writeClassTable(w, cv)
		for _, n := range notes {
			if slices.ContainsFunc(cv.Rows, func(r Ranked) bool { return r.Seq == n.Seq }) {
				fmt.Fprintf(w, "note on row %d (%s): %s: %s\n", n.Seq, n.ModelID, n.Kind, n.Text)
			}
		}
	}
	return nil
}

// writeClassTable prints the rows of a class view, one a line, in columns.
func writeClassTable(w io.Writer, cv ClassView) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "rank\tmodel_id\tms_ranking\tms_public\tms_ci95\t%s\treasoning\tconfig_hash\tseq\n", strings.Join(cv.Axes, "\t"))
	for _, r := range cv.Rows {
		ci := "-"
		if len(r.MSCI95) == 2 {
			ci = fmt.Sprintf("[%.4f, %.4f]", r.MSCI95[0], r.MSCI95[1])
		}
		cells := make([]string, len(cv.Axes))
		for i, a := range cv.Axes {
			cells[i] = "-"
			if v, ok := r.Scores[a]; ok {
				cells[i] = strconv.FormatFloat(v, 'f', 4, 64)
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\t%s\t%s\t%s\t%s\t%d\n", r.Rank, r.ModelID, runfiles.FormatScore(r.Mean), r.MS, ci, strings.Join(cells, "\t"), cmp.Or(r.ReasoningMode, "-"), r.Pins["config_hash"], r.Seq)
	}
	tw.Flush()
}
