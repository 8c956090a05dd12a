package main

import (
	"flag"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/lmevaltask"
)

func init() {
	registerIO("import-task", "write the dataset entry equivalent to an lm-evaluation-harness task YAML", importTaskMain)
}

// importTaskMain converts an lm-eval task YAML (includes merged) into a
// GlossoBench dataset entry on stdout, for the datasets list of the axis it
// names. What the entry cannot express is listed on stderr, one sentence
// each, and makes the exit code 3 unless --accept-differences is given:
// an entry that scores differently from the task must not pass for it.
func importTaskMain(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("import-task", stderr, "import-task lm-eval TASK.yaml --data FILE [--accept-differences]")
	data := fs.String("data", "", "the task's test split as a file (jsonl, csv, parquet; local or hf://datasets/OWNER/NAME@REVISION/PATH), or the task's repository hf://datasets/OWNER/NAME@REVISION (its Parquet files of the task's config and split)")
	accept := fs.Bool("accept-differences", false, "exit 0 though the entry cannot express all of the task")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if len(pos) != 2 || pos[0] != "lm-eval" {
		fs.Usage()
		return 2
	}
	path := pos[1]
	t, err := lmevaltask.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "import-task:", err)
		return 1
	}
	if *data == "" {
		e, _ := lmevaltask.Convert(t, "")
		src := ""
		if e != nil {
			src = " (" + e.Source + ")"
		}
		fmt.Fprintf(stderr, "import-task: %s: give the task's test split%s as a file with --data: a dataset entry names one file\n", path, src)
		return 2
	}
	e, err := lmevaltask.Convert(t, *data)
	if err != nil {
		fmt.Fprintln(stderr, "import-task:", err)
		return 1
	}
	if p, err := dataset.ParseHFRepo(*data); err == nil {
		repo, config, split := t.Hub()
		if repo != p.Repo || split == "" {
			fmt.Fprintf(stderr, "import-task: --data %s: the task reads dataset_path %q, split %q\n", *data, repo, split)
			return 1
		}
		e.Dataset.Config, e.Dataset.Split = config, split
		defer fmt.Fprintf(stderr, "import-task: pin the set: glossobench fetch-dataset --config %s --split %s %s prints its sha256\n", config, split, *data)
	}
	out, err := yaml.Marshal([]any{e.Dataset})
	if err != nil {
		fmt.Fprintln(stderr, "import-task:", err)
		return 1
	}
	fmt.Fprintf(stdout, "# %s axis (kind %s): from %s; %s\n", axisHint(e.Axis), e.Axis, path, e.Source)
	stdout.Write(out)
	for _, u := range e.Unsupported {
		fmt.Fprintln(stderr, "import-task: not expressed:", u)
	}
	if len(e.Unsupported) > 0 && !*accept {
		return 3
	}
	return 0
}

func axisHint(kind string) string {
	if kind == "mcq" {
		return "an MCQ (knowledge, nlu or cultural)"
	}
	return "the nlg"
}
