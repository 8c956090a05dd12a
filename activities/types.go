package activities

import "github.com/glossobench/glossobench/infra/runplan"

// PrepareInput is what EvalRun knows at start (runplan.Request).
type PrepareInput = runplan.Request

// RunRef names a run's stored state; every activity input embeds it.
type RunRef struct {
	RunID    string `json:"run_id"`
	StoreURI string `json:"store_uri"`
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

// DedupCounts is what EvalRun needs of Dedup: per axis, how many items were
// kept and into how many shards. The full DedupResult, an item count per
// shard among it, stays in the store (runfiles.DedupKey): it grows with the
// shards and the workflow's history must not.
type DedupCounts struct {
	Axes []AxisCounts `json:"axes"`
}

// AxisCounts is one axis in DedupCounts.
type AxisCounts struct {
	Axis   string `json:"axis"`
	Kept   int    `json:"kept"`
	Shards int    `json:"shards"`
}

// CountsOf is what of d EvalRun keeps.
func CountsOf(d DedupResult) DedupCounts {
	var c DedupCounts
	for _, ad := range d.Axes {
		c.Axes = append(c.Axes, AxisCounts{Axis: ad.Axis, Kept: ad.Kept, Shards: len(ad.Shards)})
	}
	return c
}

// AggregateInput is the last stage's input. Aggregate reads the dedup
// result from the store.
type AggregateInput struct {
	RunRef
	Plan     Plan          `json:"plan"`
	Outcomes []AxisOutcome `json:"outcomes"`
	Skipped  []Skip        `json:"skipped,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
}

// Summary is the run's headline, returned to the workflow; result.json has the rest.
type Summary struct {
	// StoreURI and ResultKey say where result.json is, so a parent workflow
	// (LeaderboardRefresh) reads it from the store the run wrote to.
	StoreURI       string              `json:"store_uri,omitempty"`
	ResultKey      string              `json:"result_key"`
	ResultPath     string              `json:"result_path,omitempty"` // on a local store
	MSPublic       *float64            `json:"ms_public"`
	MSPooled       *float64            `json:"ms_pooled"`
	MSExperimental *float64            `json:"ms_experimental"`
	MSCI95         *[2]float64         `json:"ms_ci95"`
	Axes           map[string]*float64 `json:"axes"`
	NearChanceAxes []string            `json:"near_chance_axes"`
	Skipped        []Skip              `json:"skipped"`
	MSRanking      *float64            `json:"ms_ranking"`
	MSRankingAxes  []string            `json:"ms_ranking_axes"`
	Warnings       []string            `json:"warnings,omitempty"` // the axes' WARNING notes, "axis: note"
}
