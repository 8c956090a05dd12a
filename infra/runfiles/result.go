package runfiles

import (
	"fmt"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/audit"
)

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
	// SearchAttributes are those of GlossoBench's search attributes the
	// run's namespace has; EvalRun sets them on itself. Found once here, so
	// a replayed workflow decides as the first execution did.
	SearchAttributes []string `json:"search_attributes,omitempty"`
	// ModelIdentity is what was measured: the GGUF file's SHA-256, or the
	// model name a server reports and the configured revision (spec §5, §8).
	ModelIdentity ModelIdentity `json:"model_identity"`
	// ModelChanges say how the run went on after its model changed
	// (--allow-new-model): which axes started over, which were kept.
	ModelChanges []string `json:"model_changes,omitempty"`
}

// ModelChange is the record of a resume on another model
// (--allow-new-model): ModelChangeKey(run, N), create-only.
type ModelChange struct {
	N           int           `json:"n"` // 1 for the run's first change
	Was         ModelIdentity `json:"was"`
	Now         ModelIdentity `json:"now"`
	StartedOver []string      `json:"started_over"` // axes whose checkpoints of the earlier model no longer count
	Kept        []string      `json:"kept"`         // axes scored on the earlier model before the change
	Note        string        `json:"note"`
}

// Generation is the checkpoint generation of an axis: 0 as the run first
// started it, n once it started over on the run's n-th model change.
func (p *Plan) Generation(axis string) int {
	for _, a := range p.Axes {
		if a.Name == axis {
			return a.Generation
		}
	}
	return 0
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
	// Generation is which of the axis's checkpoints count (see
	// CheckpointKind); 0 unless the axis started over on a new model.
	Generation int `json:"generation,omitempty"`
}

// ModelIdentity identifies the evaluated weights beyond the configured label.
type ModelIdentity struct {
	Backend     string `json:"backend"`                // gguf | openai | http | https
	File        string `json:"file,omitempty"`         // a GGUF file's name
	SHA256      string `json:"sha256,omitempty"`       // a GGUF file's content
	ServerModel string `json:"server_model,omitempty"` // the model a server reports serving (/v1/models)
	Revision    string `json:"revision,omitempty"`     // model.revision
	Note        string `json:"note,omitempty"`         // why a server's model name is missing
}

// Manifest is runs/<run>/manifest.json: the resolved config and the plan.
type Manifest struct {
	Config *config.Config `json:"config"`
	Plan   Plan           `json:"plan"`
	// ModelMeta is the evaluated model's meta as Prepare resolved it
	// (model.meta, else MB_MODELS_META's entry for model.id, read once
	// there): later stages on any worker read it here, never the environment.
	ModelMeta config.ModelMeta `json:"model_meta"`
}

// Skip is an axis that did not run, with the reason.
type Skip struct {
	Axis   string `json:"axis"`
	Reason string `json:"reason"`
	// Failed: the axis started and its model failed every request alike;
	// Reason is the cause, and `glossobench run` exits non-zero.
	Failed bool `json:"failed,omitempty"`
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

// Result is result.json.
type Result struct {
	BenchVersion   string                `json:"bench_version"`
	SchemaVersion  string                `json:"schema_version"`
	PluginVersions map[string]string     `json:"plugin_versions"`
	RunID          string                `json:"run_id"`
	ModelID        string                `json:"model_id"`
	ModelMeta      *config.ModelMeta     `json:"model_meta,omitempty"`
	ModelIdentity  *ModelIdentity        `json:"model_identity,omitempty"` // the weights measured (spec §5)
	ConfigHash     string                `json:"config_hash"`
	Seed           int64                 `json:"seed"`
	Limit          int                   `json:"limit,omitempty"` // run.limit (--limit): a partial run, every dataset read to at most this many rows
	Axes           map[string]AxisReport `json:"axes"`
	ExcludedJudges []string              `json:"excluded_judges,omitempty"` // self-judge exclusion (spec §10 #2)
	Summary        ResultSummary         `json:"summary"`
	Store          string                `json:"store"`
}

// AxisOutcome is everything the workflow learned about one axis:
// AxisResultKey's object, and what Aggregate makes the axis's report of.
type AxisOutcome struct {
	Result       scorers.AxisResult `json:"result"`
	Weight       float64            `json:"weight"`
	Tier         string             `json:"tier"`
	Dropped      int                `json:"dropped_budget"` // kept items never scored because the budget ran out
	StoppedEarly bool               `json:"stopped_early"`
	Audit        *AuditSummary      `json:"audit,omitempty"`
	StageNotes   []string           `json:"stage_notes,omitempty"`
	// Usage sums what the axis's checkpointed answers cost.
	Usage *AxisUsage `json:"usage,omitempty"`
}

// AxisReport is one axis in result.json: its score and measurement profile.
type AxisReport struct {
	scorers.AxisResult
	Weight        float64            `json:"weight"`
	Tier          string             `json:"tier"`
	Discriminates bool               `json:"discriminates"` // chance-normalised score above near_chance_eps
	Profile       MeasurementProfile `json:"measurement_profile"`
	ScoresKey     string             `json:"scores_key"`
	// Usage sums what the axis's answers cost (absent in runs before it).
	Usage *AxisUsage `json:"usage,omitempty"`
}

// AxisUsage sums the usage of an axis's checkpointed answers (each
// prediction's usage): tokens in and out, request attempts, failed attempts
// and retries, and the items' wall time in milliseconds. Items counts the
// answers that recorded a usage (answers from the cache record none).
type AxisUsage struct {
	Items int `json:"items"`
	backends.Usage
}

// Add counts one answer's usage; nil (none recorded) is skipped.
func (a *AxisUsage) Add(u *backends.Usage) {
	if u == nil {
		return
	}
	a.Items++
	a.Usage.Add(*u)
}

// MeasurementProfile is the per-axis profile of spec §0.
type MeasurementProfile struct {
	N                 int           `json:"n"`
	ScorerType        string        `json:"scorer_type"`
	InterJudgeKappa   *float64      `json:"inter_judge_kappa"`
	ContaminationRate any           `json:"contamination_rate"` // a rate, or "no corpus"
	Leakage           *AuditSummary `json:"leakage"`
	StageNotes        []string      `json:"stage_notes,omitempty"`
	RegisterMix       any           `json:"register_mix,omitempty"` // share of scored items per register, when the data labels registers
	// Register names the registers the scored items state (spec §0,
	// principle 4), or "unstated" when the data labels none.
	Register string `json:"register"`
}

// ResultSummary is the run-level summary of spec §2–3.
type ResultSummary struct {
	MSPublic       *float64    `json:"ms_public"`
	MSPooled       *float64    `json:"ms_pooled"`
	MSExperimental *float64    `json:"ms_experimental"`
	MSCI95         *[2]float64 `json:"ms_ci95"`
	MSAxes         []string    `json:"ms_axes"` // the axes the MS is over
	MSNote         string      `json:"ms_note"`
	// MSRanking is the ranking mean (spec §4): the weighted mean of the
	// public axes that discriminate, what every ranking view ranks by;
	// MSRankingLeftOut are the scored public axes it leaves out as near chance.
	MSRanking        *float64 `json:"ms_ranking"`
	MSRankingAxes    []string `json:"ms_ranking_axes"`
	MSRankingLeftOut []string `json:"ms_ranking_left_out"`
	MSRankingNote    string   `json:"ms_ranking_note"`
	// Warnings are the axes' WARNING notes (truncation, spec §10 #9), each
	// prefixed with its axis, for the run's printed summary.
	Warnings       []string    `json:"warnings"`
	SkippedAxes    []Skip      `json:"skipped_axes"`
	SkippedNoJudge []string    `json:"skipped_no_judge"`
	NearChanceAxes []string    `json:"near_chance_axes"`
	NearChanceEps  float64     `json:"near_chance_eps"`
	Dedup          DedupResult `json:"dedup"`
	Notes          []string    `json:"notes"`
}

// FormatScore prints an optional score as the commands' tables show it:
// to four places, or "-" when there is none.
func FormatScore(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.4f", *v)
}
