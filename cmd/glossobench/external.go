package main

import (
	"github.com/glossobench/glossobench/infra/inputs"
)

// externalHelp describes what --external reads beside the native formats.
const externalHelp = "lm-evaluation-harness results (a results_*.json file, or the --output_path folder with one sub-folder per model) are read with --task and --metric (default acc,none)"

// useLMEval reports whether --external names lm-eval results.
func useLMEval(path, task string) bool { return task != "" || inputs.IsLMEvalResults(path) }

// readExternalInstrument reads correlate's --external: lm-eval results
// (they list no items), else a score file or a directory of runs.
func readExternalInstrument(path, task, metric string) (*inputs.Instrument, error) {
	if !useLMEval(path, task) {
		return readInstrumentArg(path)
	}
	scores, err := inputs.ReadLMEval(path, task, metric)
	if err != nil {
		return nil, err
	}
	name := "lm-eval " + task
	if metric != "" {
		name += " " + metric
	}
	return &inputs.Instrument{Name: name, Path: path, Scores: scores, Items: map[string]string{}}, nil
}

// readExternalScores reads concord's --external: lm-eval results, else a
// model_id,score CSV.
func readExternalScores(path, task, metric string) (map[string]inputs.ModelScore, error) {
	if useLMEval(path, task) {
		return inputs.ReadLMEval(path, task, metric)
	}
	return inputs.ReadScoresCSVFile(path)
}
