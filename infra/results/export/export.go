// Package export writes a finished run's result in another tool's schema:
// an lm-evaluation-harness results file, or an Every Eval Ever record.
package export

import (
	"slices"
	"strconv"

	"github.com/glossobench/glossobench/infra/results/inputs"
	"github.com/glossobench/glossobench/infra/runfiles"
)

// LMEvalTaskPrefix names GlossoBench's axes as lm-eval tasks
// (glossobench_knowledge, ...).
const LMEvalTaskPrefix = "glossobench_"

// LMEval is a run's result as an lm-eval results file.
func LMEval(r *runfiles.Result) inputs.LMEvalResults {
	// lm-eval's readers (utils.make_table, the W&B logger) look every task
	// up in versions and n-shot; a run does not record its shots per axis,
	// so n-shot is lm-eval's own "N/A".
	doc := inputs.LMEvalResults{Results: map[string]map[string]any{}, Versions: map[string]any{},
		NShot: map[string]any{}, NSamples: map[string]any{}, HigherIsOK: map[string]map[string]any{}, ModelName: r.ModelID}
	doc.Config.Model = "glossobench"
	doc.Config.ModelArgs = "pretrained=" + r.ModelID
	for _, a := range scoredAxes(r) {
		ax := r.Axes[a]
		task := LMEvalTaskPrefix + a
		res := map[string]any{"alias": task, ax.Metric + ",none": *ax.Score, ax.Metric + "_stderr,none": "N/A"}
		if ax.CI95 != nil {
			res[ax.Metric+"_ci95,none"] = []float64{ax.CI95[0], ax.CI95[1]}
		}
		doc.Results[task] = res
		doc.Versions[task] = ax.Version
		doc.NShot[task] = "N/A"
		doc.NSamples[task] = map[string]int{"original": ax.N, "effective": ax.N}
		doc.HigherIsOK[task] = map[string]any{ax.Metric: true}
	}
	if r.Summary.MSPublic != nil {
		doc.Results["glossobench"] = map[string]any{"alias": "glossobench", "ms_public,none": *r.Summary.MSPublic, "ms_public_stderr,none": "N/A"}
		doc.Versions["glossobench"] = r.BenchVersion
		doc.NShot["glossobench"] = "N/A"
	}
	return doc
}

// EEESchemaVersion is the Every Eval Ever schema (evaleval/every_eval_ever
// every_eval_ever/schemas/eval.schema.json) that EveryEvalEver writes.
const EEESchemaVersion = "0.3.0"

// EveryEvalEver is a run's result as an Every Eval Ever record: the model, the
// library (glossobench at the bench version), and per scored axis its
// headline in [0, 1] with the run's bootstrap 95% interval.
func EveryEvalEver(r *runfiles.Result, org string, ts int64) map[string]any {
	stamp := strconv.FormatInt(ts, 10)
	var results []map[string]any
	add := func(name, metric, desc string, score float64, ci *[2]float64, n int, details map[string]string) {
		sd := map[string]any{"score": score}
		unc := map[string]any{}
		if ci != nil {
			unc["confidence_interval"] = map[string]any{"lower": ci[0], "upper": ci[1], "confidence_level": 0.95, "method": "bootstrap"}
		}
		if n > 0 {
			unc["num_samples"] = n
		}
		if len(unc) > 0 {
			sd["uncertainty"] = unc
		}
		if len(details) > 0 {
			sd["details"] = details
		}
		results = append(results, map[string]any{
			"evaluation_name": name,
			"source_data":     map[string]any{"dataset_name": name, "source_type": "other"},
			"metric_config": map[string]any{"evaluation_description": desc, "lower_is_better": false,
				"score_type": "continuous", "min_score": 0, "max_score": 1,
				"metric_id": "glossobench." + metric, "metric_name": metric},
			"score_details": sd,
		})
	}
	for _, a := range scoredAxes(r) {
		ax := r.Axes[a]
		add(LMEvalTaskPrefix+a, ax.Metric, "GlossoBench "+a+" axis: "+ax.Metric, *ax.Score, ax.CI95, ax.N, map[string]string{"metric": ax.Metric, "plugin_version": ax.Version})
	}
	if r.Summary.MSPublic != nil {
		add("glossobench", "ms_public", "GlossoBench mean score over public axes (ms_public)", *r.Summary.MSPublic, nil, 0, nil)
	}
	// An embedded GGUF file is weights the evaluator runs itself; behind a
	// server the deployment is not known. Whether the weights are open is
	// not recorded in a run.
	deployment := "unknown"
	if r.ModelIdentity != nil && r.ModelIdentity.Backend == "gguf" {
		deployment = "self_deployed"
	}
	return map[string]any{
		"schema_version":      EEESchemaVersion,
		"evaluation_id":       r.BenchVersion + "/" + r.ModelID + "/" + stamp,
		"retrieved_timestamp": stamp,
		"source_metadata": map[string]any{"source_name": "GlossoBench", "source_type": "evaluation_run",
			"source_organization_name": org, "evaluator_relationship": "third_party",
			"additional_details": map[string]string{"config_hash": r.ConfigHash}},
		"eval_library": map[string]any{"name": "glossobench", "version": r.BenchVersion},
		"model_info": map[string]any{"name": r.ModelID, "id": r.ModelID,
			"additional_details": map[string]string{"deployment_type": deployment, "model_availability": "unknown"}},
		"evaluation_results": results,
	}
}

// scoredAxes are the run's axes that published a headline, in name order.
func scoredAxes(r *runfiles.Result) []string {
	var axes []string
	for a, ax := range r.Axes {
		if ax.Score != nil {
			axes = append(axes, a)
		}
	}
	slices.Sort(axes)
	return axes
}
