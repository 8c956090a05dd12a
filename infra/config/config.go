// Package config loads and validates a GlossoBench run config (YAML, strictly
// decoded: an unknown key is an error). Every error names the file and the
// field. Defaults are documented on the fields and applied by Load.
package config

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/glossobench/glossobench/scorers"
	_ "github.com/glossobench/glossobench/scorers/axes" // the axis plugins validation knows by name
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/lmevaltask"
)

// BenchVersion is the frozen data/method version (spec §5, §6); bump the
// major to change data.
const BenchVersion = "glossobench-v1"

// DefaultHeartbeatSeconds is run.heartbeat_seconds when the config leaves it
// out: a SIGKILLed inference worker's activities are retried elsewhere
// within 10 s (workflows' inferPreset).
const DefaultHeartbeatSeconds = 5

// SchemaVersion is the result.json schema version.
const SchemaVersion = "1.1"

// Config is a run config.
type Config struct {
	BenchVersion string                        `yaml:"bench_version,omitempty" json:"bench_version"`
	Language     string                        `yaml:"language,omitempty" json:"language"` // leaderboard language, default "ms"
	Run          Run                           `yaml:"run" json:"run"`
	Model        Model                         `yaml:"model" json:"model"`
	Store        Store                         `yaml:"store,omitempty" json:"store"`
	Axes         map[string]scorers.AxisConfig `yaml:"axes" json:"axes"`
	Judges       []Judge                       `yaml:"judges,omitempty" json:"judges,omitempty"`
	Dedup        Dedup                         `yaml:"dedup,omitempty" json:"dedup"`
}

// Run holds run-wide settings.
type Run struct {
	MaxWallSeconds     int     `yaml:"max_wall_seconds,omitempty" json:"max_wall_seconds"`       // default 10800 (3 h)
	Seed               int64   `yaml:"seed,omitempty" json:"seed"`                               // default 1234
	BootstrapResamples int     `yaml:"bootstrap_resamples,omitempty" json:"bootstrap_resamples"` // default 1000; 30..2000 (spec §3), else an error
	ShardSize          int     `yaml:"shard_size,omitempty" json:"shard_size"`                   // items per inference activity, default 100
	CheckpointEvery    int     `yaml:"checkpoint_every,omitempty" json:"checkpoint_every"`       // items per checkpoint object, default 10
	ParallelShards     int     `yaml:"parallel_shards,omitempty" json:"parallel_shards"`         // shards in flight per axis, default 4
	HeartbeatSeconds   int     `yaml:"heartbeat_seconds,omitempty" json:"heartbeat_seconds"`     // a silent inference worker is presumed dead after this, default 5 (it heartbeats every second)
	ChatTemplate       string  `yaml:"chat_template,omitempty" json:"chat_template"`             // auto (default) | always
	NearChanceEps      float64 `yaml:"near_chance_eps,omitempty" json:"near_chance_eps"`         // default 0.05 (env MB_NEAR_CHANCE_EPS)
	JudgeOverlay       bool    `yaml:"judge_overlay,omitempty" json:"judge_overlay"`
	// JudgeFloor is the agreement below which a judged item is low_conf, for
	// every judged axis that does not set options.agreement_floor; default
	// 0.5. A pointer, so that 0 is a floor and not "unset".
	JudgeFloor *float64 `yaml:"judge_floor,omitempty" json:"judge_floor"`
	// Limit caps every dataset at this many rows (--limit, as
	// lm-evaluation-harness's): a quick, partial run. A pointer, so that an
	// explicit 0 is rejected rather than read as "no limit".
	Limit *int `yaml:"limit,omitempty" json:"limit,omitempty"`
}

// Model names the evaluated model and how to reach it.
type Model struct {
	Spec           string `yaml:"spec" json:"spec"` // gguf:PATH | openai:URL | http(s)://URL
	ID             string `yaml:"id,omitempty" json:"id"`
	Name           string `yaml:"name,omitempty" json:"name,omitempty"`               // model name sent to the server
	APIKeyEnv      string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"` // NAME of the env var with the key
	Flavor         string `yaml:"flavor,omitempty" json:"flavor,omitempty"`           // auto | vllm | llama-server | chat-only
	Concurrency    int    `yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	TimeoutSeconds int    `yaml:"timeout_seconds,omitempty" json:"timeout_seconds,omitempty"`
	MaxRetries     int    `yaml:"max_retries,omitempty" json:"max_retries,omitempty"`
	ChatFormat     string `yaml:"chat_format,omitempty" json:"chat_format,omitempty"`
	// StrictContext makes a prompt longer than the model's window an error, on
	// every backend (a server's window is the one it reports); by default it
	// is left-truncated (as lm-evaluation-harness does) and counted.
	StrictContext bool      `yaml:"strict_context,omitempty" json:"strict_context,omitempty"`
	Meta          ModelMeta `yaml:"meta,omitempty" json:"meta"`
	// Revision names the weights a server serves (a commit, tag or date),
	// recorded in the model identity and the leaderboard pins.
	Revision string `yaml:"revision,omitempty" json:"revision,omitempty"`
}

// InFlight is how many items are asked of the model at once:
// model.concurrency when set; by default one for the embedded model (it
// parallelises inside a request) and 8 for a server.
func (m Model) InFlight() int {
	switch {
	case m.Concurrency > 0:
		return m.Concurrency
	case strings.HasPrefix(m.Spec, "gguf:"):
		return 1
	}
	return 8
}

// ModelMeta is the model_meta of spec §10 (#2, #3, #11).
type ModelMeta struct {
	Family        string `yaml:"family,omitempty" json:"family,omitempty"`
	ModelClass    string `yaml:"model_class,omitempty" json:"model_class,omitempty"` // base | instruct | reasoning
	Params        string `yaml:"params,omitempty" json:"params,omitempty"`
	ReasoningMode string `yaml:"reasoning_mode,omitempty" json:"reasoning_mode,omitempty"`
}

// Store says where checkpoints and results go.
type Store struct {
	URI string `yaml:"uri,omitempty" json:"uri"` // a folder (default .glossobench/store) or s3://bucket/prefix?endpoint=...
}

// Judge is one judge of the ensemble (issue 5).
type Judge struct {
	Name       string `yaml:"name" json:"name"`
	Family     string `yaml:"family,omitempty" json:"family,omitempty"`
	Version    string `yaml:"version,omitempty" json:"version,omitempty"`
	Spec       string `yaml:"spec" json:"spec"`
	Model      string `yaml:"model,omitempty" json:"model,omitempty"` // name sent to the server; default name
	APIKeyEnv  string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	ChatFormat string `yaml:"chat_format,omitempty" json:"chat_format,omitempty"` // a built-in format, rendered for a GGUF or a server alike
	// SystemPrompt replaces the language-parametric default ("" = Malay for ms, neutral English otherwise).
	SystemPrompt string `yaml:"system_prompt,omitempty" json:"system_prompt,omitempty"`
}

// Dedup names the training corpora screened before scoring (spec §6).
type Dedup struct {
	Corpus []string `yaml:"corpus,omitempty" json:"corpus,omitempty"`
	// CorpusFrom says where Corpus came from when the config names none:
	// EnvDedupCorpus (spec §6: the hard-exclude is fired by MB_DEDUP_CORPUS).
	// Recorded in the manifest's config; the hash sees the corpus itself.
	CorpusFrom string  `yaml:"-" json:"corpus_from,omitempty"`
	TextField  string  `yaml:"text_field,omitempty" json:"text_field,omitempty"`
	MinChars   int     `yaml:"min_chars,omitempty" json:"min_chars,omitempty"`
	Jaccard    float64 `yaml:"jaccard,omitempty" json:"jaccard,omitempty"`
}

// EnvDedupCorpus names the training corpora to hard-exclude against when a
// config's dedup.corpus names none (spec §6).
const EnvDedupCorpus = "MB_DEDUP_CORPUS"

// MaxParallelShards bounds run.parallel_shards: an axis's inference runs
// in workflow runs that start this many shards each (the workflows'
// history bound), so no more can be in flight at once.
const MaxParallelShards = 250

// AggregateReserveSeconds of the global budget are kept back for scoring,
// the audit and aggregation after the last axis; max_wall_seconds must exceed it.
const AggregateReserveSeconds = 120

// Overrides are command-line values that replace config fields before validation.
type Overrides struct {
	Model        string // --model
	ModelID      string // --model-id
	JudgeOverlay bool   // --judge-overlay
	ChatTemplate string // --chat-template auto|always
	Limit        int    // --limit: rows per dataset at most; 0 leaves run.limit as configured
}

// Load reads, decodes strictly, applies defaults and validates the config at path.
func Load(path string, ov Overrides) (*Config, error) {
	if err := checkFileSize(path); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(data, path, filepath.Dir(path), ov)
}

// Parse decodes YAML named name (for errors); baseDir resolves relative paths.
func Parse(data []byte, name, baseDir string, ov Overrides) (*Config, error) {
	if err := checkSize(name, int64(len(data))); err != nil {
		return nil, err
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("config %s: empty document", name)
		}
		return nil, fmt.Errorf("config %s: %s", name, userError(data, err))
	}
	// An override replaces its own field and nothing else: the config's
	// paths still resolve against its folder, while a GGUF path given on
	// the command line (or in the workflow input) is the user's own,
	// relative to the working directory, and stays as written.
	modelBase := baseDir
	if ov.Model != "" {
		c.Model.Spec = ov.Model
		modelBase = ""
	}
	if ov.ModelID != "" {
		c.Model.ID = ov.ModelID
	}
	if ov.JudgeOverlay {
		c.Run.JudgeOverlay = true
	}
	if ov.ChatTemplate != "" {
		c.Run.ChatTemplate = ov.ChatTemplate
	}
	if ov.Limit != 0 {
		c.Run.Limit = &ov.Limit
	}
	c.applyDefaults(baseDir, modelBase)
	// A run key the document sets keeps its value, 0 included: seed 0 and
	// near_chance_eps 0 are values, bootstrap_resamples 0 is refused by
	// validate; only an absent key takes the default.
	var set struct {
		Run struct {
			Seed               *int64   `yaml:"seed"`
			BootstrapResamples *int     `yaml:"bootstrap_resamples"`
			NearChanceEps      *float64 `yaml:"near_chance_eps"`
		} `yaml:"run"`
	}
	if err := yaml.Unmarshal(data, &set); err == nil { // the strict decode above accepted data
		if v := set.Run.Seed; v != nil {
			c.Run.Seed = *v
		}
		if v := set.Run.BootstrapResamples; v != nil {
			c.Run.BootstrapResamples = *v
		}
		if v := set.Run.NearChanceEps; v != nil {
			c.Run.NearChanceEps = *v
		}
	}
	if err := c.checkFieldSizes(); err != nil { // before validate quotes them
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	if err := c.importLMEvalTasks(); err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	c.limitDatasets()
	return &c, nil
}

// WithLimit returns a copy of c whose every dataset reads at most n rows
// (or fewer, where the dataset or run.limit already says so): what
// --limit n makes of a config.
func (c *Config) WithLimit(n int) *Config {
	k := *c
	if c.Run.Limit != nil && *c.Run.Limit < n {
		n = *c.Run.Limit
	}
	k.Run.Limit = &n
	k.Axes = maps.Clone(c.Axes)
	k.limitDatasets()
	return &k
}

// limitDatasets lowers every dataset's limit to run.limit. The datasets'
// limits are part of Hash, and so is run.limit itself: a limited run
// never shares a config hash with a full one.
func (c *Config) limitDatasets() {
	if c.Run.Limit == nil {
		return
	}
	n := *c.Run.Limit
	for name, a := range c.Axes {
		a.Datasets = slices.Clone(a.Datasets)
		for i := range a.Datasets {
			if d := &a.Datasets[i]; d.Limit == 0 || d.Limit > n {
				d.Limit = n
			}
		}
		c.Axes[name] = a
	}
}

// applyDefaults fills in unset fields and resolves relative paths: the
// model's GGUF path against modelBase, every other path against baseDir.
func (c *Config) applyDefaults(baseDir, modelBase string) {
	c.BenchVersion = cmp.Or(c.BenchVersion, BenchVersion)
	c.Language = cmp.Or(c.Language, "ms")
	r := &c.Run
	r.MaxWallSeconds = cmp.Or(r.MaxWallSeconds, 10800)
	r.Seed = cmp.Or(r.Seed, 1234)
	r.BootstrapResamples = cmp.Or(r.BootstrapResamples, 1000)
	r.ShardSize = cmp.Or(r.ShardSize, 100)
	r.CheckpointEvery = cmp.Or(r.CheckpointEvery, 10)
	r.HeartbeatSeconds = cmp.Or(r.HeartbeatSeconds, DefaultHeartbeatSeconds)
	r.ParallelShards = cmp.Or(r.ParallelShards, 4)
	r.ChatTemplate = cmp.Or(r.ChatTemplate, "auto")
	if r.NearChanceEps == 0 {
		r.NearChanceEps = 0.05
		if env := os.Getenv("MB_NEAR_CHANCE_EPS"); env != "" {
			// validate refuses what does not parse (NaN) or is out of range.
			r.NearChanceEps = math.NaN()
			if v, err := strconv.ParseFloat(env, 64); err == nil {
				r.NearChanceEps = v
			}
		}
	}
	if r.JudgeFloor == nil {
		r.JudgeFloor = ptr(0.5)
	}
	c.Store.URI = cmp.Or(c.Store.URI, ".glossobench/store")
	if p, ok := strings.CutPrefix(c.Model.Spec, "gguf:"); ok && !filepath.IsAbs(p) && modelBase != "" {
		c.Model.Spec = "gguf:" + filepath.Join(modelBase, p)
	}
	for i, j := range c.Judges {
		if p, ok := strings.CutPrefix(j.Spec, "gguf:"); ok && !filepath.IsAbs(p) && baseDir != "" {
			c.Judges[i].Spec = "gguf:" + filepath.Join(baseDir, p)
		}
	}
	// Corpus files and globs resolve against the config's folder, like
	// dataset paths; S3 prefixes and absolute paths stay as written.
	for i, p := range c.Dedup.Corpus {
		if !strings.Contains(p, "://") && !filepath.IsAbs(p) && baseDir != "" {
			c.Dedup.Corpus[i] = filepath.Join(baseDir, p)
		}
	}
	if v := os.Getenv(EnvDedupCorpus); v != "" && len(c.Dedup.Corpus) == 0 {
		// Paths, globs or s3:// prefixes as in dedup.corpus, separated by
		// commas or white space; relative paths are the worker's.
		c.Dedup.Corpus = strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		c.Dedup.CorpusFrom = EnvDedupCorpus
	}
	if c.Model.ID == "" {
		c.Model.ID = defaultModelID(c.Model.Spec)
	}
	for name, a := range c.Axes {
		if a.Weight == nil {
			a.Weight = ptr(1.0)
		}
		a.Tier = cmp.Or(a.Tier, scorers.TierPublic)
		a.ScoringMode = cmp.Or(a.ScoringMode, "cloze")
		a.BaseDir = baseDir
		c.Axes[name] = a
	}
}

// FormatLMEvalTask is the dataset format whose fields come from an
// lm-evaluation-harness task YAML (DatasetConfig.LMEvalTask).
const FormatLMEvalTask = "lm-eval-task"

// importLMEvalTasks replaces each format lm-eval-task entry by the entry
// its task converts to (format mcq or nlg with fields), so the rest of
// the run reads an ordinary entry. A task the entry cannot fully express
// (process_docs, filters, other metrics, ...) is refused with the
// reasons: it would score differently from lm-eval under its name.
func (c *Config) importLMEvalTasks() error {
	for name, a := range c.Axes {
		for i, d := range a.Datasets {
			df := fmt.Sprintf("axes.%s.datasets[%d]", name, i)
			if d.Format != FormatLMEvalTask {
				if d.LMEvalTask != "" {
					return fmt.Errorf("%s.lm_eval_task: only with format %s", df, FormatLMEvalTask)
				}
				continue
			}
			if d.LMEvalTask == "" {
				return fmt.Errorf("%s.lm_eval_task: required with format %s (the task YAML)", df, FormatLMEvalTask)
			}
			if d.Fields != nil {
				return fmt.Errorf("%s.fields: the task gives them; write the entry out with glossobench import-task to change them", df)
			}
			p := d.LMEvalTask
			if !filepath.IsAbs(p) {
				p = filepath.Join(a.BaseDir, p)
			}
			t, err := lmevaltask.Load(p)
			if err != nil {
				return fmt.Errorf("%s.lm_eval_task: %w", df, err)
			}
			e, err := lmevaltask.Convert(t, d.Path)
			if err != nil {
				return fmt.Errorf("%s.lm_eval_task: %w", df, err)
			}
			if want := axisKind(name); e.Axis != want {
				return fmt.Errorf("%s.lm_eval_task: a %s task (%s), not one for the %s axis", df, e.Axis, t.Str("output_type"), name)
			}
			if len(e.Unsupported) > 0 {
				return fmt.Errorf("%s.lm_eval_task: %s: the entry would not do what the task does: %s (glossobench import-task writes the entry to adapt)", df, d.LMEvalTask, strings.Join(e.Unsupported, " "))
			}
			if err := hubSplitOfTask(&d, t); err != nil {
				return fmt.Errorf("%s: %w", df, err)
			}
			d.Format, d.Fields = e.Dataset.Format, e.Dataset.Fields
			if d.Name == "" {
				d.Name = e.Dataset.Name
			}
			a.Datasets[i] = d
		}
		c.Axes[name] = a
	}
	return nil
}

// hubSplitOfTask fills in config and split of an entry whose path names
// a Hub repository alone (hf://datasets/OWNER/NAME@REVISION) from the
// task's dataset_name and test split, so the task runs unedited on the
// Hub's Parquet files of that split. The repository must be the task's
// dataset_path, and a config or split the entry gives must be the task's.
func hubSplitOfTask(d *scorers.DatasetConfig, t *lmevaltask.Task) error {
	p, err := dataset.ParseHFRepo(d.Path)
	if err != nil {
		return nil // a file: the entry names the split itself
	}
	repo, config, split := t.Hub()
	if repo != p.Repo {
		return fmt.Errorf("path: %s is the repository %s; the task %s reads dataset_path %s", d.Path, p.Repo, t.Path, cmp.Or(repo, "(none)"))
	}
	if split == "" {
		return fmt.Errorf("split: the task %s names no test_split or validation_split; give split", t.Path)
	}
	for _, k := range []struct{ key, got, want string }{{"config", d.Config, config}, {"split", d.Split, split}} {
		if k.got != "" && k.got != k.want {
			return fmt.Errorf("%s: %q, but the task %s reads %q (leave it out: the task gives it)", k.key, k.got, t.Path, k.want)
		}
	}
	d.Config, d.Split = config, split
	return nil
}

// axisKind is the kind of fields an axis reads (dataset.Kinds).
func axisKind(axis string) string {
	switch axis {
	case "knowledge", "nlu", "cultural":
		return "mcq"
	}
	return axis
}

func (c *Config) validate() error {
	if c.Model.Spec == "" {
		return errors.New("model.spec: required (gguf:PATH, openai:URL or an http(s) URL); --model sets it too")
	}
	if !ValidModelSpec(c.Model.Spec) {
		return fmt.Errorf("model.spec: %q is not gguf:PATH, openai:URL or an http(s) URL", c.Model.Spec)
	}
	if c.Run.MaxWallSeconds <= AggregateReserveSeconds {
		return fmt.Errorf("run.max_wall_seconds: must exceed the %d s kept back for scoring and aggregation, got %d", AggregateReserveSeconds, c.Run.MaxWallSeconds)
	}
	if c.Run.ShardSize < 1 || c.Run.CheckpointEvery < 1 || c.Run.ParallelShards < 1 {
		return errors.New("run.shard_size, run.checkpoint_every, run.parallel_shards: must be at least 1")
	}
	if c.Run.ParallelShards > MaxParallelShards {
		return fmt.Errorf("run.parallel_shards: at most %d (an axis's inference runs in workflow runs of %d shards each, which keeps every history small), got %d", MaxParallelShards, MaxParallelShards, c.Run.ParallelShards)
	}
	if r := c.Run.BootstrapResamples; r < 30 || r > 2000 {
		return fmt.Errorf("run.bootstrap_resamples: must be 30 to 2000 (spec §3), got %d", r)
	}
	if e := c.Run.NearChanceEps; !(e >= 0 && e < 1) {
		return fmt.Errorf("run.near_chance_eps: must be at least 0 and below 1 (a chance-normalised score), got %g (from the config, else env MB_NEAR_CHANCE_EPS=%q)", e, os.Getenv("MB_NEAR_CHANCE_EPS"))
	}
	if l := c.Run.Limit; l != nil && *l < 1 {
		return fmt.Errorf("run.limit (--limit): the rows read from every dataset must be at least 1, got %d; leave it out to read whole datasets", *l)
	}
	if f := *c.Run.JudgeFloor; f < 0 || f > 1 {
		return fmt.Errorf("run.judge_floor: must be 0 to 1, got %g", f)
	}
	switch c.Run.ChatTemplate {
	case "auto", "always":
	default:
		return fmt.Errorf("run.chat_template: must be auto or always, got %q", c.Run.ChatTemplate)
	}
	if len(c.Axes) == 0 {
		return errors.New("axes: at least one axis is required")
	}
	for _, name := range c.AxisNames() {
		a := c.Axes[name]
		f := "axes." + name
		if scorers.AxisKind(name) == "" {
			return fmt.Errorf("%s: unknown axis (known: %s)", f, strings.Join(scorers.AxisNames(), ", "))
		}
		switch a.ScoringMode {
		case "cloze", "generate", "both":
		default:
			return fmt.Errorf("%s.scoring_mode: must be cloze, generate or both, got %q", f, a.ScoringMode)
		}
		switch a.Tier {
		case scorers.TierPublic, scorers.TierSelfbuilt:
		default:
			return fmt.Errorf("%s.tier: must be public or selfbuilt, got %q", f, a.Tier)
		}
		if *a.Weight < 0 {
			return fmt.Errorf("%s.weight: must not be negative, got %g", f, *a.Weight)
		}
		switch a.Scorer {
		case "":
		case scorers.ScorerRules:
			if name != "safety" {
				return fmt.Errorf("%s.scorer: only safety has a rule-based scorer, got %q", f, a.Scorer)
			}
		default:
			return fmt.Errorf("%s.scorer: must be rules or absent (the axis's judges), got %q", f, a.Scorer)
		}
		for _, p := range a.Probes {
			if p != "shuffle" && p != "unanswerable" {
				return fmt.Errorf("%s.probes: unknown probe %q (shuffle, unanswerable)", f, p)
			}
		}
		for i, d := range a.Datasets {
			df := fmt.Sprintf("%s.datasets[%d]", f, i)
			if d.Path == "" {
				return fmt.Errorf("%s.path: required", df)
			}
			if d.Format == "" && d.Fields == nil {
				return fmt.Errorf("%s.format: required (a preset, or the axis kind with fields)", df)
			}
			if err := validateDatasetSource(df, name, d); err != nil {
				return err
			}
			switch d.Register {
			case "", "HIGH", "MID", "LOW":
			default:
				return fmt.Errorf("%s.register: must be HIGH, MID or LOW, got %q", df, d.Register)
			}
			if d.Limit < 0 {
				return fmt.Errorf("%s.limit: must not be negative", df)
			}
			if d.TranslationOf != "" && !slices.ContainsFunc(a.Datasets, func(o scorers.DatasetConfig) bool { return o.Name == d.TranslationOf && o.Name != d.Name }) {
				return fmt.Errorf("%s.translation_of: %q is not another dataset of this axis", df, d.TranslationOf)
			}
		}
	}
	for i, j := range c.Judges {
		if j.Name == "" || j.Spec == "" {
			return fmt.Errorf("judges[%d]: name and spec are required", i)
		}
		if !ValidModelSpec(j.Spec) {
			return fmt.Errorf("judges[%d].spec: %q is not gguf:PATH, openai:URL or an http(s) URL", i, j.Spec)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// defaultModelID derives a model id from the spec: the GGUF file name or the URL.
func defaultModelID(spec string) string {
	if p, ok := strings.CutPrefix(spec, "gguf:"); ok {
		return strings.TrimSuffix(filepath.Base(p), ".gguf")
	}
	return spec
}

// ValidModelSpec reports whether spec names a backend the registry can open.
func ValidModelSpec(spec string) bool {
	for _, p := range []string{"gguf:", "openai:", "http://", "https://"} {
		if strings.HasPrefix(spec, p) && len(spec) > len(p) {
			return true
		}
	}
	return false
}

// AxisNames returns the configured axes in canonical order.
func (c *Config) AxisNames() []string {
	rank := map[string]int{}
	for i, a := range scorers.AxisNames() {
		rank[a] = i
	}
	names := make([]string, 0, len(c.Axes))
	for n := range c.Axes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, oki := rank[names[i]]
		rj, okj := rank[names[j]]
		if oki != okj {
			return oki
		}
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// Hash is the SHA-256 of the config's canonical YAML (after defaults),
// keeping what determines the numbers and nothing else. Field by field:
//
//   - bench_version, language: in.
//   - model: spec's kind only (gguf, openai, http; the path or URL is a
//     location, and the weights are pinned apart by ModelIdentity); id out
//     (a label: the same YAML under two ids is the same config); api_key_env
//     out (a credential's name); name, revision, flavor, concurrency,
//     timeout_seconds, max_retries, chat_format, strict_context and meta in
//     (what the server is asked, how requests are batched, timed out and
//     rendered, and meta's family, which excludes a judge of the model's own).
//   - run: max_wall_seconds (what the budget cuts), seed,
//     bootstrap_resamples, shard_size, parallel_shards, chat_template,
//     near_chance_eps, judge_overlay, judge_floor in; checkpoint_every and
//     heartbeat_seconds out (how often progress is saved and reported).
//   - store: out (where results go).
//   - axes: in, every key (the datasets' paths as written; their content is
//     hashed by ContentHash).
//   - judges: in, spec's kind only, api_key_env out, as for the model.
//   - dedup: in, corpus folders reduced to base names (S3 prefixes whole).
//
// It is the config part of ContentHash.
func (c *Config) Hash() string {
	k := *c
	k.Store = Store{}
	k.Model.ID, k.Model.APIKeyEnv = "", ""
	k.Model.Spec = specKind(c.Model.Spec)
	k.Run.CheckpointEvery, k.Run.HeartbeatSeconds = 0, 0
	k.Judges = slices.Clone(c.Judges)
	for i := range k.Judges {
		k.Judges[i].Spec = specKind(c.Judges[i].Spec)
		k.Judges[i].APIKeyEnv = ""
	}
	k.Dedup.Corpus = slices.Clone(c.Dedup.Corpus)
	for i, p := range k.Dedup.Corpus {
		if !strings.Contains(p, "://") {
			k.Dedup.Corpus[i] = filepath.Base(p)
		}
	}
	b, _ := yaml.Marshal(&k)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ContentHash is the published config_hash: what determines the numbers,
// not where it lies — the config's content (Hash) and the SHA-256 of every
// dataset file it reads, and of every GGUF judge. The same YAML and data in
// two folders or on two machines give the same hash; an edited dataset row
// gives another.
func (c *Config) ContentHash() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "config %s\n", c.Hash())
	for _, name := range c.AxisNames() {
		a := c.Axes[name]
		for i, d := range a.Datasets {
			sum, err := dataSHA256(a.BaseDir, d.Path, d.SHA256)
			if err != nil {
				return "", fmt.Errorf("axes.%s.datasets[%d].path: %w", name, i, err)
			}
			fmt.Fprintf(h, "data %s %d %s\n", name, i, sum)
			if f := d.Fewshot; f != nil {
				sum, err := dataSHA256(a.BaseDir, f.Path, f.SHA256)
				if err != nil {
					return "", fmt.Errorf("axes.%s.datasets[%d].fewshot.path: %w", name, i, err)
				}
				fmt.Fprintf(h, "fewshot %s %d %s\n", name, i, sum)
			}
		}
	}
	for i, j := range c.Judges {
		if p, ok := strings.CutPrefix(j.Spec, "gguf:"); ok {
			sum, err := FileSHA256(p)
			if err != nil {
				return "", fmt.Errorf("judges[%d].spec: %w", i, err)
			}
			fmt.Fprintf(h, "judge %d %s\n", i, sum)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// dataSHA256 is what identifies a dataset file's content: its sha256 pin
// when the config gives one (hf:// requires it), the SHA-256 of a local
// file, and for an unpinned remote object (s3://) its URI, the only identity
// known without fetching it.
func dataSHA256(baseDir, path, pin string) (string, error) {
	switch {
	case pin != "":
		return strings.ToLower(pin), nil
	case strings.Contains(path, "://"):
		return "uri " + path, nil
	case !filepath.IsAbs(path) && baseDir != "":
		path = filepath.Join(baseDir, path)
	}
	return FileSHA256(path)
}

// FileSHA256 is the hex SHA-256 of a file's content.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// specKind is a model spec without its location: the backend kind and, for
// a server, nothing more (its model name and revision are config fields).
func specKind(spec string) string {
	kind, _, _ := strings.Cut(spec, ":")
	return kind
}
