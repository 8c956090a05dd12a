package inputs

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// LMEvalResults is the part of an lm-evaluation-harness results file
// (results_<date>.json, as lm_eval --output_path writes it, one folder per
// model) that GlossoBench reads and writes: per task, metric values keyed
// "<metric>,<filter>" (acc,none; exact_match,strict-match) beside "alias";
// the model from model_name, else the pretrained= (or model=) entry of
// config.model_args.
type LMEvalResults struct {
	Results    map[string]map[string]any `json:"results"`
	Versions   map[string]any            `json:"versions,omitempty"`
	NShot      map[string]any            `json:"n-shot,omitempty"`
	NSamples   map[string]any            `json:"n-samples,omitempty"`
	HigherIsOK map[string]map[string]any `json:"higher_is_better,omitempty"`
	Config     struct {
		Model     string `json:"model"`
		ModelArgs any    `json:"model_args"` // "k=v,k=v" (a dict in some versions)
	} `json:"config"`
	ModelName string `json:"model_name,omitempty"`
	Date      any    `json:"date,omitempty"`
}

// ModelID is the model the results are for: model_name, else the
// pretrained or model entry of config.model_args.
func (r *LMEvalResults) ModelID() string {
	if r.ModelName != "" {
		return r.ModelName
	}
	switch a := r.Config.ModelArgs.(type) {
	case string:
		for _, kv := range strings.Split(a, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k = strings.TrimSpace(k); k == "pretrained" || k == "model" {
				return strings.TrimSpace(v)
			}
		}
	case map[string]any:
		for _, k := range []string{"pretrained", "model"} {
			if s, ok := a[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}

// IsLMEvalResults reports whether path is an lm-eval results file or a
// folder holding results_*.json files.
func IsLMEvalResults(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if st.IsDir() {
		files, _ := lmEvalFiles(path)
		return len(files) > 0
	}
	return strings.HasPrefix(filepath.Base(path), "results") && strings.HasSuffix(path, ".json")
}

func lmEvalFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "results") && strings.HasSuffix(d.Name(), ".json") {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// lmEvalMetric reads metric ("name,filter") from a task's results. Files
// from lm-eval before 0.4 key metrics by name alone ("acc": the v0 results
// in lm-eval's own tests/testdata/*-res.json) and have no filters: there
// "acc,none" reads "acc"; a filter other than none is not there to read.
func lmEvalMetric(task map[string]any, metric string) (float64, bool) {
	if v, ok := task[metric].(float64); ok {
		return v, true
	}
	name, filter, _ := strings.Cut(metric, ",")
	if filter != "none" {
		return 0, false
	}
	for k := range task {
		if strings.Contains(k, ",") {
			return 0, false // a 0.4 file: the key must be there as given
		}
	}
	v, ok := task[name].(float64)
	return v, ok
}

// ReadLMEval reads model scores for one task and metric ("acc,none"; a
// metric without ",filter" means ",none") from an lm-eval results file or
// output folder, of lm-eval 0.4 or of 0.3 and before (see lmEvalMetric).
// lm-eval adds a results file to a model's folder at every run, whatever
// its tasks: of a model's files, the newest by name (lm-eval names them by
// date) that has the task counts. A metric the file's higher_is_better
// marks false (perplexity, word_perplexity) reads as LowerIsBetter. Errors
// name the file and the field.
func ReadLMEval(path, task, metric string) (map[string]ModelScore, error) {
	if task == "" {
		return nil, fmt.Errorf("%s: lm-eval results need the task to read (--task)", path)
	}
	metric = cmp.Or(metric, "acc,none")
	if !strings.Contains(metric, ",") {
		metric += ",none"
	}
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if st.IsDir() {
		if files, err = lmEvalFiles(path); err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no results_*.json at or under this folder", path)
		}
	}
	type run struct {
		file string
		r    LMEvalResults
	}
	byModel := map[string][]run{} // oldest first: files are sorted
	for _, f := range files {
		var r LMEvalResults
		if err := readJSON(f, &r, ""); err != nil {
			return nil, err
		}
		id := r.ModelID()
		if id == "" {
			id = filepath.Base(filepath.Dir(f)) // lm-eval's per-model folder
		}
		if prev := byModel[id]; len(prev) > 0 && filepath.Dir(prev[0].file) != filepath.Dir(f) {
			return nil, fmt.Errorf("%s: model %s already read from %s", f, id, prev[0].file)
		}
		byModel[id] = append(byModel[id], run{f, r})
	}
	ids := slices.Sorted(maps.Keys(byModel))
	out := map[string]ModelScore{}
	var lowerFrom, higherFrom string
	for _, id := range ids {
		runs := byModel[id]
		i := len(runs) - 1
		for i >= 0 && runs[i].r.Results[task] == nil {
			i--
		}
		if i < 0 {
			var tasks []string
			for _, x := range runs {
				tasks = append(tasks, slices.Collect(maps.Keys(x.r.Results))...)
			}
			slices.Sort(tasks)
			tasks = slices.Compact(tasks)
			if len(runs) == 1 {
				return nil, fmt.Errorf("%s: field results.%s: no such task (tasks: %s)", runs[0].file, task, strings.Join(tasks, ", "))
			}
			return nil, fmt.Errorf("%s: model %s: no results file has task %s (%d files; tasks: %s)", filepath.Dir(runs[0].file), id, task, len(runs), strings.Join(tasks, ", "))
		}
		f, r := runs[i].file, runs[i].r
		t := r.Results[task]
		v, ok := lmEvalMetric(t, metric)
		if !ok {
			var ms []string
			for k, x := range t {
				if _, num := x.(float64); num && !strings.Contains(k, "_stderr") {
					ms = append(ms, k)
				}
			}
			slices.Sort(ms)
			return nil, fmt.Errorf("%s: field results.%s[%q]: missing or not a number (metrics: %s)", f, task, metric, strings.Join(ms, ", "))
		}
		name, _, _ := strings.Cut(metric, ",")
		if higher, marked := r.HigherIsOK[task][name].(bool); marked && higher {
			higherFrom = f
		} else if marked {
			lowerFrom = f
		}
		if lowerFrom != "" && higherFrom != "" {
			return nil, fmt.Errorf("%s and %s disagree on whether %s of %s is better higher (field higher_is_better.%s.%s)", higherFrom, lowerFrom, name, task, task, name)
		}
		out[id] = ModelScore{Score: v}
	}
	// A file that does not mark the metric (lm-eval before 0.4 writes no
	// higher_is_better) goes the way the others mark it.
	if lowerFrom != "" {
		for id, s := range out {
			s.LowerIsBetter = true
			out[id] = s
		}
	}
	return out, nil
}
