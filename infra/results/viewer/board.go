package viewer

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
)

// boardDirRE matches the keys of a leaderboard, leaderboard/<lang>/v<major>/….
var boardDirRE = regexp.MustCompile(`^leaderboard/([^/]+)/v(\d+)/`)

type board struct {
	Lang    string
	Major   int
	Classes []leaderboard.ClassView
	Err     string
}

// leaderboards shows every leaderboard in the store as the library ranks it
// (leaderboard.View, what `leaderboard show` prints): rows grouped by model
// class and ranked by the ranking mean within a class.
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
		} else {
			b.Classes = leaderboard.View(rows)
		}
		boards = append(boards, b)
	}
	s.render(w, "board.html", map[string]any{"Boards": boards})
}
