// Package viewer is a local web app over a store: the runs in it, a run's
// axes with their 95% intervals and measurement profiles, and an axis's
// items page by page (prompt, response or choice log-probabilities, gold,
// score, flags, judge ratings) with filters and text search.
//
// Large axes are streamed: a page reads scores.jsonl a line at a time and
// then only as much of items.jsonl and the prediction checkpoints as it
// takes to find that page's items. Everything from a run is written through
// html/template, so model output shows as text; the stylesheet is embedded
// and nothing is loaded from the network.
package viewer

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/results/report"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/judge"
)

//go:embed assets
var assets embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"num":   numText,
	"exact": numExact,
	"json":  jsonText,
	"seconds": func(ms int64) string {
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64)
	},
	"score": func(m map[string]float64, k string) *float64 {
		if v, ok := m[k]; ok {
			return &v
		}
		return nil
	},
}).ParseFS(assets, "assets/*.html"))

// PageSize is how many items an axis page shows.
const PageSize = 50

// Server serves the viewer over one store.
type Server struct {
	st   store.Store
	mux  *http.ServeMux
	live Live // nil: no Temporal namespace to list runs going on from
}

// New returns the viewer of st.
func New(st store.Store) *Server {
	s := &Server{st: st, mux: http.NewServeMux()}
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.runs)
	s.mux.HandleFunc("GET /run/{run}/{$}", s.run)
	s.mux.HandleFunc("GET /run/{run}/report", s.report)
	s.mux.HandleFunc("GET /run/{run}/axis/{axis}/{$}", s.items)
	s.mux.HandleFunc("GET /run/{run}/axis/{axis}/errors", s.failures)
	s.mux.HandleFunc("GET /compare", s.compare)
	s.mux.HandleFunc("GET /leaderboard", s.leaderboards)
	s.mux.HandleFunc("GET /live", s.livePage)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func numText(v any) string {
	f, ok := toFloat(v)
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(f, 'f', 4, 64)
}

func numExact(v any) string {
	f, ok := toFloat(v)
	if !ok {
		return ""
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case *float64:
		if x == nil {
			return 0, false
		}
		return *x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func (s *Server) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, store.ErrNotFound) {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}

// runRow is one line of the runs page.
type runRow struct {
	ID, Model, BenchVersion, Date, Status string
	MSPublic, MSRanking                   *float64
	Live                                  bool // its workflow is running
}

// runDate reads the date from a run id ending in -YYYYMMDDTHHMMSS (the form
// `glossobench run` gives); the store keeps no other date.
func runDate(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return ""
	}
	t, err := time.Parse("20060102T150405", id[i+1:])
	if err != nil {
		return ""
	}
	return t.Format("2006-01-02 15:04:05")
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	found, err := listRuns(ctx, s.st)
	if err != nil {
		s.fail(w, err)
		return
	}
	var rows []runRow
	for id, finished := range found {
		row := runRow{ID: id, Date: runDate(id)}
		if finished {
			res, err := readResult(ctx, s.st, id)
			if err != nil {
				row.Status = "unreadable result.json: " + err.Error()
			} else {
				row.Status = "finished"
				row.Model, row.BenchVersion = res.ModelID, res.BenchVersion
				row.MSPublic, row.MSRanking = res.Summary.MSPublic, res.Summary.MSRanking
			}
		} else {
			row.Status = "not finished (no result.json)"
			if p, err := readPlan(ctx, s.st, id); err == nil {
				row.Model, row.BenchVersion = p.ModelID, p.BenchVersion
			}
		}
		rows = append(rows, row)
	}
	live, liveErr := s.liveRuns(ctx)
	for i := range rows {
		for _, l := range live {
			if l.RunID == rows[i].ID {
				rows[i].Status = "running: " + l.Stage
				rows[i].Live = true
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Date != rows[j].Date {
			return rows[i].Date > rows[j].Date
		}
		return rows[i].ID < rows[j].ID
	})
	s.render(w, "runs.html", map[string]any{"Store": s.st.Describe(), "Runs": rows, "Live": s.live != nil, "LiveErr": liveErr})
}

// axisRow is one axis on a run's page.
type axisRow struct {
	Name string
	A    runfiles.AxisReport
	Lo   *float64
	Hi   *float64
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("run")
	res, err := readResult(r.Context(), s.st, id)
	if errors.Is(err, store.ErrNotFound) {
		// Not finished: show the plan; the axes' items are there as they are checkpointed.
		plan, perr := readPlan(r.Context(), s.st, id)
		if perr != nil {
			s.fail(w, fmt.Errorf("run %s: no result.json, and its manifest: %w", id, perr))
			return
		}
		s.render(w, "plan.html", plan)
		return
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	var rows []axisRow
	for _, name := range slices.Sorted(mapKeys(res.Axes)) {
		a := res.Axes[name]
		row := axisRow{Name: name, A: a}
		if a.CI95 != nil {
			lo, hi := a.CI95[0], a.CI95[1]
			row.Lo, row.Hi = &lo, &hi
		}
		rows = append(rows, row)
	}
	var msLo, msHi *float64
	if ci := res.Summary.MSCI95; ci != nil {
		lo, hi := ci[0], ci[1]
		msLo, msHi = &lo, &hi
	}
	s.render(w, "run.html", map[string]any{"R": res, "Axes": rows, "MSLo": msLo, "MSHi": msHi})
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	res, err := readResult(r.Context(), s.st, r.PathValue("run"))
	if err != nil {
		s.fail(w, err)
		return
	}
	var b bytes.Buffer
	if err := report.Write(&b, res); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// Filter selects an axis's items.
type Filter struct {
	Dataset string // the dataset part of the item id
	Source  string // the item's pooling tag (topic, subject, ...)
	Outcome string // correct (score 1), wrong (score 0), partial (in between), unscored (kept, no score)
	Flag    string // the item's flag (parse_fail, truncated, low_conf, ...)
	Q       string // text in the prompt, gold, response or a judge's reply (case-insensitive)
	Sort    string // "" (file order), or score, tokens, latency; a leading - for highest first
	Page    int    // 0-based
}

// sortKeys are the orders an axis page can list its items in.
var sortKeys = []string{"score", "-score", "tokens", "-tokens", "latency", "-latency"}

func parseFilter(q url.Values) (Filter, error) {
	f := Filter{Dataset: q.Get("dataset"), Source: q.Get("source"), Outcome: q.Get("outcome"), Flag: q.Get("flag"), Q: strings.TrimSpace(q.Get("q")), Sort: q.Get("sort")}
	if f.Sort != "" && !slices.Contains(sortKeys, f.Sort) {
		return f, fmt.Errorf("sort %q: want one of %s", f.Sort, strings.Join(sortKeys, ", "))
	}
	switch f.Outcome {
	case "", "correct", "wrong", "partial", "unscored":
	default:
		return f, fmt.Errorf("outcome %q: want correct, wrong, partial or unscored", f.Outcome)
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return f, fmt.Errorf("page %q: want a page number from 1", p)
		}
		f.Page = n - 1
	}
	return f, nil
}

func (f Filter) keeps(s scoreLine) bool {
	if f.Dataset != "" && datasetOf(s.ItemID) != f.Dataset {
		return false
	}
	if f.Source != "" && s.Source != f.Source {
		return false
	}
	if f.Flag != "" && !slices.Contains(s.flags(), f.Flag) {
		return false
	}
	switch f.Outcome {
	case "correct":
		return s.Score >= 1
	case "wrong":
		return s.Score <= 0
	case "partial":
		return s.Score > 0 && s.Score < 1
	}
	return true
}

// query is the URL query of f at page (1-based).
func (f Filter) query(page int) string {
	v := url.Values{}
	for k, x := range map[string]string{"dataset": f.Dataset, "source": f.Source, "outcome": f.Outcome, "flag": f.Flag, "q": f.Q, "sort": f.Sort} {
		if x != "" {
			v.Set(k, x)
		}
	}
	v.Set("page", strconv.Itoa(page))
	return "?" + v.Encode()
}

// itemView is one item on an axis page.
type itemView struct {
	Score   scorers.ItemScore
	Item    *scorers.Item
	Pred    *predRecord
	Choices []choiceView
	Gold    string
	Ratings []judge.Rating
	Other   map[string]string // the prediction's other variants (probes, scoring modes) as JSON
	// Unscored: a kept item with no line in scores.jsonl, for Reason.
	Unscored bool
	Reason   string
	Turns    []turnView // a multi-turn item's conversation
	Groups   []ratingGroup
}

// turnView is one turn of a multi-turn conversation: the user's message,
// the model's answer, the reference answer where there is one, and the
// judges' ratings of the turn.
type turnView struct {
	N         int // from 1
	User      string
	Answer    *backends.Generation
	Reference string
	Ratings   *ratingGroup
}

// ratingGroup is the judges' ratings of one request (a turn, or a kind of
// judgement) with the ensemble's aggregate: mean, agreement, parse failures.
type ratingGroup struct {
	Kind    string
	Turn    int
	Ratings []judge.Rating
	Agg     judge.ItemAgg
}

type choiceView struct {
	Letter, Text string
	LogProb      *float64
	Gold, Best   bool
}

func newItemView(sc scorers.ItemScore, it *scorers.Item, p *predRecord) itemView {
	v := itemView{Score: sc, Item: it, Pred: p}
	if it != nil {
		best := -1
		for i, c := range it.Choices {
			cv := choiceView{Letter: string(rune('A' + i)), Text: c, Gold: i == it.Gold}
			if p != nil && i < len(p.LogLiks) {
				lp := p.LogLiks[i].LogProb
				cv.LogProb = &lp
				if best < 0 || lp > p.LogLiks[best].LogProb {
					best = i
				}
			}
			v.Choices = append(v.Choices, cv)
		}
		if best >= 0 {
			v.Choices[best].Best = true
		}
		switch {
		case it.Gold >= 0 && it.Gold < len(it.Choices):
			v.Gold = string(rune('A'+it.Gold)) + ". " + it.Choices[it.Gold]
		case it.Label != "":
			v.Gold = it.Label
		case len(it.References) > 0:
			v.Gold = strings.Join(it.References, "\n—\n")
		}
	}
	if p != nil {
		for name, raw := range p.Variants {
			if name == judge.VariantKey {
				if err := json.Unmarshal(raw, &v.Ratings); err == nil {
					continue
				}
			}
			if v.Other == nil {
				v.Other = map[string]string{}
			}
			var x any
			if json.Unmarshal(raw, &x) == nil {
				v.Other[name] = jsonText(x)
			} else {
				v.Other[name] = string(raw)
			}
		}
	}
	v.Groups = ratingGroups(v.Ratings)
	if it != nil && len(it.Turns) > 0 {
		for t, q := range it.Turns {
			tv := turnView{N: t + 1, User: q}
			if p != nil && t < len(p.Generations) {
				tv.Answer = &p.Generations[t]
			}
			if t < len(it.References) {
				tv.Reference = it.References[t]
			}
			for i := range v.Groups {
				if g := &v.Groups[i]; g.Kind == judge.KindRating && g.Turn == t+1 {
					tv.Ratings = g
				}
			}
			v.Turns = append(v.Turns, tv)
		}
	}
	return v
}

// ratingGroups groups an item's ratings by kind and turn, as the scorers
// aggregate them (judge.ByTurn, judge.Aggregate). The agreement does not
// depend on the floor, so none is given: low_conf is the score's flag.
func ratingGroups(rs []judge.Rating) []ratingGroup {
	var kinds []string
	for _, r := range rs {
		if !slices.Contains(kinds, r.Kind) {
			kinds = append(kinds, r.Kind)
		}
	}
	var out []ratingGroup
	for _, k := range kinds {
		turns, groups := judge.ByTurn(rs, k)
		aggs := judge.Aggregate(groups, 0)
		for i := range groups {
			out = append(out, ratingGroup{Kind: k, Turn: turns[i], Ratings: groups[i], Agg: aggs[i]})
		}
	}
	return out
}

// axisPage is what an axis page shows.
type axisPage struct {
	Run, Axis       string
	Filter          Filter
	Datasets, Flags []string
	Sources         []string
	Total, Matched  int // scored items; items the filters keep, scored or not
	Kept, Unscored  int // items dedup kept for the axis; those of them without a score
	Reasons         []reasonCount
	Page, Pages     int // 1-based
	Items           []itemView
	Prev, Next      string
	Axis95          *runfiles.AxisReport // the axis in result.json, when there
}

// Page builds one page of an axis's items under f. Without an outcome
// filter a page lists the scored items (scores.jsonl order) and then the
// kept items without a score (shard order), each with the reason it has none.
func (s *Server) Page(ctx context.Context, run, axis string, f Filter) (*axisPage, error) {
	pg := &axisPage{Run: run, Axis: axis, Filter: f}
	datasets, flags, sources := map[string]bool{}, map[string]bool{}, map[string]bool{}
	lo, hi := f.Page*PageSize, (f.Page+1)*PageSize
	var pageLines [][]byte
	var candidates []string         // with a text query or a sort: every id the other filters keep
	scoreOf := map[string]float64{} // with a sort by score
	matched := 0                    // scored items the filters keep
	// The kept items without a score. Score writes scores.jsonl in the
	// shards' item order, so they are what a walk along the kept ids skips;
	// were the orders to differ, a set of the scored ids decides instead.
	kept, err := keptItemIDs(ctx, s.st, run, axis)
	if err != nil {
		return nil, err
	}
	pg.Kept = len(kept)
	var unscored []string
	at, inOrder := 0, true
	err = eachScore(ctx, s.st, run, axis, func(sl scoreLine, b []byte) (bool, error) {
		pg.Total++
		if inOrder {
			for at < len(kept) && kept[at] != sl.ItemID {
				unscored = append(unscored, kept[at])
				at++
			}
			inOrder = at < len(kept)
			at++
		}
		datasets[datasetOf(sl.ItemID)] = true
		if sl.Source != "" {
			sources[sl.Source] = true
		}
		for _, fl := range sl.flags() {
			flags[fl] = true
		}
		if !f.keeps(sl) {
			return true, nil
		}
		if f.Q != "" || f.Sort != "" {
			candidates = append(candidates, sl.ItemID)
			if f.Sort == "score" || f.Sort == "-score" {
				scoreOf[sl.ItemID] = sl.Score
			}
			return true, nil
		}
		if matched >= lo && matched < hi {
			pageLines = append(pageLines, bytes.Clone(b))
		}
		matched++
		return true, nil
	})
	if errors.Is(err, store.ErrNotFound) {
		err = nil // not scored yet: every kept item is unscored
	}
	if err != nil {
		return nil, err
	}
	if inOrder {
		unscored = append(unscored, kept[min(at, len(kept)):]...)
	} else {
		scored := map[string]bool{}
		err := eachScore(ctx, s.st, run, axis, func(sl scoreLine, _ []byte) (bool, error) {
			scored[sl.ItemID] = true
			return true, nil
		})
		if err != nil {
			return nil, err
		}
		unscored = slices.DeleteFunc(kept, func(id string) bool { return scored[id] })
	}
	// An axis written without shard item lists still counts its scored items as kept.
	pg.Kept = max(pg.Kept, pg.Total+len(unscored))
	pg.Unscored = len(unscored)
	isUnscored := make(map[string]bool, len(unscored))
	for _, id := range unscored {
		isUnscored[id] = true
	}

	for _, id := range unscored {
		datasets[datasetOf(id)] = true
	}
	pg.Datasets, pg.Flags, pg.Sources = slices.Sorted(mapKeys(datasets)), slices.Sorted(mapKeys(flags)), slices.Sorted(mapKeys(sources))
	if f.Outcome == "" || f.Outcome == "unscored" {
		pg.Reasons, err = s.unscoredReasons(ctx, run, axis, unscored)
		if err != nil {
			return nil, err
		}
	}
	var shown []string // the unscored items the filters keep
	if (f.Outcome == "" || f.Outcome == "unscored") && f.Flag == "" && f.Source == "" {
		// Unscored items carry no flag or source in scores.jsonl: a flag or
		// source filter keeps none.
		shown = slices.DeleteFunc(unscored, func(id string) bool { return f.Dataset != "" && datasetOf(id) != f.Dataset })
	}
	if f.Outcome == "unscored" {
		matched, pageLines = 0, nil
	}
	if f.Outcome == "unscored" {
		candidates = nil
	}
	if f.Q != "" {
		ids, err := s.search(ctx, run, axis, append(candidates, shown...), f.Q)
		if err != nil {
			return nil, err
		}
		candidates = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return isUnscored[id] })
		shown = slices.DeleteFunc(ids, func(id string) bool { return !isUnscored[id] })
	}
	if f.Sort != "" {
		return s.sortedPage(ctx, pg, append(candidates, shown...), isUnscored, scoreOf)
	}
	if f.Q != "" {
		ids := candidates
		matched = len(ids)
		want := map[string]bool{}
		for _, id := range ids[min(lo, len(ids)):min(hi, len(ids))] {
			want[id] = true
		}
		if len(want) > 0 {
			err = eachScore(ctx, s.st, run, axis, func(sl scoreLine, b []byte) (bool, error) {
				if want[sl.ItemID] {
					pageLines = append(pageLines, bytes.Clone(b))
				}
				return len(pageLines) < len(want), nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	pg.Matched = matched + len(shown)
	scores := make([]scorers.ItemScore, len(pageLines), PageSize)
	for i, b := range pageLines {
		if err := json.Unmarshal(b, &scores[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", axisScoresKey(run, axis), err)
		}
	}
	// The page's unscored part follows the scored matches.
	ulo, uhi := max(0, lo-matched), max(0, hi-matched)
	for _, id := range shown[min(ulo, len(shown)):min(uhi, len(shown))] {
		scores = append(scores, scorers.ItemScore{ItemID: id})
	}
	return s.fill(ctx, pg, scores, isUnscored)
}

// sortedPage pages ids (the items the filters keep) in pg.Filter.Sort's
// order: by score (unscored items last), or by the tokens (prompt and
// completion) or wall time their answer took (items without a recorded
// usage last); ties keep the file order.
func (s *Server) sortedPage(ctx context.Context, pg *axisPage, ids []string, isUnscored map[string]bool, scoreOf map[string]float64) (*axisPage, error) {
	f := pg.Filter
	key := map[string]float64{}
	switch strings.TrimPrefix(f.Sort, "-") {
	case "score":
		key = scoreOf
	case "tokens", "latency":
		usage, err := usages(ctx, s.st, pg.Run, pg.Axis)
		if err != nil {
			return nil, err
		}
		for id, u := range usage {
			if f.Sort == "tokens" || f.Sort == "-tokens" {
				key[id] = float64(u.PromptTokens + u.CompletionTokens)
			} else {
				key[id] = float64(u.LatencyMS)
			}
		}
	}
	// The keys are looked up once, not in every comparison, and the file
	// position breaks ties, so an unstable sort keeps ties in file order.
	type entry struct {
		key float64
		has bool
		at  int
	}
	desc := strings.HasPrefix(f.Sort, "-")
	order := make([]entry, len(ids))
	for i, id := range ids {
		k, ok := key[id]
		order[i] = entry{key: k, has: ok, at: i}
	}
	slices.SortFunc(order, func(a, b entry) int {
		switch {
		case a.has != b.has:
			if a.has {
				return -1
			}
			return 1
		case !a.has || a.key == b.key:
			return cmp.Compare(a.at, b.at)
		case (a.key < b.key) != desc:
			return -1
		}
		return 1
	})
	sorted := make([]string, len(ids))
	for i, e := range order {
		sorted[i] = ids[e.at]
	}
	ids = sorted
	pg.Matched = len(ids)
	page := ids[min(f.Page*PageSize, len(ids)):min((f.Page+1)*PageSize, len(ids))]
	want := map[string]bool{}
	for _, id := range page {
		if !isUnscored[id] {
			want[id] = true
		}
	}
	lines := map[string]scorers.ItemScore{}
	if len(want) > 0 {
		err := eachLine(ctx, s.st, axisScoresKey(pg.Run, pg.Axis), func(_ int, b []byte) (bool, error) {
			if id, ok := quickID(b); ok && !want[id] {
				return true, nil // not on the page: skipped undecoded
			}
			var sc scorers.ItemScore
			if err := json.Unmarshal(b, &sc); err != nil {
				return false, err
			}
			if want[sc.ItemID] {
				lines[sc.ItemID] = sc
			}
			return len(lines) < len(want), nil
		})
		if err != nil {
			return nil, err
		}
	}
	scores := make([]scorers.ItemScore, len(page))
	for i, id := range page {
		if sc, ok := lines[id]; ok {
			scores[i] = sc
		} else {
			scores[i] = scorers.ItemScore{ItemID: id}
		}
	}
	return s.fill(ctx, pg, scores, isUnscored)
}

// Reasons an item kept for an axis has no score, as the viewer names them.
const (
	reasonNoPrediction = "no prediction checkpointed yet (not reached, or the axis budget ran out)"
	reasonError        = "the backend failed on it"
	reasonUnsupported  = "the backend cannot do what the axis needs"
	reasonNoResponse   = "no response to score"
	reasonNotRated     = "not rated by the judges (yet)"
	reasonNoValid      = "no judge gave a valid rating (parse_fail or dropped)"
	reasonScorer       = "the scorer gave it no score"
)

// unscoredReason is why a kept item with prediction p (nil: none) has no
// score.
func unscoredReason(p *predRecord, ratings []judge.Rating) string {
	switch {
	case p == nil:
		return reasonNoPrediction
	case p.Error != "":
		return reasonError
	case p.Unsupported:
		return reasonUnsupported
	case len(p.Generations) == 0 && len(p.LogLiks) == 0:
		return reasonNoResponse
	case len(ratings) > 0 && !slices.ContainsFunc(ratings, judge.Rating.Valid):
		return reasonNoValid
	case len(ratings) == 0 && p.Variants[judge.VariantKey] == nil && judgedKinds(p):
		return reasonNotRated
	}
	return reasonScorer
}

// judgedKinds reports whether p looks like a judged axis's prediction
// waiting for its ratings: generated text and no log-likelihoods.
func judgedKinds(p *predRecord) bool { return len(p.Generations) > 0 && len(p.LogLiks) == 0 }

// reasonCount is how many unscored items have one reason.
type reasonCount struct {
	Reason string
	N      int
}

// unscoredReasons counts the reasons of the unscored items ids.
func (s *Server) unscoredReasons(ctx context.Context, run, axis string, ids []string) ([]reasonCount, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	preds, err := findPredictions(ctx, s.st, run, axis, want)
	if err != nil {
		return nil, err
	}
	n := map[string]int{}
	for _, id := range ids {
		var p *predRecord
		var rs []judge.Rating
		if x, ok := preds[id]; ok {
			p = &x
			rs, _ = judge.FromPrediction(x)
		}
		n[unscoredReason(p, rs)]++
	}
	var out []reasonCount
	for _, r := range slices.Sorted(mapKeys(n)) {
		out = append(out, reasonCount{r, n[r]})
	}
	return out, nil
}

// fill sets pg's paging links and its items: scores joined with their
// items and predictions; those in isUnscored are kept items without a score.
func (s *Server) fill(ctx context.Context, pg *axisPage, scores []scorers.ItemScore, isUnscored map[string]bool) (*axisPage, error) {
	f, run, axis := pg.Filter, pg.Run, pg.Axis
	pg.Page, pg.Pages = f.Page+1, max(1, (pg.Matched+PageSize-1)/PageSize)
	if f.Page > 0 {
		pg.Prev = f.query(f.Page)
	}
	if (f.Page+1)*PageSize < pg.Matched {
		pg.Next = f.query(f.Page + 2)
	}
	want := map[string]bool{}
	for _, sc := range scores {
		want[sc.ItemID] = true
	}
	if len(want) == 0 {
		return pg, nil
	}
	items, err := findItems(ctx, s.st, run, axis, want)
	if err != nil {
		return nil, err
	}
	preds, err := findPredictions(ctx, s.st, run, axis, want)
	if err != nil {
		return nil, err
	}
	for _, sc := range scores {
		var it *scorers.Item
		if x, ok := items[sc.ItemID]; ok {
			it = &x
		}
		var p *predRecord
		if x, ok := preds[sc.ItemID]; ok {
			p = &x
		}
		v := newItemView(sc, it, p)
		if isUnscored[sc.ItemID] {
			v.Unscored = true
			v.Reason = unscoredReason(p, v.Ratings)
		}
		pg.Items = append(pg.Items, v)
	}
	return pg, nil
}

// search keeps the candidates whose prompt, gold, response or judge replies
// hold q, case-insensitively, in the candidates' order.
func (s *Server) search(ctx context.Context, run, axis string, candidates []string, q string) ([]string, error) {
	want := map[string]bool{}
	for _, id := range candidates {
		want[id] = true
	}
	needle := strings.ToLower(q)
	has := func(texts ...string) bool {
		for _, t := range texts {
			if strings.Contains(strings.ToLower(t), needle) {
				return true
			}
		}
		return false
	}
	hit := map[string]bool{}
	for id := range want {
		if has(id) {
			hit[id] = true
		}
	}
	err := eachLine(ctx, s.st, axisItemsKey(run, axis), func(_ int, b []byte) (bool, error) {
		var it scorers.Item
		if err := json.Unmarshal(b, &it); err != nil {
			return false, err
		}
		if want[it.ID] && has(append(append([]string{it.Prompt, it.Label}, it.Choices...), it.References...)...) {
			hit[it.ID] = true
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	keys, err := predKeys(ctx, s.st, run, axis)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		err := eachLine(ctx, s.st, k, func(_ int, b []byte) (bool, error) {
			var p predRecord
			if err := json.Unmarshal(b, &p); err != nil {
				return false, err
			}
			if !want[p.ItemID] || hit[p.ItemID] {
				return true, nil
			}
			for _, g := range p.Generations {
				if has(g.Text) {
					hit[p.ItemID] = true
				}
			}
			var rs []judge.Rating
			if raw, ok := p.Variants[judge.VariantKey]; ok && json.Unmarshal(raw, &rs) == nil {
				for _, r := range rs {
					if has(r.Raw, r.Note) {
						hit[p.ItemID] = true
					}
				}
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	var out []string
	for _, id := range candidates {
		if hit[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (s *Server) items(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	run, axis := r.PathValue("run"), r.PathValue("axis")
	pg, err := s.Page(r.Context(), run, axis, f)
	if err != nil {
		s.fail(w, err)
		return
	}
	if res, err := readResult(r.Context(), s.st, run); err == nil {
		if a, ok := res.Axes[axis]; ok {
			pg.Axis95 = &a
		}
	}
	s.render(w, "axis.html", pg)
}

// ListenAndServe serves st on addr until ctx ends; ready is called with
// the address listened on (addr may end in :0).
func ListenAndServe(ctx context.Context, st store.Store, addr string, ready func(addr string)) error {
	return Serve(ctx, New(st), addr, ready)
}

// Serve serves s on addr until ctx ends, as ListenAndServe.
func Serve(ctx context.Context, s *Server, addr string, ready func(addr string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if ready != nil {
		ready(ln.Addr().String())
	}
	err = srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
