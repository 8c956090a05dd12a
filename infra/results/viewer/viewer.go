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
	st  store.Store
	mux *http.ServeMux
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
	s.mux.HandleFunc("GET /compare", s.compare)
	s.mux.HandleFunc("GET /leaderboard", s.leaderboards)
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
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Date != rows[j].Date {
			return rows[i].Date > rows[j].Date
		}
		return rows[i].ID < rows[j].ID
	})
	s.render(w, "runs.html", map[string]any{"Store": s.st.Describe(), "Runs": rows})
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
	Page    int    // 0-based
}

func parseFilter(q url.Values) (Filter, error) {
	f := Filter{Dataset: q.Get("dataset"), Source: q.Get("source"), Outcome: q.Get("outcome"), Flag: q.Get("flag"), Q: strings.TrimSpace(q.Get("q"))}
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
	case "unscored":
		return false
	}
	return true
}

// query is the URL query of f at page (1-based).
func (f Filter) query(page int) string {
	v := url.Values{}
	for k, x := range map[string]string{"dataset": f.Dataset, "source": f.Source, "outcome": f.Outcome, "flag": f.Flag, "q": f.Q} {
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
	// Unscored: a kept item with no line in scores.jsonl.
	Unscored bool
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
	return v
}

// axisPage is what an axis page shows.
type axisPage struct {
	Run, Axis       string
	Filter          Filter
	Datasets, Flags []string
	Sources         []string
	Total, Matched  int
	Page, Pages     int // 1-based
	Items           []itemView
	Prev, Next      string
	Axis95          *runfiles.AxisReport // the axis in result.json, when there
}

// Page builds one page of an axis's items under f.
func (s *Server) Page(ctx context.Context, run, axis string, f Filter) (*axisPage, error) {
	pg := &axisPage{Run: run, Axis: axis, Filter: f}
	datasets, flags, sources := map[string]bool{}, map[string]bool{}, map[string]bool{}
	lo, hi := f.Page*PageSize, (f.Page+1)*PageSize
	var pageLines [][]byte
	var candidates []string // with a text query: every id the other filters keep
	scored := map[string]bool{}
	unscored := f.Outcome == "unscored"
	err := eachScore(ctx, s.st, run, axis, func(sl scoreLine, b []byte) (bool, error) {
		pg.Total++
		if unscored {
			scored[sl.ItemID] = true
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
		if f.Q != "" {
			candidates = append(candidates, sl.ItemID)
			return true, nil
		}
		if pg.Matched >= lo && pg.Matched < hi {
			pageLines = append(pageLines, bytes.Clone(b))
		}
		pg.Matched++
		return true, nil
	})
	if errors.Is(err, store.ErrNotFound) {
		err = nil // not scored yet: every kept item is unscored
	}
	if err != nil {
		return nil, err
	}
	pg.Datasets, pg.Flags, pg.Sources = slices.Sorted(mapKeys(datasets)), slices.Sorted(mapKeys(flags)), slices.Sorted(mapKeys(sources))
	if unscored {
		return s.unscoredPage(ctx, pg, scored)
	}
	if f.Q != "" {
		ids, err := s.search(ctx, run, axis, candidates, f.Q)
		if err != nil {
			return nil, err
		}
		pg.Matched = len(ids)
		want := map[string]bool{}
		for _, id := range ids[min(lo, len(ids)):min(hi, len(ids))] {
			want[id] = true
		}
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
	scores := make([]scorers.ItemScore, len(pageLines))
	for i, b := range pageLines {
		if err := json.Unmarshal(b, &scores[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", axisScoresKey(run, axis), err)
		}
	}
	return s.fill(ctx, pg, scores, false)
}

// unscoredPage pages the kept items (the shards' items) that have no score
// under pg's filter.
func (s *Server) unscoredPage(ctx context.Context, pg *axisPage, scored map[string]bool) (*axisPage, error) {
	f := pg.Filter
	var ids []string
	if f.Flag == "" {
		var err error
		ids, err = keptItemIDs(ctx, s.st, pg.Run, pg.Axis)
		if err != nil {
			return nil, err
		}
		ids = slices.DeleteFunc(ids, func(id string) bool {
			return scored[id] || f.Dataset != "" && datasetOf(id) != f.Dataset
		})
		if f.Source != "" {
			ids = nil // unscored items carry no source in scores.jsonl; a source filter keeps none
		}
	}
	if f.Q != "" && len(ids) > 0 {
		var err error
		if ids, err = s.search(ctx, pg.Run, pg.Axis, ids, f.Q); err != nil {
			return nil, err
		}
	}
	pg.Matched = len(ids)
	lo, hi := f.Page*PageSize, (f.Page+1)*PageSize
	var scores []scorers.ItemScore
	for _, id := range ids[min(lo, len(ids)):min(hi, len(ids))] {
		scores = append(scores, scorers.ItemScore{ItemID: id})
	}
	return s.fill(ctx, pg, scores, true)
}

// fill sets pg's paging links and its items: scores joined with their
// items and predictions.
func (s *Server) fill(ctx context.Context, pg *axisPage, scores []scorers.ItemScore, unscored bool) (*axisPage, error) {
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
		v.Unscored = unscored
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: New(st), ReadHeaderTimeout: 10 * time.Second}
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
