// Package runfiles owns a run's files in the store: where each one lives
// (the key layout), how JSONL objects are read and written, and the Go types
// of manifest.json and result.json. The stages write a run through it and
// every reader of a finished run (commands, report, release, rescore, Elo,
// leaderboard, concord, correlate) reads it through it, so a field added to
// result.json is added once.
//
// Store key layout (local disk and S3 alike):
//
//	runs/<run>/manifest.json                      the resolved config and the plan
//	runs/<run>/model-change-<nnnn>.json           a resume on another model (--allow-new-model)
//	runs/<run>/<axis>/items.jsonl                 every loaded item
//	runs/<run>/dedup.json                         what dedup kept and dropped
//	runs/<run>/<axis>/shards/<nnnn>/items.jsonl   the kept items of one shard
//	runs/<run>/<axis>/shards/<nnnn>/pred-<kkkkk>.jsonl  predictions, one object per checkpoint
//	                                              (pred-g<n>-<kkkkk>.jsonl once the axis started over)
//	runs/<run>/<axis>/scores.jsonl                per-item scores
//	runs/<run>/<axis>/axis.json                   the axis result
//	runs/<run>/<axis>/audit-<detector>-<source>{-rows.csv,.json,-logreg.json,-rf.json}
//	                                              the leakage audit's rows and reports
//	runs/<run>/result.json                        the run result
//	runs/<run>/anchors/<row sha256>.json          the hash of each leaderboard row made from the run
//
// A run folder is runs/<run>; the names below (ResultName, ScoresName, ...)
// are relative to it, so a folder on disk and a run in the store are read
// alike (see Folder).
package runfiles

import "fmt"

// Names of a run's files relative to its folder runs/<run>.
const (
	ManifestName = "manifest.json"
	DedupName    = "dedup.json"
	ResultName   = "result.json"
	// ModelChangeName starts the name of each model-change record.
	ModelChangeName = "model-change-"
)

// ItemsName is an axis's loaded items relative to the run folder.
func ItemsName(axis string) string { return axis + "/items.jsonl" }

// ScoresName is an axis's per-item scores relative to the run folder.
func ScoresName(axis string) string { return axis + "/scores.jsonl" }

// RunPrefix is the store prefix of a run's folder, ending in a slash.
func RunPrefix(run string) string { return "runs/" + run + "/" }

// ManifestKey is where a run's manifest lives in the store.
func ManifestKey(run string) string { return RunPrefix(run) + ManifestName }

// ItemsKey is where an axis's loaded items live.
func ItemsKey(run, axis string) string { return RunPrefix(run) + ItemsName(axis) }

// DedupKey is where dedup's outcome lives.
func DedupKey(run string) string { return RunPrefix(run) + DedupName }

// ScoresKey is where an axis's per-item scores live.
func ScoresKey(run, axis string) string { return RunPrefix(run) + ScoresName(axis) }

// AxisResultKey is where an axis's result lives.
func AxisResultKey(run, axis string) string { return RunPrefix(run) + axis + "/axis.json" }

// ResultKey is where a run's result.json lives in the store.
func ResultKey(run string) string { return RunPrefix(run) + ResultName }

// ShardsPrefix is the prefix of every shard of an axis.
func ShardsPrefix(run, axis string) string { return RunPrefix(run) + axis + "/shards/" }

// ShardPrefix is the folder of one shard of an axis.
func ShardPrefix(run, axis string, shard int) string {
	return RunPrefix(run) + shardName(axis, shard)
}

// shardName is the folder of one shard of an axis within the run's folder.
func shardName(axis string, shard int) string { return fmt.Sprintf("%s/shards/%04d/", axis, shard) }

// ShardItemsKey is where the kept items of one shard live.
func ShardItemsKey(run, axis string, shard int) string {
	return ShardPrefix(run, axis, shard) + "items.jsonl"
}

// PredPrefix is the prefix of a shard's prediction checkpoints.
func PredPrefix(run, axis string, shard int) string { return ShardPrefix(run, axis, shard) + Answers }

// PredKey is one prediction checkpoint of a shard, of generation 0.
func PredKey(run, axis string, shard, part int) string {
	return GenPredKey(run, axis, shard, 0, part)
}

// GenPredKey is one prediction checkpoint of a shard in a generation (see
// CheckpointKind).
func GenPredKey(run, axis string, shard, gen, part int) string {
	return fmt.Sprintf("%s%s%05d.jsonl", ShardPrefix(run, axis, shard), CheckpointKind(Answers, gen), part)
}

// ModelChangeKey is the record of a run's n-th model change
// (--allow-new-model); ModelChangesPrefix lists them.
func ModelChangeKey(run string, n int) string {
	return fmt.Sprintf("%s%04d.json", ModelChangesPrefix(run), n)
}

// ModelChangesPrefix is the prefix of a run's model-change records.
func ModelChangesPrefix(run string) string { return RunPrefix(run) + ModelChangeName }

// AuditPrefix is where one pool's audit files go: <prefix>.json (the fixed
// rating's report, the key earlier runs used), <prefix>-<detector>.json and
// <prefix>-rows.csv.
func AuditPrefix(run, axis, pool string) string {
	p := RunPrefix(run) + axis + "/audit"
	if pool != "" {
		p += "-" + pool
	}
	return p
}

// AnchorsPrefix is where a run keeps the hashes of its leaderboard rows,
// one create-only object per row named after the row's SHA-256: the row's
// record outside the leaderboard, which an edit of the leaderboard's store
// does not reach.
func AnchorsPrefix(run string) string { return RunPrefix(run) + "anchors/" }

// AnchorKey is the anchor of the run's row whose bytes hash to rowSHA256.
func AnchorKey(run, rowSHA256 string) string { return AnchorsPrefix(run) + rowSHA256 + ".json" }
