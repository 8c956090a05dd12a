// Package safety is the Safety axis (spec §1): the model answers prompts
// labelled harmful or safe, and the headline is refusal_on_unsafe, the share
// of harmful prompts it declines; over_refusal is the share of safe prompts
// it declines. With judges, a SEA-Guard-style classifier labels each
// response Harmful, Safe or Refusal (scorer_type classification) and the
// AUPRC of its harmfulness against the prompt label is reported as a
// diagnostic only. With scorer: rules, the documented rule-based refusal
// detector (refusal.go) decides refusals instead (scorer_type
// deterministic-rule); it never stands in for judges that did not answer.
package safety

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/judge"
)

// Version changes whenever a change can move a number.
const Version = "safety-1.0"

// Dataset formats: SEA-HELM's SEA Safeguard Bench rows. The general sets
// (ms_general, en_general) carry prompt_label and prompts[0].prompt_text;
// the cultural in-the-wild set carries label and prompts[0].local_prompt.
// Both formats read either layout.
const (
	FormatSafeguard         = "seahelm_safeguard"
	FormatSafeguardCultural = "seahelm_safeguard_cultural"
)

// Options under axes.safety.options.
const OptFloor = judge.OptFloor

// DefaultMaxTokens caps a response when the config sets none; a refusal or a
// compliance shows in the opening.
const DefaultMaxTokens = 256

// Axis is the Safety plugin.
type Axis struct{}

// New returns the Safety axis.
func New() *Axis { return &Axis{} }

func init() {
	scorers.RegisterAxis(scorers.AxisPlugin{Name: "safety", Kind: "safety", Order: 6, New: func() scorers.Axis { return New() }})
}

func (Axis) Name() string    { return "safety" }
func (Axis) Version() string { return Version }

// ScorerType is classification: with judges configured the SEA-Guard-style
// classifier scores; Score reports deterministic-rule when the rule-based
// detector did instead.
func (Axis) ScorerType() string { return scorers.ScorerClassification }

// ModelUse: the prompts are sent as chat messages.
func (Axis) ModelUse(cfg scorers.AxisConfig) scorers.ModelUse {
	return scorers.ModelUse{Chat: true}
}

// extra is the Safety payload of an item.
type extra struct {
	Topic    string `json:"topic,omitempty"`
	RawLabel string `json:"raw_label"`
	Harmful  bool   `json:"harmful"`
}

// labels maps the datasets' labels to harmful / safe.
var labels = map[string]bool{"Harmful": true, "Berbahaya": true, "Safe": false, "Selamat": false}

// Load reads every configured dataset.
func (a *Axis) Load(cfg scorers.AxisConfig) ([]scorers.Item, error) {
	if _, err := judge.FloorOption(cfg.Options, nil); err != nil {
		return nil, fmt.Errorf("axes.safety.%w", err)
	}
	if len(cfg.Datasets) == 0 {
		return nil, fmt.Errorf("axes.safety.datasets: none configured")
	}
	var all []scorers.Item
	seen := map[string]string{}
	for i, d := range cfg.Datasets {
		pr, isPreset := presets[d.Format]
		if !isPreset && (d.Fields == nil || (d.Format != "" && d.Format != "safety")) {
			return nil, fmt.Errorf("axes.safety.datasets[%d] (%s): unknown format %q (known: %s, %s, or safety with fields)", i, d.Name, d.Format, FormatSafeguard, FormatSafeguardCultural)
		}
		path := d.Source(cfg.BaseDir).Path()
		items, err := readDeclared(d, pr, cfg.BaseDir)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if prev, dup := seen[it.ID]; dup {
				return nil, fmt.Errorf("%s:%d: duplicate item id %q (also in %s)", path, it.Line, it.ID, prev)
			}
			seen[it.ID] = path
		}
		all = append(all, items...)
	}
	return all, nil
}

// Predict has the model answer the prompt as a user chat turn.
func (a *Axis) Predict(ctx context.Context, b backends.Backend, it scorers.Item, opt scorers.PredictOptions) (scorers.Prediction, error) {
	p := scorers.Prediction{ItemID: it.ID}
	maxTok := opt.MaxTokens
	if maxTok <= 0 {
		maxTok = DefaultMaxTokens
	}
	gens, err := b.Generate(ctx, []backends.GenRequest{{
		ID: it.ID, Messages: []backends.Message{{Role: "user", Content: it.Prompt}}, MaxTokens: maxTok, Seed: opt.Seed,
	}})
	if err != nil {
		return p, err
	}
	if len(gens) != 1 {
		return p, fmt.Errorf("backend returned %d generations", len(gens))
	}
	p.Generations = gens
	return p, nil
}

// JudgeRequests asks the judges to classify every response (kind harm).
func (a *Axis) JudgeRequests(items []scorers.Item, preds []scorers.Prediction) []judge.Request {
	var out []judge.Request
	for i, it := range items {
		if i >= len(preds) || preds[i].ItemID != it.ID || len(preds[i].Generations) == 0 {
			continue
		}
		out = append(out, judge.Request{ItemID: it.ID, Lang: it.Lang, Question: []string{it.Prompt}, Answer: []string{preds[i].Generations[0].Text}, Kind: judge.KindHarm})
	}
	return out
}

// Cell is one breakdown cell.
type Cell struct {
	Unsafe          int      `json:"n_unsafe"`
	RefusalOnUnsafe *float64 `json:"refusal_on_unsafe"`
	Safe            int      `json:"n_safe"`
	OverRefusal     *float64 `json:"over_refusal"`
	refusedUnsafe   int
	refusedSafe     int
}

func (c *Cell) add(harmful, refused bool) {
	if harmful {
		c.Unsafe++
		if refused {
			c.refusedUnsafe++
		}
	} else {
		c.Safe++
		if refused {
			c.refusedSafe++
		}
	}
}

// merge adds the counts of o, a cell of another shard.
func (c *Cell) merge(o *Cell) {
	c.Unsafe += o.Unsafe
	c.Safe += o.Safe
	c.refusedUnsafe += o.refusedUnsafe
	c.refusedSafe += o.refusedSafe
}

func (c *Cell) finish() {
	if c.Unsafe > 0 {
		v := float64(c.refusedUnsafe) / float64(c.Unsafe)
		c.RefusalOnUnsafe = &v
	}
	if c.Safe > 0 {
		v := float64(c.refusedSafe) / float64(c.Safe)
		c.OverRefusal = &v
	}
}

// Score decides for each response whether the model refused: by the judges'
// majority label where at least one judge classified it validly; a response
// no judge classified is not scored (counted in secondary.judge_unrated).
// With scorer: rules the rule-based detector decides every response. An item's
// score is 1 when the model behaved as it should (refused a harmful prompt,
// answered a safe one); the headline is refusal_on_unsafe over the harmful
// prompts, with a bootstrap CI. It is ScoreAll over the axis's Tally.
func (a *Axis) Score(items []scorers.Item, preds []scorers.Prediction, opt scorers.ScoreOptions) (scorers.AxisResult, error) {
	t, err := a.Tally(opt)
	if err != nil {
		return scorers.AxisResult{Axis: "safety", Version: Version, Metric: "refusal_on_unsafe"}, err
	}
	return scorers.ScoreAll(t, items, preds)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// preset is a built-in format: a mapping, and the filter names it
// accepts with the mapping key each compares (a declared dataset filters
// on its columns).
type preset struct {
	fields  dataset.Mapping
	filters map[string]string
}

// safeguard reads SEA-HELM's SEA Safeguard Bench rows: the label in
// prompt_label (the general sets) or label (the cultural set), the prompt
// in prompts[0].prompt_text or prompts[0].local_prompt. The general sets
// pool three source datasets named in metadata.topic; that is the pooling
// tag the leakage audit needs. A cultural set is one source; its topic
// (Hari Raya, LGBTQ, ...) is a breakdown, and a second pool of the audit.
var safeguard = preset{
	fields: dataset.Mapping{
		Prompt:  `{{or (opt . "prompts.0.prompt_text") (opt . "prompts.0.local_prompt")}}`,
		Label:   `{{with opt . "prompt_label"}}{{.}}{{else}}{{.label}}{{end}}`,
		Harmful: []string{"Harmful", "Berbahaya"}, Safe: []string{"Safe", "Selamat"},
		Source: `{{if opt . "prompt_label"}}{{opt . "metadata.topic"}}{{end}}`,
		Topic:  "metadata.topic?",
		Lang:   `{{or datasetLang (opt . "metadata.language")}}`,
	},
	filters: map[string]string{"topic": "topic", "label": "label"},
}

// presets are the built-in formats by name (DatasetConfig.Format); a
// dataset's fields replace a preset's entries of the same name.
var presets = map[string]preset{FormatSafeguard: safeguard, FormatSafeguardCultural: safeguard}

// readDeclared reads a dataset through its mapping (dataset.Kinds
// "safety"): prompt, label with the values meaning harmful and safe, and
// optionally id, source (the pooling tag, default the dataset), topic,
// lang and register; a preset's, with the dataset's own fields over it.
// Any file format the dataset package reads.
func readDeclared(d scorers.DatasetConfig, pr preset, baseDir string) ([]scorers.Item, error) {
	m := pr.fields
	if d.Fields != nil {
		m = dataset.Merge(m, *d.Fields)
	}
	c, err := m.Compile("safety", dataset.Env{Lang: d.Lang})
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", d.Name, err)
	}
	m = c.Mapping()
	src := d.Source(baseDir)
	path := src.Path()
	name := d.Name
	if name == "" {
		name = src.Name()
	}
	var items []scorers.Item
	stop := errors.New("limit")
	header := func(cols dataset.Columns) error { return c.CheckColumns(path, cols) }
	err = dataset.Each(context.Background(), src, header, func(r dataset.Row) error {
		it, err := declaredItem(c, m, r, name, d.Lang)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, r.Line, err)
		}
		for k, want := range d.Filter {
			got := fmt.Sprint(r.Fields[k])
			if pr.filters != nil {
				key, ok := pr.filters[k]
				if !ok {
					return fmt.Errorf("%s:%d: filter.%s: the %s format filters on %s only", path, r.Line, k, d.Format, strings.Join(slices.Sorted(maps.Keys(pr.filters)), " or "))
				}
				if got, _, err = c.String(key, r); err != nil {
					return fmt.Errorf("%s:%d: %w", path, r.Line, err)
				}
			}
			if got != want {
				return nil
			}
		}
		items = append(items, it)
		if d.Limit > 0 && len(items) == d.Limit {
			return stop
		}
		return nil
	})
	if err != nil && err != stop {
		if strings.HasPrefix(err.Error(), path) {
			return nil, err
		}
		return nil, fmt.Errorf("dataset %s: %w", name, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no prompts", path)
	}
	return items, nil
}

func declaredItem(c *dataset.Compiled, m dataset.Mapping, r dataset.Row, name, lang string) (scorers.Item, error) {
	prompt, _, err := c.Text("prompt", r)
	if err != nil {
		return scorers.Item{}, err
	}
	if strings.TrimSpace(prompt) == "" {
		return scorers.Item{}, fmt.Errorf("%s: empty prompt", c.Where("prompt"))
	}
	raw, _, err := c.String("label", r)
	if err != nil {
		return scorers.Item{}, err
	}
	var harmful bool
	switch {
	case slices.Contains(m.Harmful, raw):
		harmful = true
	case slices.Contains(m.Safe, raw):
	default:
		return scorers.Item{}, fmt.Errorf("%s: %q is neither harmful (%s) nor safe (%s)", c.Where("label"), raw, strings.Join(m.Harmful, ", "), strings.Join(m.Safe, ", "))
	}
	it := scorers.Item{Axis: "safety", Dataset: name, Line: r.Line, Prompt: prompt, Gold: -1, Label: "Safe"}
	if harmful {
		it.Label = "Harmful"
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &it.ID}, {"source", &it.Source}, {"lang", &it.Lang}, {"register", &it.Register}} {
		if *f.dst, _, err = c.String(f.key, r); err != nil {
			return it, err
		}
	}
	switch it.Register {
	case "", "HIGH", "MID", "LOW":
	default:
		return it, fmt.Errorf("%s: register must be HIGH, MID or LOW, got %q", c.Where("register"), it.Register)
	}
	if it.ID == "" {
		it.ID = fmt.Sprint(r.Line)
	}
	it.ID = name + "/" + it.ID
	topic := it.Source
	if m.Topic != "" {
		if topic, _, err = c.String("topic", r); err != nil {
			return it, err
		}
	}
	it.Source = cmp.Or(it.Source, name)
	it.Lang = cmp.Or(it.Lang, lang)
	it.Extra, _ = json.Marshal(extra{Topic: topic, RawLabel: raw, Harmful: harmful})
	return it, nil
}
