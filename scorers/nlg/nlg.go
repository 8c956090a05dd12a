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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/chrf"
	"github.com/glossobench/glossobench/stats"
)

// Version is bumped whenever a change can move a number.
const Version = "nlg-1"

// Metric is the headline metric name.
const Metric = "chrf++"

// LabelThreshold is the sentence chrF++ (0–1) at or above which an item's
// ItemScore.Label is true; chrF++ has no natural correct/incorrect, and the
// leakage audit wants a binary label next to the continuous rating.
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
	if req.MaxTokens == 0 {
		req.MaxTokens = opt.MaxTokens
	}
	if req.MaxTokens == 0 {
		req.MaxTokens = defaultMaxTokens
	}
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
// chrF++, and the breakdown by direction.
func (Axis) Score(items []scorers.Item, preds []scorers.Prediction, opt scorers.ScoreOptions) (scorers.AxisResult, error) {
	res := scorers.AxisResult{Axis: "nlg", Version: Version, Metric: Metric, ScorerType: scorers.ScorerRule, N: len(items)}
	if len(items) != len(preds) {
		return res, fmt.Errorf("nlg: %d items but %d predictions", len(items), len(preds))
	}
	m := chrf.New(chrf.ChrFPlusPlus)
	nrefs := 0
	exs := make([]extra, len(items))
	for i, it := range items {
		if preds[i].ItemID != it.ID {
			return res, fmt.Errorf("nlg: prediction %d is for item %q, expected %q", i, preds[i].ItemID, it.ID)
		}
		if err := json.Unmarshal(it.Extra, &exs[i]); err != nil {
			return res, fmt.Errorf("nlg: item %s: bad extra: %w", it.ID, err)
		}
		if len(it.References) == 0 {
			return res, fmt.Errorf("nlg: item %s has no reference", it.ID)
		}
		nrefs = max(nrefs, len(it.References))
	}
	if len(items) == 0 {
		res.Notes = append(res.Notes, "no items to score")
		return res, nil
	}

	hyps := make([]string, len(items))
	sources := make([]string, len(items))
	streams := make([][]string, nrefs)
	for k := range streams {
		streams[k] = make([]string, len(items)) // "" where an item has fewer references
	}
	flags := make([]string, len(items))
	labelled := make([]bool, len(items))
	truncated, empty, unlabelled := 0, 0, 0
	for i, it := range items {
		p := preds[i]
		for k, r := range it.References {
			streams[k][i] = r
		}
		sources[i] = exs[i].Source
		switch {
		case p.Unsupported || p.Error != "" || len(p.Generations) == 0:
			flags[i] = "no_output"
		default:
			g := p.Generations[0]
			hyps[i], labelled[i] = ExtractTranslation(g.Text, exs[i].AnswerTag)
			if g.Truncated() {
				truncated++
				flags[i] = "truncated"
			}
		}
		if hyps[i] == "" {
			empty++
			if flags[i] == "" {
				flags[i] = "empty"
			}
		} else if !labelled[i] {
			unlabelled++
			if flags[i] == "" {
				flags[i] = "no_label"
			}
		}
	}

	segs, err := m.SegmentStats(hyps, streams)
	if err != nil {
		return res, fmt.Errorf("nlg: %w", err)
	}
	corpus := sumScore(m, segs, nil) / 100
	res.Score = &corpus
	res.TruncationRate = float64(truncated) / float64(len(items))

	resamples := opt.BootstrapResamples
	if resamples <= 0 {
		resamples = defaultResamples
	}
	total := make(chrf.Stats, len(segs[0]))
	lo, hi, err := stats.PercentileBootstrap(len(segs), resamples, uint64(opt.Seed), 0.95, func(idx []int) float64 {
		clear(total)
		for _, i := range idx {
			total.Add(segs[i])
		}
		return m.FScore(total) / 100
	})
	if err == nil {
		res.CI95 = &[2]float64{lo, hi}
	} else {
		res.Notes = append(res.Notes, "no CI: "+err.Error())
	}

	res.Items = make([]scorers.ItemScore, len(items))
	byDir := map[string][]int{}
	for i, it := range items {
		s := m.FScore(segs[i]) / 100
		res.Items[i] = scorers.ItemScore{
			ItemID: it.ID, Source: it.Source, Lang: it.Lang,
			Score: s, Rating: s, Label: s >= LabelThreshold, Flagged: flags[i],
			Fields: map[string]any{
				"direction":   exs[i].Direction,
				"chrf++":      100 * s,
				"hypothesis":  hyps[i],
				"label_found": labelled[i],
				"label_rule":  fmt.Sprintf("sentence chrF++ >= %.2f", LabelThreshold),
			},
		}
		byDir[exs[i].Direction] = append(byDir[exs[i].Direction], i)
	}

	meanSentence := 0.0
	for _, is := range res.Items {
		meanSentence += is.Score
	}
	meanSentence /= float64(len(res.Items))

	dirs := make(map[string]any, len(byDir))
	for d, idx := range byDir {
		dirs[d] = map[string]any{"score": sumScore(m, segs, idx) / 100, "n": len(idx)}
	}
	// Copying the source untranslated is the do-nothing baseline: names,
	// numbers and loanwords already earn some chrF++.
	copySegs, err := m.SegmentStats(sources, streams)
	if err != nil {
		return res, fmt.Errorf("nlg: %w", err)
	}
	corpusSig := m.Corpus(hyps, streams).Signature
	res.Secondary = map[string]any{
		"chrf++_sacrebleu":   100 * corpus, // the 0–100 number sacrebleu prints
		"signature":          "chrF2++|" + corpusSig,
		"by_direction":       dirs,
		"copy_source_chrf++": sumScore(m, copySegs, nil) / 100,
		// Item scores are sentence chrF++; their mean is not the corpus score.
		"mean_sentence_chrf++": meanSentence,
		"empty_outputs":        empty,
		"unlabelled_outputs":   unlabelled,
		"bootstrap_resamples":  resamples,
	}
	res.Notes = append(res.Notes, addMetricX(&res, exs, sources, hyps, streams[0]))
	res.Notes = append(res.Notes, "score and CI are corpus chrF++ / 100 (0–1); chance is 0 because chrF++ has no random-answer baseline, see copy_source_chrf++")
	return res, nil
}

// sumScore is the chrF of the summed statistics of segs[idx] (all of segs
// when idx is nil), 0–100.
func sumScore(m *chrf.CHRF, segs []chrf.Stats, idx []int) float64 {
	total := make(chrf.Stats, len(segs[0]))
	if idx == nil {
		for _, s := range segs {
			total.Add(s)
		}
	} else {
		for _, i := range idx {
			total.Add(segs[i])
		}
	}
	return m.FScore(total)
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
