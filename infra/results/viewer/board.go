package viewer

import (
	"cmp"
	"net/http"
	"regexp"
	"slices"
	"strconv"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
)

// boardDirRE matches the keys of a leaderboard, leaderboard/<lang>/v<major>/….
var boardDirRE = regexp.MustCompile(`^leaderboard/([^/]+)/v(\d+)/`)

type boardClass struct {
	Class string
	Rows  []leaderboard.Row
}

type board struct {
	Lang    string
	Major   int
	Axes    []string
	Classes []boardClass
	Err     string
}

// leaderboards shows every leaderboard in the store, rows grouped by model
// class (leaderboard.ByClass) and ranked by MS within a class.
func (s *Server) leaderboards(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	keys, err := s.st.List(ctx, "leaderboard/")
	if err != nil {
		s.fail(w, err)
		return
	}
	seen := map[string]bool{}
	var boards []board
	for _, k := range keys {
		m := boardDirRE.FindStringSubmatch(k)
		if m == nil || seen[m[0]] {
			continue
		}
		seen[m[0]] = true
		major, _ := strconv.Atoi(m[2])
		b := board{Lang: m[1], Major: major}
		rows, err := leaderboard.Read(ctx, s.st, b.Lang, major)
		if err != nil {
			b.Err = err.Error()
			boards = append(boards, b)
			continue
		}
		axes := map[string]bool{}
		for _, row := range rows {
			for a := range row.Scores {
				axes[a] = true
			}
		}
		b.Axes = slices.Sorted(mapKeys(axes))
		groups := leaderboard.ByClass(rows)
		for _, c := range slices.Sorted(mapKeys(groups)) {
			rs := slices.Clone(groups[c])
			slices.SortStableFunc(rs, func(x, y leaderboard.Row) int { return cmp.Compare(y.MS, x.MS) })
			b.Classes = append(b.Classes, boardClass{Class: c, Rows: rs})
		}
		boards = append(boards, b)
	}
	s.render(w, "board.html", map[string]any{"Boards": boards})
}
