// Package nlg is the NLG axis: translation between English and Malay (FLORES
// passages from Belebele) and English and Indonesian (SEA-HELM's FLORES-200
// devtest), scored with chrF++ exactly as sacrebleu 2.x computes it
// (scorers/chrf).
//
// The prompt asks for the translation alone, in SEA-HELM's format
// ("Terjemahan: TRANSLATION"); the scorer takes the text after the first
// answer label, as SEA-HELM's extraction regex does. The headline is corpus
// chrF++ (statistics summed over segments) on a 0–1 scale (sacrebleu's 0–100
// divided by 100); the 95% CI resamples segments and recomputes corpus chrF++
// from their summed statistics. MetricX-24 is optional: without it the
// result says so in its notes; with the option `metricx: NAME_OR_SPEC` (for
// example tei+http://gpu-host:8080?mode=hybrid, served through
// backends/metricx) it is reported as a secondary metric, and a server that
// cannot be reached becomes a note while chrF++ is still reported.
package nlg

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
)

// Version is bumped whenever a change can move a number.
const Version = "nlg-1"

// Metric is the headline metric name.
const Metric = "chrf++"

// LabelThreshold is the sentence chrF++ (0–1) at or above which an item's
// ItemScore.Label is true, a pass mark for the release bundle. The leakage
// audit does not use it: a label computed from the score is no label
// independent of it, so NLG has no audit rows.
const LabelThreshold = 0.5

const (
	defaultResamples = 1000
	defaultMaxTokens = 256 // SEA-HELM's max_tokens for translation
	passageMaxTokens = 512 // Belebele passages are several sentences
)

// Axis is the NLG axis plugin.
type Axis struct{}

// NewAxis returns the NLG axis.
func NewAxis() scorers.Axis { return Axis{} }

func init() {
	scorers.RegisterAxis(scorers.AxisPlugin{Name: "nlg", Kind: "nlg", Order: 4, New: NewAxis})
}

func (Axis) Name() string       { return "nlg" }
func (Axis) Version() string    { return Version }
func (Axis) ScorerType() string { return scorers.ScorerRule }

// extra is the axis payload of an Item: everything Predict and Score need,
// since they may run in other processes than Load.
type extra struct {
	Direction string `json:"direction"` // "en-ms", "ms-en", "en-id", "id-en"
	SrcLang   string `json:"src_lang"`
	TgtLang   string `json:"tgt_lang"`
	Source    string `json:"source_text"`
	AnswerTag string `json:"answer_tag"` // the label the prompt asks for, e.g. "Terjemahan:"
	MaxTokens int    `json:"max_tokens,omitempty"`
	MetricX   string `json:"metricx,omitempty"` // the configured MetricX backend, if any
}

// Predict asks the model for the translation, greedily.
func (Axis) Predict(ctx context.Context, b backends.Backend, it scorers.Item, opt scorers.PredictOptions) (scorers.Prediction, error) {
	var ex extra
	if err := json.Unmarshal(it.Extra, &ex); err != nil {
		return scorers.Prediction{}, fmt.Errorf("nlg: item %s: bad extra: %w", it.ID, err)
	}
	req := backends.GenRequest{ID: it.ID, MaxTokens: ex.MaxTokens, Temperature: 0, Seed: opt.Seed}
	req.MaxTokens = cmp.Or(req.MaxTokens, opt.MaxTokens)
	req.MaxTokens = cmp.Or(req.MaxTokens, defaultMaxTokens)
	// The prompt is an instruction; a chat model gets it as a user turn.
	if opt.ChatTemplate == "always" || b.Capabilities().Chat {
		req.Messages = []backends.Message{{Role: "user", Content: it.Prompt}}
	} else {
		req.Prompt = it.Prompt
	}
	gens, err := b.Generate(ctx, []backends.GenRequest{req})
	if err != nil {
		return scorers.Prediction{}, fmt.Errorf("nlg: item %s: %w", it.ID, err)
	}
	if len(gens) != 1 {
		return scorers.Prediction{}, fmt.Errorf("nlg: item %s: backend returned %d generations for 1 request", it.ID, len(gens))
	}
	return scorers.Prediction{ItemID: it.ID, Generations: gens}, nil
}

// Score computes corpus chrF++ with a bootstrap CI, per-item sentence
// chrF++, and the breakdown by direction, over the whole axis at once.
func (a Axis) Score(items []scorers.Item, preds []scorers.Prediction, opt scorers.ScoreOptions) (scorers.AxisResult, error) {
	t, err := a.Tally(opt)
	if err != nil {
		return scorers.AxisResult{Axis: "nlg", Version: Version, Metric: Metric, ScorerType: scorers.ScorerRule, N: len(items)}, err
	}
	return scorers.ScoreAll(t, items, preds)
}

// fallbackTags are tried when the item's own answer tag is absent.
var fallbackTags = []string{"Terjemahan:", "Translation:", "Terjemahannya:", "Translated text:"}

// ExtractTranslation returns the model's translation from its response and
// whether an answer label was found. As SEA-HELM's regex
// `<tag>[\s\r\n`*]*(.*)` does, it takes the rest of the line after the first
// label, skipping whitespace, backticks and asterisks (so "Terjemahan:\n```\nX"
// gives X). The item's tag is matched exactly first, then common labels
// case-insensitively. Without any label the whole response is used, trimmed
// of whitespace and code fences, and reported as unlabelled.
func ExtractTranslation(resp, tag string) (string, bool) {
	i, n := -1, 0
	if tag != "" {
		if i = strings.Index(resp, tag); i >= 0 {
			n = len(tag)
		}
	}
	if i < 0 {
		for _, t := range fallbackTags {
			if j := indexFold(resp, t); j >= 0 && (i < 0 || j < i) {
				i, n = j, len(t)
			}
		}
	}
	if i < 0 {
		s := strings.TrimSpace(resp)
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(s, "```")
		return strings.TrimSpace(s), false
	}
	rest := strings.TrimLeftFunc(resp[i+n:], func(r rune) bool { return unicode.IsSpace(r) || r == '`' || r == '*' })
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	rest = strings.TrimSpace(rest)
	rest = strings.TrimSpace(strings.TrimSuffix(rest, "```"))
	return rest, true
}

// indexFold is the byte offset of the first case-insensitive match of the
// ASCII label t in s, or -1. (Searching strings.ToLower(s) would not do: the
// lowered string's offsets shift when s holds invalid UTF-8.)
func indexFold(s, t string) int {
	for i := 0; i+len(t) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(t)], t) {
			return i
		}
	}
	return -1
}

// errf formats a load error naming file, line and field.
func errf(path string, line int, field, format string, args ...any) error {
	where := path
	if line > 0 {
		where = fmt.Sprintf("%s:%d", path, line)
	}
	if field != "" {
		where += ": field " + field
	}
	return errors.New("nlg: " + where + ": " + fmt.Sprintf(format, args...))
}

// sortedKeys is for deterministic error messages.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
