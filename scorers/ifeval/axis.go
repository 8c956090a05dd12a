package ifeval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
)

// AxisVersion is bumped whenever a change can move an IF number.
const AxisVersion = "1"

// DefaultMaxTokens is the generation cap when the run config sets none.
const DefaultMaxTokens = 1024

// Axis is the IF (instruction following) axis plugin.
type Axis struct{}

// NewAxis returns the IF axis.
func NewAxis() scorers.Axis { return Axis{} }

func init() { scorers.RegisterAxis(scorers.AxisPlugin{Name: "if", Kind: "if", Order: 3, New: NewAxis}) }

func (Axis) Name() string       { return "if" }
func (Axis) Version() string    { return AxisVersion }
func (Axis) ScorerType() string { return scorers.ScorerRule }

// VerifiableLabel names the label the judge overlay is audited against.
// The axis has no audit rows of its own: its rating (the share of
// instructions followed) and its label (all followed) are one measurement.
func (Axis) VerifiableLabel() (string, string) {
	return "strict_pass", "every instruction of the prompt is followed (strict)"
}

// itemExtra is the IFEval payload carried in scorers.Item.Extra.
type itemExtra struct {
	Key            string           `json:"key"`
	Dialect        string           `json:"dialect"`
	InstructionIDs []string         `json:"instruction_id_list"`
	Kwargs         []map[string]any `json:"kwargs"`
}

// Load reads the axis's datasets: format "ifeval" (input_data.jsonl; lang
// labels the file's language, default "en"), "sea_ifeval" (lang keeps only
// that language's rows), or fields alone (format "if" or none; see package
// scorers/dataset: prompt, instruction_ids, kwargs, id, source, lang,
// register), any file format and source the dataset package reads; a
// preset's entries are replaced by the dataset's fields of the same name.
// Filter accepts "instruction_id" (keeps prompts with that id). Every
// instruction is validated here.
func (Axis) Load(cfg scorers.AxisConfig) ([]scorers.Item, error) {
	if len(cfg.Datasets) == 0 {
		return nil, errors.New("if axis: no datasets configured")
	}
	if len(cfg.Options) > 0 {
		keys := make([]string, 0, len(cfg.Options))
		for k := range cfg.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("if axis: unknown options %q (the axis has none)", keys)
	}
	var items []scorers.Item
	for _, ds := range cfg.Datasets {
		src := ds.Source(cfg.BaseDir)
		path := src.Path()
		if ds.Name == "" {
			return nil, fmt.Errorf("if axis: dataset %s: missing name", path)
		}
		for k := range ds.Filter {
			if k != "instruction_id" {
				return nil, fmt.Errorf("if axis: dataset %s: unknown filter field %q (only instruction_id)", ds.Name, k)
			}
		}
		pr, c, err := compilePreset(ds.Format, ds.Fields, ds.Lang)
		if err != nil {
			return nil, fmt.Errorf("if axis: dataset %s: %w", ds.Name, err)
		}
		keep := func(p Prompt) bool {
			id, ok := ds.Filter["instruction_id"]
			return !ok || contains(p.InstructionIDs, id)
		}
		each := func(header func(dataset.Columns) error, fn func(dataset.Row) error) error {
			return dataset.Each(context.Background(), src, header, fn)
		}
		prompts, err := readPrompts(each, path, c, pr, ds.Lang, ds.Limit, keep)
		if err != nil {
			return nil, fmt.Errorf("if axis: dataset %s: %w", ds.Name, err)
		}
		for _, p := range prompts {
			extra, err := json.Marshal(itemExtra{p.Key, p.Dialect, p.InstructionIDs, p.Kwargs})
			if err != nil {
				return nil, fmt.Errorf("if axis: dataset %s line %d: %w", ds.Name, p.Line, err)
			}
			source := p.Source
			if source == "" {
				source = ds.Name
			}
			items = append(items, scorers.Item{
				ID: ds.Name + "/" + p.Key, Axis: "if", Dataset: ds.Name, Line: p.Line,
				Source: source, Lang: p.Lang, Register: p.Register, Prompt: p.Text, Gold: -1, Extra: extra,
			})
		}
	}
	return items, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Predict generates the response: as one user chat turn when
// opt.ChatTemplate is "always", else the raw prompt.
func (Axis) Predict(ctx context.Context, b backends.Backend, it scorers.Item, opt scorers.PredictOptions) (scorers.Prediction, error) {
	req := backends.GenRequest{ID: it.ID, MaxTokens: opt.MaxTokens, Seed: opt.Seed}
	if req.MaxTokens <= 0 {
		req.MaxTokens = DefaultMaxTokens
	}
	if opt.ChatTemplate == "always" {
		req.Messages = []backends.Message{{Role: "user", Content: it.Prompt}}
	} else {
		req.Prompt = it.Prompt
	}
	gens, err := b.Generate(ctx, []backends.GenRequest{req})
	if err != nil {
		return scorers.Prediction{}, fmt.Errorf("if axis: item %s: %w", it.ID, err)
	}
	return scorers.Prediction{ItemID: it.ID, Generations: gens}, nil
}

// Score checks every response strictly and loosely. The headline is
// prompt-level strict accuracy with a percentile-bootstrap CI over prompts.
func (a Axis) Score(items []scorers.Item, preds []scorers.Prediction, opt scorers.ScoreOptions) (scorers.AxisResult, error) {
	t, err := a.Tally(opt)
	if err != nil {
		return scorers.AxisResult{Axis: "if", Version: AxisVersion, Metric: "prompt_level_strict_acc",
			ScorerType: scorers.ScorerRule, N: len(items)}, err
	}
	return scorers.ScoreAll(t, items, preds)
}

// Tally starts scoring the axis one shard at a time. The axis has no
// scoring options, so it cannot fail.
func (Axis) Tally(opt scorers.ScoreOptions) (scorers.Tally, error) {
	resamples := opt.BootstrapResamples
	if resamples <= 0 {
		resamples = 1000
	}
	return &tally{resamples: resamples, seed: uint64(opt.Seed)}, nil
}

// tally is the IF axis's scorers.Tally. Between shards it keeps the
// summary's counters, one float64 per prompt for the bootstrap and the
// truncation count; the outcomes themselves are dropped after each shard.
type tally struct {
	resamples int
	seed      uint64
	summary   Summarizer
	strict    []float64 // 1 when the prompt followed every instruction strictly, in the order added
	truncated int
}

// Add checks a shard's responses and returns their item scores. The shard
// is counted only once every item in it has been checked, so an error
// leaves the tally as it was.
func (t *tally) Add(items []scorers.Item, preds []scorers.Prediction) ([]scorers.ItemScore, error) {
	if len(preds) != len(items) {
		return nil, fmt.Errorf("if axis: %d predictions for %d items", len(preds), len(items))
	}
	outcomes := make([]Outcome, len(items))
	scores := make([]scorers.ItemScore, len(items))
	truncated := 0
	for i, it := range items {
		if preds[i].ItemID != "" && preds[i].ItemID != it.ID {
			return nil, fmt.Errorf("if axis: prediction %d is for item %s, want %s", i, preds[i].ItemID, it.ID)
		}
		var ex itemExtra
		if err := json.Unmarshal(it.Extra, &ex); err != nil {
			return nil, fmt.Errorf("if axis: item %s: extra: %w", it.ID, err)
		}
		p := Prompt{Key: ex.Key, Line: it.Line, Text: it.Prompt, Lang: it.Lang, Dialect: ex.Dialect,
			InstructionIDs: ex.InstructionIDs, Kwargs: ex.Kwargs}
		checkers, err := p.Checkers()
		if err != nil {
			return nil, fmt.Errorf("if axis: item %s: %w", it.ID, err)
		}
		response, flag := "", ""
		switch pr := preds[i]; {
		case pr.Error != "" || pr.Unsupported || len(pr.Generations) == 0:
			flag = "no_output"
		default:
			response = pr.Generations[0].Text
			if pr.Generations[0].Truncated() {
				flag = "truncated"
				truncated++
			}
		}
		o := Check(p, checkers, response)
		o.Lang = it.Lang
		outcomes[i] = o
		followed := 0
		for _, s := range o.Strict {
			if s {
				followed++
			}
		}
		strict := 0.0
		if o.FollowAllStrict() {
			strict = 1
		}
		scores[i] = scorers.ItemScore{
			ItemID: it.ID, Source: it.Source, Lang: it.Lang, Score: strict,
			Rating: float64(followed) / float64(len(o.Strict)), Label: o.FollowAllStrict(), Flagged: flag,
			Fields: map[string]any{
				"instruction_id_list": o.InstructionIDs, "strict": o.Strict, "loose": o.Loose,
				"follow_all_loose": o.FollowAllLoose(),
			},
		}
	}
	for i, o := range outcomes {
		t.summary.Add(o)
		t.strict = append(t.strict, scores[i].Score)
	}
	t.truncated += truncated
	return scores, nil
}

// Result summarises every shard added.
func (t *tally) Result() (scorers.AxisResult, error) {
	n := len(t.strict)
	res := scorers.AxisResult{Axis: "if", Version: AxisVersion, Metric: "prompt_level_strict_acc",
		ScorerType: scorers.ScorerRule, N: n}
	if n == 0 {
		res.Notes = append(res.Notes, "no items scored")
		return res, nil
	}
	sum := t.summary.Result()
	headline := sum.PromptStrict
	res.Score = &headline
	res.TruncationRate = float64(t.truncated) / float64(n)
	scorers.WarnTruncation(&res)
	if ci, err := scorers.HeadlineCI(res.Metric, len(t.strict), func(i int) scorers.ItemScore {
		return scorers.ItemScore{Score: t.strict[i]}
	}, t.resamples, t.seed); err == nil {
		res.CI95 = ci
	}
	res.Secondary = map[string]any{
		"prompt_level_strict_acc": sum.PromptStrict,
		"inst_level_strict_acc":   sum.InstStrict,
		"prompt_level_loose_acc":  sum.PromptLoose,
		"inst_level_loose_acc":    sum.InstLoose,
		"instructions":            sum.Instructions,
		"per_instruction":         sum.PerInstruction,
		"per_category":            sum.PerCategory,
		"per_language":            sum.PerLanguage,
	}
	res.Notes = append(res.Notes,
		"language checks use a Go port of python-langdetect 1.0.9 with seed 0",
		"keywords:letter_frequency naming a non-letter checks a letter drawn from a seed fixed per prompt")
	for lang := range sum.PerLanguage {
		if lang != "en" {
			res.Notes = append(res.Notes, "non-English prompts are checked with IFEval's rules (sentence and word counts are English Punkt/NLTK)")
			break
		}
	}
	if t.truncated > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d of %d responses hit the token cap", t.truncated, n))
	}
	return res, nil
}
