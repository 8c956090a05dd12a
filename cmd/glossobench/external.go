package main

import (
	"github.com/glossobench/glossobench/infra/results/inputs"
)

// externalHelp describes what --external reads beside the native formats.
const externalHelp = "lm-evaluation-harness results (a results_*.json file, or the --output_path folder with one sub-folder per model): the task, with --metric (default acc,none); " +
	"SEA-HELM results (<model>_seahelm_results.json files, or a folder of them): the dotted path of the number, e.g. ms.total or ms.nlu.total (default total); " +
	"HELM's summary (a helm-summarize groups/<group>.json file): the table title (default the first), with --metric the column (default the first after the model)"

// externalKind says which peer's results --external names: "lm-eval",
// "seahelm", "helm", or "" for the native formats.
func externalKind(path, task string) string {
	switch {
	case inputs.IsSEAHELMResults(path):
		return "seahelm"
	case inputs.IsHELMGroups(path):
		return "helm"
	case inputs.IsLMEvalResults(path), task != "":
		return "lm-eval"
	}
	return ""
}

func readPeerScores(kind, path, task, metric string) (map[string]inputs.ModelScore, error) {
	switch kind {
	case "seahelm":
		return inputs.ReadSEAHELM(path, task)
	case "helm":
		return inputs.ReadHELMGroups(path, task, metric)
	}
	return inputs.ReadLMEval(path, task, metric)
}

// readExternalInstrument reads correlate's --external: a peer's results
// (they list no items), else a score file or a directory of runs.
func readExternalInstrument(path, task, metric string) (*inputs.Instrument, error) {
	kind := externalKind(path, task)
	if kind == "" {
		return readInstrumentArg(path)
	}
	scores, err := readPeerScores(kind, path, task, metric)
	if err != nil {
		return nil, err
	}
	name := kind
	if task != "" {
		name += " " + task
	}
	if metric != "" {
		name += " " + metric
	}
	return &inputs.Instrument{Name: name, Path: path, Scores: scores, Items: map[string]string{}}, nil
}

// readExternalScores reads concord's --external: a peer's results, else a
// model_id,score CSV.
func readExternalScores(path, task, metric string) (map[string]inputs.ModelScore, error) {
	if kind := externalKind(path, task); kind != "" {
		return readPeerScores(kind, path, task, metric)
	}
	return inputs.ReadScoresCSVFile(path)
}
