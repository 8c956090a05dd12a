package activities

import (
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/audit"
)

// PrepareInput is what EvalRun knows at start: where the config is and which model to score.
type PrepareInput struct {
	RunID      string `json:"run_id"`
	ConfigPath string `json:"config_path,omitempty"`
	ConfigYAML string `json:"config,omitempty"` // inline config; relative paths resolve against the worker's directory
	Model      string `json:"model,omitempty"`
	ModelID    string `json:"model_id,omitempty"`
	// JudgeOverlay turns the judge overlay on for every verifiable axis.
	JudgeOverlay bool `json:"judge_overlay,omitempty"`
	// ChatTemplate overrides run.chat_template (auto | always).
	ChatTemplate string `json:"chat_template,omitempty"`
}

// Plan is the prepared run: small, so it can travel through workflow history.
type Plan struct {
	RunID          string     `json:"run_id"`
	StoreURI       string     `json:"store_uri"`
	BenchVersion   string     `json:"bench_version"`
	SchemaVersion  string     `json:"schema_version"`
	ConfigHash     string     `json:"config_hash"`
	ModelID        string     `json:"model_id"`
	ModelSpec      string     `json:"model_spec"`
	MaxWallSeconds int        `json:"max_wall_seconds"`
	ParallelShards int        `json:"parallel_shards"`
	HeartbeatSecs  int        `json:"heartbeat_seconds"`
	Axes           []AxisPlan `json:"axes"`
	Skipped        []Skip     `json:"skipped,omitempty"`
	// CorpusShards is how many byte-range shards of the dedup corpus the
	// workflow screens in parallel (0: no corpus).
	CorpusShards int `json:"corpus_shards,omitempty"`
	// ExcludedJudges share the evaluated model's family and were dropped (spec §10 #2).
	ExcludedJudges []string `json:"excluded_judges,omitempty"`
}

// AxisPlan is one axis of the plan.
type AxisPlan struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Items       int      `json:"items"`
	Weight      float64  `json:"weight"`
	Tier        string   `json:"tier"`
	ScoringMode string   `json:"scoring_mode"`
	Judged      bool     `json:"judged"`
	Probes      []string `json:"probes,omitempty"`
}

// Skip is an axis that did not run, with the reason.
type Skip struct {
	Axis   string `json:"axis"`
	Reason string `json:"reason"`
}

// RunRef names a run's stored state; every activity input embeds it.
type RunRef struct {
	RunID    string `json:"run_id"`
	StoreURI string `json:"store_uri"`
}

// DedupResult says what dedup kept, per axis, and how the kept items were sharded.
type DedupResult struct {
	Corpus     string      `json:"corpus"` // "no corpus" or a summary of the screened files
	KeptSHA256 string      `json:"kept_sha256"`
	Axes       []AxisDedup `json:"axes"`
	Notes      []string    `json:"notes,omitempty"`
}

// AxisDedup is one axis's dedup outcome and its shards.
type AxisDedup struct {
	Axis              string   `json:"axis"`
	Kept              int      `json:"kept"`
	Dropped           int      `json:"dropped"`
	ContaminationRate *float64 `json:"contamination_rate"` // nil when no corpus was screened
	Shards            []int    `json:"shards"`             // item count per shard
}

// ShardInput names one shard of one axis.
type ShardInput struct {
	RunRef
	Axis  string `json:"axis"`
	Shard int    `json:"shard"`
}

// ShardResult is how an inference activity left its shard.
type ShardResult struct {
	Total  int `json:"total"`
	Done   int `json:"done"`   // items with a checkpointed prediction
	Reused int `json:"reused"` // of Done, answered by an earlier attempt
}

// AxisInput names one axis of a run.
type AxisInput struct {
	RunRef
	Axis string `json:"axis"`
}

// StageNote is the outcome of a stage that has nothing to compute for an axis.
type StageNote struct {
	Note string `json:"note"`
}

// AuditSummary is the leakage audit's reading of one axis (spec 003).
type AuditSummary struct {
	Verdict          string      `json:"verdict"` // or "not pooled" / a skip reason
	Sources          int         `json:"sources"`
	Headline         *float64    `json:"headline,omitempty"`
	CI95             *[2]float64 `json:"headline_ci95,omitempty"`
	MeasurementsOnly *float64    `json:"measurements_only,omitempty"`
	SourceOnly       *float64    `json:"source_only,omitempty"`
	L                *float64    `json:"l,omitempty"`
	LMin             *float64    `json:"l_min,omitempty"`
	Line             string      `json:"line,omitempty"`
	ReportKey        string      `json:"report_key,omitempty"`
	// Rows is how many rows the pool holds (an item per row, or an item
	// and judge per row for a judge's detector).
	Rows int `json:"rows,omitempty"`

	// Detector is how the rows were rated: "mean-half" (the paper's fixed
	// half-and-half rating) at the top level, "logreg" or "rf" in Trained.
	Detector string `json:"detector,omitempty"`
	// Folds is the one stratified k-fold split a trained detector shares
	// between its headline and measurements-only views; Seed seeds every
	// random step (the run's seed).
	Folds       int     `json:"folds,omitempty"`
	Seed        uint64  `json:"seed,omitempty"`
	Floor       float64 `json:"floor,omitempty"`
	Band        float64 `json:"band,omitempty"`
	FloorPassed *bool   `json:"floor_passed,omitempty"`
	FloorRule   string  `json:"floor_rule,omitempty"` // "point" or "stricter" (near the floor)
	// Shuffle is L under N shuffles of the source tags (N is recorded in it).
	Shuffle *audit.Shuffle `json:"shuffle,omitempty"`
	// Fingerprint is how well the measurements alone predict the source,
	// a property of the rows, so only the top level carries it.
	Fingerprint *audit.Fingerprint `json:"fingerprint,omitempty"`
	// Sensitivity is the verdict over floors 0.60–0.70 and bands 0.85–0.95
	// in short form; the full grid is in the stored report.
	Sensitivity *AuditSensitivity `json:"sensitivity,omitempty"`
	Warnings    []string          `json:"warnings,omitempty"`
	// RowsKey holds the audited rows as CSV and Command re-runs this audit
	// on them with glossobench audit (paths relative to the store).
	RowsKey string `json:"rows_key,omitempty"`
	Command string `json:"command,omitempty"`
	// Trained are the out-of-fold trained detectors on the same rows
	// (logistic regression; a random forest when cheap enough), with
	// TrainedNote saying which were left out and why.
	Trained     []AuditSummary `json:"trained,omitempty"`
	TrainedNote string         `json:"trained_note,omitempty"`

	// Design names what this pool audits: the detector that rates each row,
	// the label it is scored against and the source tag the rows are pooled by.
	Design *scorers.AuditDesign `json:"design,omitempty"`
	// Pools are the axis's further pools (the summary itself is the first).
	Pools []AuditSummary `json:"pools,omitempty"`
}

// AuditSensitivity says whether a default floor or band decides the verdict.
type AuditSensitivity struct {
	Stable  bool     `json:"stable"`            // one verdict over the whole grid
	Regions []string `json:"regions,omitempty"` // where other verdicts occur
}

// AxisOutcome is everything the workflow learned about one axis.
type AxisOutcome struct {
	Result       scorers.AxisResult `json:"result"`
	Weight       float64            `json:"weight"`
	Tier         string             `json:"tier"`
	Dropped      int                `json:"dropped_budget"` // kept items never scored because the budget ran out
	StoppedEarly bool               `json:"stopped_early"`
	Audit        *AuditSummary      `json:"audit,omitempty"`
	StageNotes   []string           `json:"stage_notes,omitempty"`
}

// AggregateInput is the last stage's input.
type AggregateInput struct {
	RunRef
	Plan     Plan          `json:"plan"`
	Dedup    DedupResult   `json:"dedup"`
	Outcomes []AxisOutcome `json:"outcomes"`
	Skipped  []Skip        `json:"skipped,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
}

// Summary is the run's headline, returned to the workflow; result.json has the rest.
type Summary struct {
	ResultKey      string              `json:"result_key"`
	ResultPath     string              `json:"result_path,omitempty"` // on a local store
	MSPublic       *float64            `json:"ms_public"`
	MSPooled       *float64            `json:"ms_pooled"`
	MSExperimental *float64            `json:"ms_experimental"`
	MSCI95         *[2]float64         `json:"ms_ci95"`
	Axes           map[string]*float64 `json:"axes"`
	NearChanceAxes []string            `json:"near_chance_axes"`
	Skipped        []Skip              `json:"skipped"`
}
