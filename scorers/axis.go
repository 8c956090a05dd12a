// Package scorers holds the axis plugins and pure scoring. An axis loads its
// items, turns each into model requests (Predict) and scores the predictions
// (Score). Nothing here knows about Temporal: the activities call these
// functions over one shard or one axis at a time, and the offline commands call
// them directly.
package scorers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/stats"
)

// Scorer types, as printed in the measurement profile.
const (
	ScorerRule           = "deterministic-rule"
	ScorerClassification = "classification"
	ScorerJudge          = "llm-judge"
)

// Tiers of an axis (its config's tier, result.json's axes[].tier): a public
// axis counts in ms_public and ms_pooled, a selfbuilt (experimental) one
// only in ms_experimental.
const (
	TierPublic    = "public"
	TierSelfbuilt = "selfbuilt"
)

// The mean scores an axis's headline counts in (spec §2), as MeanOf tiers it.
const (
	InNoMean         = ""                // weight 0: reported outside every mean
	InMSPublic       = "ms_public"       // and ms_pooled; ms_ranking when it discriminates
	InMSExperimental = "ms_experimental" // the selfbuilt tier
)

// MeanOf is the mean score an axis of this weight and tier counts in: none
// at weight 0, ms_experimental in the selfbuilt tier, else ms_public.
// Aggregate tiers a run's axes with it and the release rescore re-derives
// the means with it.
func MeanOf(weight float64, tier string) string {
	switch {
	case !stats.InMS(weight):
		return InNoMean
	case tier == TierSelfbuilt:
		return InMSExperimental
	}
	return InMSPublic
}

// Item is one evaluation item. Fields an axis does not use stay empty; an
// axis-specific payload goes in Extra.
// MaxItemIDBytes bounds an item's id. Ids are quoted in notes and error
// messages, which travel in Temporal payloads (the server caps a message at
// 4 MB and then names no field); a dataset's ids are short keys.
const MaxItemIDBytes = 1024

type Item struct {
	ID         string          `json:"id"` // stable and unique within a run: "<dataset>/<row>"
	Axis       string          `json:"axis"`
	Dataset    string          `json:"dataset"`
	Line       int             `json:"line,omitempty"`     // 1-based line in the dataset file, for error messages
	Source     string          `json:"source,omitempty"`   // pooling tag (dataset, topic) read by the leakage audit
	Lang       string          `json:"lang,omitempty"`     // ISO code of the prompt language
	Register   string          `json:"register,omitempty"` // HIGH | MID | LOW, when the data labels it
	TaskID     string          `json:"task_id,omitempty"`  // items sharing a task id count as one task in dedup
	Prompt     string          `json:"prompt"`             // the rendered prompt text (what dedup screens)
	Choices    []string        `json:"choices,omitempty"`  // MCQ options, in order A, B, C, ...
	Gold       int             `json:"gold"`               // index into Choices; -1 when not MCQ
	Label      string          `json:"label,omitempty"`    // gold label text (NLI class, Harmful/Safe, ...)
	References []string        `json:"references,omitempty"`
	Turns      []string        `json:"turns,omitempty"` // multi-turn user messages
	Extra      json.RawMessage `json:"extra,omitempty"` // axis-specific payload (e.g. IFEval instruction ids and kwargs)
}

// Prediction is what the model produced for one item. It is checkpointed to
// the store per shard, so it must hold everything Score needs.
type Prediction struct {
	ItemID      string                `json:"item_id"`
	Generations []backends.Generation `json:"generations,omitempty"`
	LogLiks     []backends.LLResult   `json:"logliks,omitempty"`
	// Variants holds extra inference for probes or scoring modes, keyed by name
	// (e.g. "cloze_full", "shuffle", "unanswerable").
	Variants map[string]json.RawMessage `json:"variants,omitempty"`
	// Unsupported is set when the backend cannot do what the axis needs
	// (e.g. log-likelihood on a chat-only API).
	Unsupported bool   `json:"unsupported,omitempty"`
	Error       string `json:"error,omitempty"`
	// Usage is what answering the item cost: tokens, request attempts,
	// failed attempts, retries and wall time. Absent in checkpoints written
	// before it was recorded, and for answers from the answer cache.
	Usage *backends.Usage `json:"usage,omitempty"`
}

// PredictOptions carry run-wide inference settings.
type PredictOptions struct {
	ScoringMode  string // cloze | generate | both (MCQ axes)
	ChatTemplate string // auto | always
	MaxTokens    int
	Seed         int64
	Options      map[string]any // the axis's own options (axes.<name>.options)
}

// ScoreOptions carry run-wide scoring settings.
type ScoreOptions struct {
	ScoringMode        string
	Seed               int64
	BootstrapResamples int
	Options            map[string]any // the axis's own options (axes.<name>.options)
	// JudgeFloor is run.judge_floor, the agreement floor of a judged axis
	// whose options set none; nil means judge.DefaultFloor.
	JudgeFloor *float64
	Scorer     string // axes.<name>.scorer ("" or ScorerRules)
}

// ScorerRules is the axes.<name>.scorer value that scores a judged axis
// (Safety) with its rule-based detector instead of judges.
const ScorerRules = "rules"

// NeedsJudges reports whether an axis of this scorer type, so configured,
// is scored by judges (and is skipped when there are none).
func NeedsJudges(scorerType string, cfg AxisConfig) bool {
	switch scorerType {
	case ScorerJudge:
		return true
	case ScorerClassification:
		return cfg.Scorer != ScorerRules
	}
	return false
}

// ItemScore is the per-item outcome, written to the store as JSONL and read by
// the pooled mean score and the leakage audit.
type ItemScore struct {
	ItemID  string  `json:"item_id"`
	Source  string  `json:"source,omitempty"`
	Lang    string  `json:"lang,omitempty"`
	Score   float64 `json:"score"`             // the item's contribution to the axis score (1/0 for exact match)
	Rating  float64 `json:"rating"`            // the scorer's continuous rating (p(gold) for cloze, the score otherwise)
	Label   bool    `json:"label"`             // correctness or gold label
	Flagged string  `json:"flagged,omitempty"` // e.g. "low_conf", "parse_fail", "truncated"
	// Fields are free-form per-item details for the release bundle
	// (cloze_correct, judge_quality, parsed letter, ...).
	Fields map[string]any `json:"fields,omitempty"`
	// Audit are the item's rows for the leakage audit: each a detector's
	// rating of the item against a label the detector did not produce.
	// Empty when the axis has no such pair (the rating is the score).
	Audit []AuditRow `json:"audit,omitempty"`
}

// AuditRow is one detector's rating of one item for the leakage audit
// (spec 003). The label must not be a function of the rating: a model's
// confidence in the answer it chose against whether that answer is right,
// a judge's harm rating of a response against the prompt's gold label, a
// judge's quality rating against a verifiable outcome. Tags name the pools
// the row belongs to (pooling column → the item's tag in it).
type AuditRow struct {
	Detector string            `json:"detector"` // an AuditDesign.Detector of the axis
	Rating   float64           `json:"rating"`
	Label    bool              `json:"label"`
	Tags     map[string]string `json:"tags"`
}

// Audited is implemented by axes whose item scores carry audit rows: it
// describes every detector the rows name (Source is left empty; the rows'
// tags name their pools).
type Audited interface {
	AuditDesigns() []AuditDesign
}

// Verifiable is implemented by axes whose ItemScore.Label is a verifiable
// outcome (MCQ correct, IFEval strict pass), the label the judge overlay's
// ratings are audited against: its column name and what it says.
type Verifiable interface {
	VerifiableLabel() (column, is string)
}

// ModelUse is what an axis asks of the evaluated model: log-likelihoods
// (cloze scoring), generations from a raw prompt, or chat messages.
type ModelUse struct{ LogLik, Generate, Chat bool }

// ModelUser is implemented by axes that ask the model for more or other
// than generations from a raw prompt, what every other axis asks for.
type ModelUser interface {
	ModelUse(cfg AxisConfig) ModelUse
}

// ModelUseOf is what the axis asks of the model under cfg.
func ModelUseOf(ax Axis, cfg AxisConfig) ModelUse {
	if u, ok := ax.(ModelUser); ok {
		return u.ModelUse(cfg)
	}
	return ModelUse{Generate: true}
}

// NotAuditable is the audit's reading of an axis whose items carry no
// detector rating with a label independent of it.
const NotAuditable = "not auditable: no label independent of the rating"

// AuditDesign names what one pool of the leakage audit (spec 003) audits:
// a detector that rates each row, a label the detector did not produce, and
// the source tag the rows are pooled by. The names are the columns of the
// pool's audit-rows.csv.
type AuditDesign struct {
	Detector   string `json:"detector"`    // the rating's column, e.g. "confidence"
	DetectorIs string `json:"detector_is"` // what rates each row, in words
	Label      string `json:"label"`       // the label's column, e.g. "correct"
	LabelIs    string `json:"label_is"`    // what the label says, in words
	Source     string `json:"source"`      // the source tag's column, e.g. "subject"
}

// ByScoring is the MCQ cloze/generate breakdown of spec §1.
type ByScoring struct {
	Cloze     *float64 `json:"cloze"`
	Generate  *float64 `json:"generate"`
	Gap       *float64 `json:"gap"` // cloze - generate
	ParseFail int      `json:"parse_fail"`
}

// AxisResult is one axis's score and how it was measured.
type AxisResult struct {
	Axis           string         `json:"axis"`
	Version        string         `json:"version"`
	Score          *float64       `json:"score"` // nil when nothing was scored
	Metric         string         `json:"metric"`
	N              int            `json:"n"`
	CI95           *[2]float64    `json:"ci95"`
	ScorerType     string         `json:"scorer_type"`
	Chance         float64        `json:"chance"` // score of a random answerer, for the near-chance flag
	ByScoring      *ByScoring     `json:"by_scoring,omitempty"`
	TruncationRate float64        `json:"truncation_rate"`
	Secondary      map[string]any `json:"secondary,omitempty"` // axis-specific extra metrics
	// TranslationDelta holds one entry per dataset declared translation_of another.
	TranslationDelta []TranslationDelta `json:"translation_delta,omitempty"`
	Notes            []string           `json:"notes,omitempty"`
	Items            []ItemScore        `json:"-"` // per-item outcomes; stored, not sent through workflow history
}

// Axis is an axis plugin.
type Axis interface {
	Name() string    // knowledge, nlu, if, nlg, mt, safety, cultural
	Version() string // bumped whenever a change can move a number
	ScorerType() string
	// Load reads and validates the axis's datasets. Errors name the file, line and field.
	Load(cfg AxisConfig) ([]Item, error)
	// Predict runs the model on one item.
	Predict(ctx context.Context, b backends.Backend, it Item, opt PredictOptions) (Prediction, error)
	// Score scores the predictions; preds[i] belongs to items[i]. It is
	// ScoreAll over the axis's Tally, kept for callers that hold an axis whole.
	Score(items []Item, preds []Prediction, opt ScoreOptions) (AxisResult, error)
	// Tally starts scoring the axis one shard at a time (a bad option is an
	// error naming it).
	Tally(opt ScoreOptions) (Tally, error)
}

// Streamer is implemented by axes that can read their datasets one item at a
// time (the multiple-choice axes, whose datasets run to hundreds of thousands
// of rows), so that preparing a run never holds such an axis's items whole.
type Streamer interface {
	// Each reads and validates the datasets exactly as Load does, calling fn
	// with each item in Load's order; an error from fn stops it.
	Each(cfg AxisConfig, fn func(Item) error) error
}

// Tally scores an axis one shard at a time, so that only one shard's items
// and predictions are ever in memory however large the axis. Between shards
// it keeps only compact per-item numbers (scores for the bootstrap, chrF
// statistics, judge values for κ) and counters; adding the shards of an axis
// in order gives exactly the AxisResult that scoring it whole gives.
type Tally interface {
	// Add scores one shard (preds[i] belongs to items[i]) and returns its
	// item scores, which the caller writes out; the tally keeps no reference
	// to items, preds or the returned scores.
	Add(items []Item, preds []Prediction) ([]ItemScore, error)
	// Result is the axis result over every shard added; its Items are nil.
	Result() (AxisResult, error)
}

// ScoreAll scores items and preds as a single shard and returns the result
// with its Items set.
func ScoreAll(t Tally, items []Item, preds []Prediction) (AxisResult, error) {
	scores, err := t.Add(items, preds)
	if err != nil {
		return AxisResult{}, err
	}
	r, err := t.Result()
	r.Items = scores
	return r, err
}

// AxisConfig is one axis's section of the run config (YAML, strictly decoded).
type AxisConfig struct {
	Datasets     []DatasetConfig `yaml:"datasets" json:"datasets"`
	ScoringMode  string          `yaml:"scoring_mode,omitempty" json:"scoring_mode,omitempty"` // cloze | generate | both
	Weight       *float64        `yaml:"weight,omitempty" json:"weight,omitempty"`             // default 1.0; 0 reports the axis outside the mean
	Tier         string          `yaml:"tier,omitempty" json:"tier,omitempty"`                 // public (default) | selfbuilt
	MaxTokens    int             `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	Probes       []string        `yaml:"probes,omitempty" json:"probes,omitempty"` // shuffle, unanswerable
	JudgeOverlay bool            `yaml:"judge_overlay,omitempty" json:"judge_overlay,omitempty"`
	// Scorer chooses a judged axis's scorer: "" is the axis's own (judges),
	// ScorerRules the rule-based detector (Safety only), chosen explicitly:
	// without judges a judged axis is skipped, never silently rule-scored.
	Scorer string `yaml:"scorer,omitempty" json:"scorer,omitempty"`
	// Options are axis-specific knobs; each axis validates the keys it knows.
	Options map[string]any `yaml:"options,omitempty" json:"options,omitempty"`
	// BaseDir resolves relative dataset paths (the config file's folder).
	BaseDir string `yaml:"-" json:"base_dir,omitempty"`
}

// WeightValue is the configured weight; config.Load sets the default 1, so
// nil only appears in a config built in code, where it also means 1.
func (a AxisConfig) WeightValue() float64 {
	if a.Weight == nil {
		return 1
	}
	return *a.Weight
}

// DatasetConfig names one dataset file of an axis.
type DatasetConfig struct {
	Name string `yaml:"name" json:"name"`
	// Path is a local file (relative to the config's folder), an s3:// object
	// (store URI query parameters) or hf://datasets/OWNER/NAME@REVISION/PATH;
	// a .gz, .zst or .zstd suffix is decompressed. With Config and Split it
	// is hf://datasets/OWNER/NAME@REVISION, the repository alone.
	Path string `yaml:"path" json:"path"`
	// Config is the configuration of a Hub dataset named by repository
	// (path hf://datasets/OWNER/NAME@REVISION): with Split, its Parquet
	// files at the revision (the Hub's export, on refs/convert/parquet),
	// pinned as a set by SHA256.
	Config string `yaml:"config,omitempty" json:"config,omitempty"`
	// Split is the split of a Hub dataset named by repository, with Config.
	Split string `yaml:"split,omitempty" json:"split,omitempty"`
	// Format names a built-in preset (global_mmlu, belebele, indonli,
	// kalahi, ifeval, ...) or the axis kind (mcq) when Fields declares the
	// dataset alone.
	Format string `yaml:"format" json:"format"`
	// LMEvalTask, with format lm-eval-task, is an lm-evaluation-harness
	// task YAML (relative to the config's folder) whose doc_to_text,
	// doc_to_choice and doc_to_target become the fields (package
	// scorers/lmevaltask); Path is the task's test split as a file, or
	// the task's repository hf://datasets/OWNER/NAME@REVISION, whose
	// config and split then come from the task.
	LMEvalTask string `yaml:"lm_eval_task,omitempty" json:"lm_eval_task,omitempty"`
	// FileFormat is jsonl, csv, tsv or parquet; default from the file name.
	FileFormat string `yaml:"file_format,omitempty" json:"file_format,omitempty"`
	// SHA256 pins the file's stored bytes; required for hf:// paths. With
	// Config and Split it pins the set (its listing of files and their
	// SHA-256s); reading a set without it fails with the value to paste.
	SHA256 string `yaml:"sha256,omitempty" json:"sha256,omitempty"`
	// Fields map the file's columns to the item (see package scorers/dataset);
	// with a preset they replace the preset's entries of the same name.
	Fields *dataset.Mapping `yaml:"fields,omitempty" json:"fields,omitempty"`
	// Fewshot puts the first N rows of a second file, answered, before
	// every prompt (MCQ axes).
	Fewshot *FewshotConfig `yaml:"fewshot,omitempty" json:"fewshot,omitempty"`
	Lang    string         `yaml:"lang,omitempty" json:"lang,omitempty"`
	Limit   int            `yaml:"limit,omitempty" json:"limit,omitempty"` // first N rows (0 = all)
	// Filter keeps rows whose field equals the value (e.g. cultural_sensitivity_label: CS).
	Filter  map[string]string `yaml:"filter,omitempty" json:"filter,omitempty"`
	License string            `yaml:"license,omitempty" json:"license,omitempty"`
	// Register labels every row of the dataset HIGH, MID or LOW (spec §0,
	// principle 4) unless the row carries its own.
	Register string `yaml:"register,omitempty" json:"register,omitempty"`
	// HumanValidated marks datasets whose gold keys a fluent reader confirmed.
	HumanValidated bool `yaml:"human_validated,omitempty" json:"human_validated,omitempty"`
	// TranslationOf names the dataset of the same axis whose items this one
	// translates row for row (belebele_ms of belebele_en); the axis then
	// publishes the translated-minus-original difference (spec §0, principle 3).
	TranslationOf string `yaml:"translation_of,omitempty" json:"translation_of,omitempty"`
}

// TruncationWarnRate is the truncation_rate at or above which a generative
// axis warns that its score may be a cap-hit, not weakness (spec §10 #9).
const TruncationWarnRate = 0.3

// WarnTruncation adds the spec §10 #9 warning to r's notes when at least
// TruncationWarnRate of its generations hit max_tokens. Every generative
// axis calls it after setting TruncationRate.
func WarnTruncation(r *AxisResult) {
	if r.TruncationRate >= TruncationWarnRate {
		r.Notes = append(r.Notes, fmt.Sprintf("WARNING: truncation_rate %.2f >= %.2f: generations hit max_tokens; a low score may be a cap-hit, not weakness", r.TruncationRate, TruncationWarnRate))
	}
}

// FewshotConfig names a dataset's few-shot examples file (read with the
// dataset's own mapping).
type FewshotConfig struct {
	Path       string `yaml:"path" json:"path"`
	N          int    `yaml:"n" json:"n"`
	FileFormat string `yaml:"file_format,omitempty" json:"file_format,omitempty"`
	SHA256     string `yaml:"sha256,omitempty" json:"sha256,omitempty"`
}

// Source is the dataset's file, relative paths resolving against baseDir.
func (d DatasetConfig) Source(baseDir string) dataset.Source {
	return dataset.Source{URI: d.Path, BaseDir: baseDir, Format: d.FileFormat, SHA256: d.SHA256, Config: d.Config, Split: d.Split}
}

// Source is the examples file, relative paths resolving against baseDir.
func (f FewshotConfig) Source(baseDir string) dataset.Source {
	return dataset.Source{URI: f.Path, BaseDir: baseDir, Format: f.FileFormat, SHA256: f.SHA256}
}
