package main

// externalHelp describes what --external reads beside the native formats.
const externalHelp = "lm-evaluation-harness results (a results_*.json file, or the --output_path folder with one sub-folder per model): the task, with --metric (default acc,none); " +
	"SEA-HELM results (<model>_seahelm_results[_<datetime>].json files, or a folder of them; --run picks a run, default the newest): the dotted path of the number, e.g. ms.total or ms.nlu.total (default total); " +
	"HELM's summary (a helm-summarize groups/<group>.json file, or one table of it, groups/json/<group>_<table>.json): the table title (default the first), with --metric the column (default the first after the model)"
