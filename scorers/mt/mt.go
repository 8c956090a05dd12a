// Package mt is the MT axis (spec §1): MT-Bench's open-ended two-turn
// questions, the conversation carried across turns through the backend's chat
// API, each turn rated 0–10 by the judge ensemble with FastChat's
// single-answer prompts (reference answers for math, reasoning and coding).
// There is no ground truth: the headline is mean_judge_score_normalized, the
// mean rating / 10 over items with a bootstrap CI. A Malay configuration is
// the same mechanism on a Malay question file in the same format.
package mt

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/judge"
)

// Version changes whenever a change can move a number.
const Version = "mt-1.0"

// Dataset formats.
const (
	FormatQuestions  = "mt_bench"           // question.jsonl: question_id, category, turns[, reference]
	FormatReferences = "mt_bench_reference" // reference_answer/<model>.jsonl: question_id, choices[0].turns
)

// DefaultReferenceFile is read next to a question file when no
// mt_bench_reference dataset is configured, as FastChat lays them out.
const DefaultReferenceFile = "reference_answer_gpt-4.jsonl"

// needRef are the categories FastChat judges against a reference answer (NEED_REF_CATS).
var needRef = map[string]bool{"math": true, "reasoning": true, "coding": true}

// Options under axes.mt.options.
const (
	OptFloor = judge.OptFloor // items below it are low_conf; default judge.DefaultFloor
)

// Axis is the MT plugin.
type Axis struct{}

// New returns the MT axis.
func New() *Axis { return &Axis{} }

func init() {
	scorers.RegisterAxis(scorers.AxisPlugin{Name: "mt", Kind: "mt", Order: 5, New: func() scorers.Axis { return New() }})
}

func (Axis) Name() string       { return "mt" }
func (Axis) Version() string    { return Version }
func (Axis) ScorerType() string { return scorers.ScorerJudge }

// ModelUse: the turns are chat messages.
func (Axis) ModelUse(cfg scorers.AxisConfig) scorers.ModelUse {
	return scorers.ModelUse{Chat: true}
}

// extra is the MT payload of an item.
type extra struct {
	QuestionID int    `json:"question_id"`
	ID         string `json:"id,omitempty"` // an id that is not a number
	Category   string `json:"category"`
	NeedsRef   bool   `json:"needs_ref,omitempty"`
}

// Load reads the question files (format mt_bench, a preset of the
// declarative mechanism, or fields alone: id, turns, category,
// references, source, lang, register) and joins reference answers by
// question id.
func (a *Axis) Load(cfg scorers.AxisConfig) ([]scorers.Item, error) {
	if _, err := judge.FloorOption(cfg.Options, nil); err != nil {
		return nil, fmt.Errorf("axes.mt.%w", err)
	}
	var questions, refs []scorers.DatasetConfig
	for i, d := range cfg.Datasets {
		switch {
		case d.Format == FormatQuestions, d.Fields != nil && (d.Format == "" || d.Format == "mt"):
			questions = append(questions, d)
		case d.Format == FormatReferences && d.Fields == nil && d.Source("").IsSet():
			return nil, fmt.Errorf("axes.mt.datasets[%d] (%s): the %s format reads one file; config and split name a Hub dataset's Parquet files (give the references as fields of the questions' entry)", i, d.Name, FormatReferences)
		case d.Format == FormatReferences && d.Fields == nil:
			refs = append(refs, d)
		case d.Format == FormatReferences:
			return nil, fmt.Errorf("axes.mt.datasets[%d] (%s): the %s format takes no fields", i, d.Name, FormatReferences)
		default:
			return nil, fmt.Errorf("axes.mt.datasets[%d] (%s): unknown format %q (known: %s, %s, or mt with fields)", i, d.Name, d.Format, FormatQuestions, FormatReferences)
		}
	}
	if len(questions) == 0 {
		return nil, fmt.Errorf("axes.mt.datasets: no question file configured (format %s, or mt with fields)", FormatQuestions)
	}
	refAns := map[string][]string{}
	for _, d := range refs {
		if err := readReferences(resolve(d.Path, cfg.BaseDir), d.SHA256, refAns); err != nil {
			return nil, err
		}
	}
	var items []scorers.Item
	seen := map[string]bool{}
	for _, d := range questions {
		path := resolve(d.Path, cfg.BaseDir)
		if len(refs) == 0 && d.Format == FormatQuestions {
			// FastChat's layout: the reference answers beside the questions.
			sib := filepath.Join(filepath.Dir(path), DefaultReferenceFile)
			if _, err := os.Stat(sib); err == nil {
				if err := readReferences(sib, "", refAns); err != nil {
					return nil, err
				}
			}
		}
		its, err := readQuestions(d.Source(cfg.BaseDir), d, refAns)
		if err != nil {
			return nil, err
		}
		for _, it := range its {
			if seen[it.ID] {
				return nil, fmt.Errorf("%s:%d: duplicate item id %q", path, it.Line, it.ID)
			}
			seen[it.ID] = true
		}
		items = append(items, its...)
	}
	return items, nil
}

func resolve(p, base string) string {
	return dataset.Source{URI: p, BaseDir: base}.Path()
}

// eachLine calls fn on every non-empty line of a JSONL file (local, s3://
// or hf://, plain or compressed, pinned when pin is set), with its number.
func eachLine(path, pin string, fn func(line int, data []byte) error) error {
	f, err := dataset.Open(context.Background(), dataset.Source{URI: path, SHA256: pin})
	if err != nil {
		return err
	}
	defer f.Close()
	return dataset.EachLine(f, path, func(line int, b []byte) error {
		if err := fn(line, b); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		return nil
	})
}

func readReferences(path, pin string, into map[string][]string) error {
	return eachLine(path, pin, func(_ int, data []byte) error {
		if err := dataset.CheckJSON(data); err != nil {
			return err
		}
		var row struct {
			QuestionID *int `json:"question_id"`
			Choices    []struct {
				Turns []string `json:"turns"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &row); err != nil {
			return fmt.Errorf("invalid JSON: %v", err)
		}
		if row.QuestionID == nil {
			return fmt.Errorf("field question_id: missing")
		}
		if len(row.Choices) == 0 || len(row.Choices[0].Turns) == 0 {
			return fmt.Errorf("field choices[0].turns: missing or empty")
		}
		into[strconv.Itoa(*row.QuestionID)] = row.Choices[0].Turns
		return nil
	})
}

// Presets are the built-in question formats as mappings of the
// declarative mechanism (dataset.Kinds "mt"); a dataset's fields replace
// a preset's entries of the same name, and fields alone (format mt or
// none) declare a question file.
var Presets = map[string]dataset.Mapping{
	// FastChat's question.jsonl: question_id, category, turns[, reference].
	FormatQuestions: {ID: "question_id", Category: "category", Turns: "turns", References: "reference?", Lang: `{{or datasetLang "en"}}`},
}

// compile is the mapping a question dataset reads.
func compile(d scorers.DatasetConfig) (*dataset.Compiled, error) {
	m, ok := Presets[d.Format]
	if !ok {
		// Fields alone: MT-Bench itself is English.
		m = dataset.Mapping{Lang: `{{or datasetLang "en"}}`}
	}
	if d.Fields != nil {
		m = dataset.Merge(m, *d.Fields)
	}
	return m.Compile("mt", dataset.Env{Lang: d.Lang})
}

// readQuestions reads one question dataset through its mapping (any file
// format and source the dataset package reads). Every error names the
// file, the line and the field.
func readQuestions(src dataset.Source, d scorers.DatasetConfig, refAns map[string][]string) ([]scorers.Item, error) {
	path := src.Path()
	name := d.Name
	if name == "" {
		name = src.Name()
	}
	c, err := compile(d)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", name, err)
	}
	var items []scorers.Item
	stop := errors.New("limit")
	header := func(cols dataset.Columns) error { return c.CheckColumns(path, cols) }
	err = dataset.Each(context.Background(), src, header, func(r dataset.Row) error {
		it, keep, err := questionFromRow(c, r, name, d.Filter, refAns)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, r.Line, err)
		}
		if keep {
			items = append(items, it)
		}
		if d.Limit > 0 && len(items) == d.Limit {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return items, nil
}

// questionFromRow turns one row into an item; keep is false for a row the
// filter drops. Reference answers (from a reference file, else the row's
// own) are kept for the categories FastChat judges against one.
func questionFromRow(c *dataset.Compiled, r dataset.Row, name string, filter map[string]string, refAns map[string][]string) (scorers.Item, bool, error) {
	m := c.Mapping()
	got := map[string]string{}
	for _, key := range []string{"id", "category", "source", "lang", "register"} {
		s, _, err := c.String(key, r)
		if err != nil {
			return scorers.Item{}, false, err
		}
		got[key] = s
	}
	if got["id"] == "" {
		return scorers.Item{}, false, fmt.Errorf("field %s: missing", m.ID)
	}
	if got["category"] == "" {
		return scorers.Item{}, false, fmt.Errorf("field %s: missing", m.Category)
	}
	switch got["register"] {
	case "", "HIGH", "MID", "LOW":
	default:
		return scorers.Item{}, false, fmt.Errorf("field %s: register must be HIGH, MID or LOW, got %q", m.Register, got["register"])
	}
	turns, _, err := c.Strings("turns", r)
	if err != nil {
		return scorers.Item{}, false, err
	}
	if len(turns) == 0 {
		return scorers.Item{}, false, fmt.Errorf("field %s: missing or empty", m.Turns)
	}
	for i, t := range turns {
		if strings.TrimSpace(t) == "" {
			return scorers.Item{}, false, fmt.Errorf("field %s[%d]: empty", m.Turns, i)
		}
	}
	for k, v := range filter {
		if k != "category" {
			return scorers.Item{}, false, fmt.Errorf("filter.%s: the MT axis filters on category only", k)
		}
		if got["category"] != v {
			return scorers.Item{}, false, nil
		}
	}
	id := got["id"]
	ex := extra{Category: got["category"]}
	if n, err := strconv.Atoi(id); err == nil {
		ex.QuestionID = n
	} else {
		ex.ID = id
	}
	var refs []string
	if needRef[ex.Category] {
		refs = refAns[id]
		if refs == nil {
			if refs, _, err = c.Strings("references", r); err != nil {
				return scorers.Item{}, false, err
			}
		}
		ex.NeedsRef = len(refs) > 0
	}
	// Source is the dataset: MT-Bench is one pool, and its category is a
	// breakdown, not a source the leakage audit should weigh.
	source := got["source"]
	source = cmp.Or(source, name)
	raw, _ := json.Marshal(ex)
	return scorers.Item{
		ID: name + "/" + id, Axis: "mt", Dataset: name, Line: r.Line,
		Source: source, Lang: got["lang"], Register: got["register"], Prompt: strings.Join(turns, "\n\n"), Gold: -1,
		Turns: turns, References: refs, Extra: raw,
	}, true, nil
}

// DefaultMaxTokens caps each turn's answer when the config sets none.
const DefaultMaxTokens = 1024

// Predict carries the conversation across the turns through the backend's
// chat API: one Generate call per turn, each seeing the earlier answers.
func (a *Axis) Predict(ctx context.Context, b backends.Backend, it scorers.Item, opt scorers.PredictOptions) (scorers.Prediction, error) {
	p := scorers.Prediction{ItemID: it.ID}
	maxTok := opt.MaxTokens
	if maxTok <= 0 {
		maxTok = DefaultMaxTokens
	}
	var msgs []backends.Message
	for t, q := range it.Turns {
		msgs = append(msgs, backends.Message{Role: "user", Content: q})
		req := backends.GenRequest{ID: fmt.Sprintf("%s#t%d", it.ID, t+1), Messages: slices.Clone(msgs), MaxTokens: maxTok, Seed: opt.Seed}
		gens, err := b.Generate(ctx, []backends.GenRequest{req})
		if err != nil {
			return p, fmt.Errorf("turn %d: %w", t+1, err)
		}
		if len(gens) != 1 {
			return p, fmt.Errorf("turn %d: backend returned %d generations", t+1, len(gens))
		}
		p.Generations = append(p.Generations, gens[0])
		msgs = append(msgs, backends.Message{Role: "assistant", Content: gens[0].Text})
	}
	return p, nil
}

// JudgeRequests asks for a rating of every turn of every answered item: turn
// t shows the judge the conversation up to t (FastChat's single-v1 for the
// first turn, single-v1-multi-turn after), with the reference answers where
// the category needs them.
func (a *Axis) JudgeRequests(items []scorers.Item, preds []scorers.Prediction) []judge.Request {
	var out []judge.Request
	for i, it := range items {
		if i >= len(preds) || preds[i].ItemID != it.ID || len(preds[i].Generations) < len(it.Turns) {
			continue
		}
		answers := make([]string, len(it.Turns))
		for t := range it.Turns {
			answers[t] = preds[i].Generations[t].Text
		}
		var ex extra
		_ = json.Unmarshal(it.Extra, &ex)
		for t := range it.Turns {
			r := judge.Request{ItemID: it.ID, Lang: it.Lang, Turn: t + 1, Question: it.Turns[:t+1], Answer: answers[:t+1], Kind: judge.KindRating}
			if ex.NeedsRef {
				refs := make([]string, t+1)
				copy(refs, it.References)
				r.References = refs
			}
			out = append(out, r)
		}
	}
	return out
}

// Score reads each prediction's judge ratings (Variants["judge"]): a turn's
// score is the ensemble's mean rating, an item's the mean of its rated turns
// divided by 10. Items no judge rated validly are counted, never scored 0.
// It is scorers.ScoreAll over the axis's Tally.
func (a *Axis) Score(items []scorers.Item, preds []scorers.Prediction, opt scorers.ScoreOptions) (scorers.AxisResult, error) {
	t, err := a.Tally(opt)
	if err != nil {
		return scorers.AxisResult{Axis: "mt", Version: Version, ScorerType: scorers.ScorerJudge, Metric: "mean_judge_score_normalized"}, err
	}
	return scorers.ScoreAll(t, items, preds)
}

// Tally scores the axis one shard at a time, as Score does whole; a bad
// agreement floor is an error here.
func (a *Axis) Tally(opt scorers.ScoreOptions) (scorers.Tally, error) {
	floor, err := judge.FloorOption(opt.Options, opt.JudgeFloor)
	if err != nil {
		return nil, fmt.Errorf("axes.mt.%w", err)
	}
	resamples := opt.BootstrapResamples
	if resamples <= 0 {
		resamples = 1000
	}
	return &tally{
		floor: floor, resamples: resamples, seed: uint64(opt.Seed),
		byTurn: map[int]*runningMean{}, byCat: map[string]*runningMean{}, judges: map[string]bool{},
	}, nil
}

// tally is the MT scoring state between shards: item scores for the mean,
// the bootstrap and the win rate, running means per turn and category, the
// low_conf ids the result publishes, counters, and the judges' agreement
// counts for κ.
type tally struct {
	floor     float64
	resamples int
	seed      uint64

	scores  []float64 // scored items' scores, in the order the items were added
	byTurn  map[int]*runningMean
	byCat   map[string]*runningMean
	lowConf []string
	judges  map[string]bool // every judge seen, for the result
	// kappa counts the judges' agreement turn by turn; it keeps a confusion
	// matrix per pair of judges, not the ratings.
	kappa judge.KappaTally

	added                        int // items added, for error messages that count across shards
	unrated, parseFail, dropped  int
	gens, truncated, judgedTurns int
}

// runningMean sums values in the order they come, so its mean is bit for bit
// the mean of the same values held in a slice.
type runningMean struct {
	n   int
	sum float64
}

func (m *runningMean) add(v float64) { m.n++; m.sum += v }

// Add scores one shard. It checks the whole shard before counting any of it,
// so a shard that is an error leaves the tally as it was.
func (t *tally) Add(items []scorers.Item, preds []scorers.Prediction) ([]scorers.ItemScore, error) {
	if len(items) != len(preds) {
		return nil, fmt.Errorf("mt: %d items but %d predictions", len(items), len(preds))
	}
	ratings := make([][]judge.Rating, len(items))
	for i, it := range items {
		if preds[i].ItemID != it.ID {
			return nil, fmt.Errorf("mt: prediction %d is for %q, want %q", t.added+i, preds[i].ItemID, it.ID)
		}
		rs, err := judge.FromPrediction(preds[i])
		if err != nil {
			return nil, err
		}
		ratings[i] = rs
	}
	t.added += len(items)
	var out []scorers.ItemScore
	for i, it := range items {
		for _, g := range preds[i].Generations {
			t.gens++
			if g.Truncated() {
				t.truncated++
			}
		}
		turns, tg := judge.ByTurn(ratings[i], judge.KindRating)
		aggs := judge.Aggregate(tg, t.floor)
		for _, g := range tg {
			t.kappa.Add(g)
			for _, r := range g {
				if !t.judges[r.Judge] {
					t.judges[strings.Clone(r.Judge)] = true
				}
			}
		}
		var ex extra
		_ = json.Unmarshal(it.Extra, &ex)
		s := scorers.ItemScore{ItemID: it.ID, Source: it.Source, Lang: it.Lang, Fields: map[string]any{"category": ex.Category}}
		var sum float64
		var n int
		minAgree := 1.0
		low := false
		for k, ag := range aggs {
			t.parseFail += ag.ParseFail
			t.dropped += ag.Dropped
			if ag.Score == nil {
				continue
			}
			t.judgedTurns++
			v := *ag.Score / 10
			s.Fields[fmt.Sprintf("turn%d", turns[k])] = v
			meanAt(t.byTurn, turns[k]).add(v)
			sum += v
			n++
			minAgree = min(minAgree, *ag.Agreement)
			low = low || ag.LowConf
		}
		if n == 0 {
			t.unrated++
			continue
		}
		s.Score = sum / float64(n)
		s.Rating = s.Score
		s.Label = s.Score > 0.5
		s.Fields["agreement"] = minAgree
		if low {
			s.Flagged = "low_conf"
			t.lowConf = append(t.lowConf, strings.Clone(it.ID))
		}
		t.scores = append(t.scores, s.Score)
		meanAt(t.byCat, ex.Category).add(s.Score)
		out = append(out, s)
	}
	return out, nil
}

// meanAt returns m's running mean for key, creating it on first use.
func meanAt[K comparable](m map[K]*runningMean, key K) *runningMean {
	if m[key] == nil {
		m[key] = &runningMean{}
	}
	return m[key]
}

// Result is the axis result over every shard added.
func (t *tally) Result() (scorers.AxisResult, error) {
	r := scorers.AxisResult{Axis: "mt", Version: Version, ScorerType: scorers.ScorerJudge, Metric: "mean_judge_score_normalized"}
	r.N = len(t.scores)
	if t.gens > 0 {
		r.TruncationRate = float64(t.truncated) / float64(t.gens)
		scorers.WarnTruncation(&r)
	}
	if t.unrated > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d items had no valid judge rating and are not scored", t.unrated))
	}
	if len(t.scores) == 0 {
		if t.parseFail+t.dropped == 0 {
			r.Metric = "skipped_no_judge"
			r.Notes = append(r.Notes, "no item carries a judge rating: MT needs at least one judge")
			return r, nil
		}
		// Judges were asked and none answered in the rating schema: say so
		// and keep the counts, so the failure is not read as "no judge".
		r.Notes = append(r.Notes, fmt.Sprintf("no valid judge rating: every judge reply failed to parse (%d parse_fail) or was dropped (%d) from %s; MT has no score", t.parseFail, t.dropped, strings.Join(sortedKeys(t.judges), ", ")))
		r.Secondary = map[string]any{"parse_fail": t.parseFail, "judge_dropped": t.dropped, "judges": sortedKeys(t.judges), "agreement_floor": t.floor}
		return r, nil
	}
	mean := meanOf(t.scores)
	r.Score = &mean
	if ci, err := scorers.HeadlineCI(r.Metric, len(t.scores), func(i int) scorers.ItemScore {
		return scorers.ItemScore{Score: t.scores[i]}
	}, t.resamples, t.seed); err == nil {
		r.CI95 = ci
	}
	sec := map[string]any{
		"weighted_win_rate": WinRate(t.scores),
		"by_turn":           meansByKey(t.byTurn),
		"by_category":       meansByKey(t.byCat),
		"low_conf_items":    nonNil(slices.Clone(t.lowConf)),
		"agreement_floor":   t.floor,
		"judged_turns":      t.judgedTurns,
		"parse_fail":        t.parseFail,
		"judge_dropped":     t.dropped,
		"judges":            sortedKeys(t.judges),
	}
	k := t.kappa.Report()
	sec["inter_judge_kappa"] = k.Mean
	sec["inter_judge_kappa_pairs"] = k.Pairs
	sec["inter_judge_kappa_weights"] = k.Weights
	r.Secondary = sec
	if len(t.lowConf) > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d items below the agreement floor %.2f are flagged low_conf (secondary.low_conf_items)", len(t.lowConf), t.floor))
	}
	return r, nil
}

// WinRate is the legacy weighted_win_rate: the share of item scores above the
// 5/10 threshold, an item exactly at it counting half.
func WinRate(normalized []float64) float64 {
	if len(normalized) == 0 {
		return 0
	}
	var w float64
	for _, s := range normalized {
		switch {
		case s > 0.5:
			w++
		case s == 0.5:
			w += 0.5
		}
	}
	return w / float64(len(normalized))
}

// Group is one breakdown cell.
type Group struct {
	N     int     `json:"n"`
	Score float64 `json:"score"`
}

func meansByKey[K comparable](m map[K]*runningMean) map[string]Group {
	out := map[string]Group{}
	for k, v := range m {
		out[fmt.Sprint(k)] = Group{N: v.n, Score: v.sum / float64(v.n)}
	}
	return out
}

func meanOf(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
