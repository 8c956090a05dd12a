package activities

import "fmt"

// Store key layout (local disk and S3 alike):
//
//	runs/<run>/manifest.json                      the resolved config and the plan
//	runs/<run>/<axis>/items.jsonl                 every loaded item
//	runs/<run>/dedup.json                         what dedup kept and dropped
//	runs/<run>/<axis>/shards/<nnnn>/items.jsonl   the kept items of one shard
//	runs/<run>/<axis>/shards/<nnnn>/pred-<kkkkk>.jsonl  predictions, one object per checkpoint
//	runs/<run>/<axis>/scores.jsonl                per-item scores
//	runs/<run>/<axis>/axis.json                   the axis result
//	runs/<run>/<axis>/audit-<detector>-<source>{-rows.csv,.json,-logreg.json,-rf.json}
//	                                              the leakage audit's rows and reports
//	runs/<run>/result.json                        the run result
func manifestKey(run string) string         { return "runs/" + run + "/manifest.json" }
func itemsKey(run, axis string) string      { return "runs/" + run + "/" + axis + "/items.jsonl" }
func dedupKey(run string) string            { return "runs/" + run + "/dedup.json" }
func scoresKey(run, axis string) string     { return "runs/" + run + "/" + axis + "/scores.jsonl" }
func axisResultKey(run, axis string) string { return "runs/" + run + "/" + axis + "/axis.json" }

// ResultKey is where a run's result.json lives in the store.
func ResultKey(run string) string { return "runs/" + run + "/result.json" }

func shardPrefix(run, axis string, shard int) string {
	return fmt.Sprintf("runs/%s/%s/shards/%04d/", run, axis, shard)
}
func shardItemsKey(run, axis string, shard int) string {
	return shardPrefix(run, axis, shard) + "items.jsonl"
}
func predPrefix(run, axis string, shard int) string { return shardPrefix(run, axis, shard) + "pred-" }
func predKey(run, axis string, shard, part int) string {
	return fmt.Sprintf("%s%05d.jsonl", predPrefix(run, axis, shard), part)
}

// auditPrefix is where one pool's audit files go: <prefix>.json (the fixed
// rating's report, the key earlier runs used), <prefix>-<detector>.json and
// <prefix>-rows.csv.
func auditPrefix(run, axis, pool string) string {
	p := "runs/" + run + "/" + axis + "/audit"
	if pool != "" {
		p += "-" + pool
	}
	return p
}
