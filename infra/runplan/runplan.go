// Package runplan says what a run with a config scores: the axes and their
// items, the axes it skips and why, its judges after self-judge exclusion,
// and its screening options. Prepare plans a run with it, and the offline
// commands (dedup, elo, check) read a config the same way, so both see the
// same item set.
package runplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/dedup"
	"github.com/glossobench/glossobench/scorers/judge"
)

// ModelMeta is the evaluated model's meta (spec §10 #2, #3, #11): the
// config's model.meta when it sets any field, else the entry for model.id in
// MB_MODELS_META (a JSON object of model_id → meta). Only Prepare (which
// records it in the manifest) and offline commands read the environment.
func ModelMeta(cfg *config.Config) config.ModelMeta {
	if cfg.Model.Meta != (config.ModelMeta{}) {
		return cfg.Model.Meta
	}
	var meta map[string]config.ModelMeta
	if json.Unmarshal([]byte(os.Getenv("MB_MODELS_META")), &meta) == nil {
		return meta[cfg.Model.ID]
	}
	return config.ModelMeta{}
}

// Judges returns the config's judges as the judge package takes them.
func Judges(cfg *config.Config) []judge.Config {
	var all []judge.Config
	for _, j := range cfg.Judges {
		all = append(all, judge.Config{Name: j.Name, Family: j.Family, Version: j.Version, Spec: j.Spec, Model: j.Model,
			APIKeyEnv: j.APIKeyEnv, ChatFormat: j.ChatFormat, SystemPrompt: j.SystemPrompt})
	}
	return all
}

// KeptJudges applies self-judge exclusion (symmetric family match) for a
// model of the given meta, and names the judges it leaves out.
func KeptJudges(cfg *config.Config, meta config.ModelMeta) ([]judge.Config, []string) {
	return judge.SelfExclude(Judges(cfg), meta.Family)
}

// DedupOptions are the screening options a run with cfg uses.
func DedupOptions(cfg *config.Config) dedup.Options {
	return dedup.Options{MinExactLen: cfg.Dedup.MinChars, Jaccard: cfg.Dedup.Jaccard}
}

// PredictOptions are how a run with cfg asks the model about the axis's items.
func PredictOptions(cfg *config.Config, axis string) scorers.PredictOptions {
	ac := cfg.Axes[axis]
	return scorers.PredictOptions{
		ScoringMode: ac.ScoringMode, ChatTemplate: cfg.Run.ChatTemplate, MaxTokens: ac.MaxTokens,
		Seed: cfg.Run.Seed, Options: ac.Options,
	}
}

// ScoreOptions are how a run with cfg scores the axis.
func ScoreOptions(cfg *config.Config, axis string) scorers.ScoreOptions {
	ac := cfg.Axes[axis]
	return scorers.ScoreOptions{
		ScoringMode: ac.ScoringMode, Seed: cfg.Run.Seed, BootstrapResamples: cfg.Run.BootstrapResamples, Options: ac.Options,
		JudgeFloor: cfg.Run.JudgeFloor, Scorer: ac.Scorer,
	}
}

// Overlaid reports whether a verifiable axis's responses are rated by the
// judge overlay (a secondary judge_quality beside its own score).
func Overlaid(cfg *config.Config, axis string) bool {
	ax, _ := scorers.AxisNamed(axis)
	return !JudgedBy(ax, cfg.Axes[axis]) && OverlayOn(cfg, axis) && len(cfg.Judges) > 0
}

// AxisItems is one axis a run scores, with its items.
type AxisItems struct {
	Name  string
	Axis  scorers.Axis
	Items []scorers.Item
}

// LoadAxes loads the items of every axis a run with cfg scores, in axis
// order, and lists the axes it skips (see EachAxis).
func LoadAxes(cfg *config.Config, meta config.ModelMeta) ([]AxisItems, []runfiles.Skip, error) {
	var out []AxisItems
	skipped, err := EachAxis(cfg, meta, func(name string, ax scorers.Axis, each func(func(scorers.Item) error) error) error {
		la := AxisItems{Name: name, Axis: ax}
		err := each(func(it scorers.Item) error {
			la.Items = append(la.Items, it)
			return nil
		})
		out = append(out, la)
		return err
	})
	return out, skipped, err
}

// A DataError is a failure reading an axis's datasets, as opposed to one of
// EachAxis's caller (a store write): retrying does not mend it.
type DataError struct{ Err error }

func (e *DataError) Error() string { return e.Err.Error() }
func (e *DataError) Unwrap() error { return e.Err }

// EachAxis calls fn, in axis order, for every axis a run with cfg scores for
// a model of the given meta, with a function that reads the axis's items one
// at a time; it returns the axes it skips. Items are streamed from the
// dataset files when the axis plugin can (scorers.Streamer), so an axis of
// any size is never loaded whole; others are loaded whole and handed out one
// by one. A dataset that cannot be read is a *DataError.
func EachAxis(cfg *config.Config, meta config.ModelMeta, fn func(name string, ax scorers.Axis, each func(func(scorers.Item) error) error) error) ([]runfiles.Skip, error) {
	judges, excluded := KeptJudges(cfg, meta)
	var skipped []runfiles.Skip
	for _, name := range cfg.AxisNames() {
		ac := cfg.Axes[name]
		ax, ok := scorers.AxisNamed(name)
		if !ok {
			skipped = append(skipped, runfiles.Skip{Axis: name, Reason: "axis plugin not available in this build"})
			continue
		}
		if scorers.NeedsJudges(ax.ScorerType(), ac) && len(judges) == 0 {
			// Judge axes never hard-block a run: they are skipped and listed (spec §4).
			reason := "skipped_no_judge: no judges configured"
			if len(excluded) > 0 {
				reason = "skipped_no_judge: every judge shares the model's family"
			}
			skipped = append(skipped, runfiles.Skip{Axis: name, Reason: reason})
			continue
		}
		if err := fn(name, ax, items(name, ax, ac)); err != nil {
			return nil, err
		}
	}
	return skipped, nil
}

// items returns the reader of an axis's items, each labelled with its
// dataset's register where the row states none.
func items(name string, ax scorers.Axis, ac scorers.AxisConfig) func(func(scorers.Item) error) error {
	registers, paths := map[string]string{}, map[string]string{}
	for _, d := range ac.Datasets {
		registers[d.Name], paths[d.Name] = d.Register, d.Path
	}
	return func(yield func(scorers.Item) error) error {
		var yieldErr error // the caller's own failure, not the data's
		emit := func(it scorers.Item) error {
			if len(it.ID) > scorers.MaxItemIDBytes {
				return fmt.Errorf("%s:%d: item id: %d bytes, more than the %d an item id may have (ids are quoted in notes and errors)",
					paths[it.Dataset], it.Line, len(it.ID), scorers.MaxItemIDBytes)
			}
			if it.Register == "" {
				it.Register = registers[it.Dataset]
			}
			yieldErr = yield(it)
			return yieldErr
		}
		var err error
		if s, ok := ax.(scorers.Streamer); ok {
			err = s.Each(ac, emit)
		} else {
			var items []scorers.Item
			if items, err = ax.Load(ac); err == nil {
				for _, it := range items {
					if err := emit(it); err != nil {
						return err
					}
				}
			}
		}
		if err == nil || yieldErr != nil {
			return err
		}
		return &DataError{fmt.Errorf("axes.%s: %w", name, err)}
	}
}

// Request is what EvalRun knows at start: where the config is (or the
// config itself) and the command line's overrides of it.
type Request struct {
	RunID      string `json:"run_id"`
	ConfigPath string `json:"config_path,omitempty"`
	ConfigYAML string `json:"config,omitempty"` // inline config; relative paths resolve against the worker's directory
	Model      string `json:"model,omitempty"`
	ModelID    string `json:"model_id,omitempty"`
	// JudgeOverlay turns the judge overlay on for every verifiable axis.
	JudgeOverlay bool `json:"judge_overlay,omitempty"`
	// ChatTemplate overrides run.chat_template (auto | always).
	ChatTemplate string `json:"chat_template,omitempty"`
	// Limit overrides run.limit: every dataset read to at most this many rows.
	Limit int `json:"limit,omitempty"`
	// AllowNewModel resumes a run whose model changed (other weights, or
	// another model served) by starting its unfinished axes over on the
	// new one; without it such a resume is refused.
	AllowNewModel bool `json:"allow_new_model,omitempty"`
}

// Load reads the config the request carries (inline, relative paths
// resolving against the working directory) or names, with the request's
// overrides.
func (r Request) Load() (*config.Config, error) {
	ov := config.Overrides{Model: r.Model, ModelID: r.ModelID, JudgeOverlay: r.JudgeOverlay, ChatTemplate: r.ChatTemplate, Limit: r.Limit}
	switch {
	case r.ConfigYAML != "":
		wd, _ := os.Getwd()
		return config.Parse([]byte(r.ConfigYAML), "inline config", wd, ov)
	case r.ConfigPath != "":
		return config.Load(r.ConfigPath, ov)
	}
	return nil, errors.New("config: neither config_path nor config is set in the workflow input")
}

// JudgedBy reports whether the axis's judges score it: it is rated by
// judges (judge.Rated) and its config does not choose the rules scorer.
func JudgedBy(ax scorers.Axis, ac scorers.AxisConfig) bool {
	_, ok := ax.(judge.Rated)
	return ok && ac.Scorer != scorers.ScorerRules
}

// OverlayOn reports whether the judge overlay is on for an axis.
func OverlayOn(cfg *config.Config, axis string) bool {
	return cfg.Run.JudgeOverlay || cfg.Axes[axis].JudgeOverlay
}

// JudgeRequests is what the judges are asked about an axis's responses:
// a judged axis's own requests, or (spec §4) a verifiable axis's overlay,
// a secondary 0-10 judge_quality of each generated response whose score
// stays the headline; nil when the axis is not judged.
func JudgeRequests(cfg *config.Config, axis string) (requests func([]scorers.Item, []scorers.Prediction) []judge.Request, overlay bool) {
	ax, _ := scorers.AxisNamed(axis)
	switch {
	case JudgedBy(ax, cfg.Axes[axis]):
		return ax.(judge.Rated).JudgeRequests, false
	case OverlayOn(cfg, axis):
		return judge.OverlayRequests, true
	}
	return nil, false
}

// NewPlan is the plan of a run of cfg before its axes are loaded.
func NewPlan(run, storeURI string, cfg *config.Config, configHash string) runfiles.Plan {
	return runfiles.Plan{
		RunID: run, StoreURI: storeURI, BenchVersion: cfg.BenchVersion, SchemaVersion: config.SchemaVersion,
		ConfigHash: configHash, ModelID: cfg.Model.ID, ModelSpec: cfg.Model.Spec,
		MaxWallSeconds: cfg.Run.MaxWallSeconds, ParallelShards: cfg.Run.ParallelShards, HeartbeatSecs: cfg.Run.HeartbeatSeconds,
	}
}

// AxisPlan is the plan of an axis of n items in a run of cfg whose kept
// judges number judges.
func AxisPlan(cfg *config.Config, name string, ax scorers.Axis, n, judges int) runfiles.AxisPlan {
	ac := cfg.Axes[name]
	return runfiles.AxisPlan{
		Name: name, Version: ax.Version(), Items: n, Weight: ac.WeightValue(), Tier: ac.Tier,
		ScoringMode: ac.ScoringMode, Judged: (JudgedBy(ax, ac) || OverlayOn(cfg, name)) && judges > 0, Probes: ac.Probes,
	}
}

// AuditDesigns are the detectors an axis's audit rows may name: the axis's
// own and the judge overlay's, whose label is the axis's verifiable outcome.
func AuditDesigns(ax scorers.Axis) (map[string]scorers.AuditDesign, []string) {
	out := map[string]scorers.AuditDesign{}
	var order []string
	if au, ok := ax.(scorers.Audited); ok {
		for _, d := range au.AuditDesigns() {
			out[d.Detector] = d
			order = append(order, d.Detector)
		}
	}
	col, is := "label", "the axis's verifiable outcome for the item"
	if v, ok := ax.(scorers.Verifiable); ok {
		col, is = v.VerifiableLabel()
	}
	out[judge.DetectorOverlay] = judge.OverlayDesign(col, is)
	return out, append(order, judge.DetectorOverlay)
}
