package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/glossobench/glossobench/infra/inputs"
)

func init() {
	register("export", "write a finished run's result in another tool's schema (--format lm-eval)", runExport)
}

func runExport(args []string) int { return exportMain(args, os.Stdout, os.Stderr) }

// exportResult is the part of result.json an export writes.
type exportResult struct {
	ModelID      string `json:"model_id"`
	BenchVersion string `json:"bench_version"`
	ConfigHash   string `json:"config_hash"`
	Axes         map[string]struct {
		Score   *float64    `json:"score"`
		Metric  string      `json:"metric"`
		N       int         `json:"n"`
		CI95    *[2]float64 `json:"ci95"`
		Version string      `json:"version"`
	} `json:"axes"`
	Summary struct {
		MSPublic *float64 `json:"ms_public"`
	} `json:"summary"`
}

// LMEvalTaskPrefix names GlossoBench's axes as lm-eval tasks
// (glossobench_knowledge, ...).
const LMEvalTaskPrefix = "glossobench_"

func exportMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "", "`schema` to write: lm-eval (an lm-evaluation-harness results file)")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: glossobench export --format lm-eval [--out FILE] RUNDIR")
		fmt.Fprintln(stderr, "\nlm-eval: one task per scored axis (glossobench_<axis>) with its headline as \"<metric>,none\",")
		fmt.Fprintln(stderr, "its 95% interval as \"<metric>_ci95,none\", n-samples, versions, and the mean score as task glossobench.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 1
	}
	if fs.NArg() != 1 || *format == "" {
		fs.Usage()
		return 1
	}
	if *format != "lm-eval" {
		fmt.Fprintf(stderr, "glossobench export: --format %q: known: lm-eval\n", *format)
		return 1
	}
	runs, err := findRunResults(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "glossobench export: %v\n", err)
		return 1
	}
	if len(runs) != 1 {
		fmt.Fprintf(stderr, "glossobench export: %s holds %d runs; name one run directory\n", fs.Arg(0), len(runs))
		return 1
	}
	b, err := os.ReadFile(runs[0].path)
	if err != nil {
		fmt.Fprintf(stderr, "glossobench export: %v\n", err)
		return 1
	}
	var r exportResult
	if err := json.Unmarshal(b, &r); err != nil {
		fmt.Fprintf(stderr, "glossobench export: %s: %v\n", runs[0].path, err)
		return 1
	}
	doc := lmEvalDoc(r)
	data, _ := json.MarshalIndent(doc, "", "  ")
	data = append(data, '\n')
	if *out == "" {
		stdout.Write(data)
		return 0
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "glossobench export: %v\n", err)
		return 1
	}
	return 0
}

// lmEvalDoc is a run's result as an lm-eval results file.
func lmEvalDoc(r exportResult) inputs.LMEvalResults {
	doc := inputs.LMEvalResults{Results: map[string]map[string]any{}, Versions: map[string]any{},
		NSamples: map[string]any{}, HigherIsOK: map[string]map[string]any{}, ModelName: r.ModelID}
	doc.Config.Model = "glossobench"
	doc.Config.ModelArgs = "pretrained=" + r.ModelID
	axes := make([]string, 0, len(r.Axes))
	for a := range r.Axes {
		axes = append(axes, a)
	}
	slices.Sort(axes)
	for _, a := range axes {
		ax := r.Axes[a]
		if ax.Score == nil {
			continue
		}
		task := LMEvalTaskPrefix + a
		res := map[string]any{"alias": task, ax.Metric + ",none": *ax.Score, ax.Metric + "_stderr,none": "N/A"}
		if ax.CI95 != nil {
			res[ax.Metric+"_ci95,none"] = []float64{ax.CI95[0], ax.CI95[1]}
		}
		doc.Results[task] = res
		doc.Versions[task] = ax.Version
		doc.NSamples[task] = map[string]int{"original": ax.N, "effective": ax.N}
		doc.HigherIsOK[task] = map[string]any{ax.Metric: true}
	}
	if r.Summary.MSPublic != nil {
		doc.Results["glossobench"] = map[string]any{"alias": "glossobench", "ms_public,none": *r.Summary.MSPublic, "ms_public_stderr,none": "N/A"}
		doc.Versions["glossobench"] = r.BenchVersion
	}
	return doc
}
