package leaderboard

import (
	"maps"
	"slices"
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
