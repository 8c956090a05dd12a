package inputs

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// SEAHELMSuffix ends the undated name of a SEA-HELM results file,
// <model>_seahelm_results.json, one per model, which names the model only
// in its file name. Results are published under this name (e.g.
// analyticsrepo01/gemma4_SEA, testdata/seahelm-gemma4), though SEA-HELM's
// public history writes the dated name from its first release on.
const SEAHELMSuffix = "_seahelm_results.json"

// seahelmName matches both names of a SEA-HELM results file: the undated
// <model>_seahelm_results.json and the dated
// <model>_seahelm_results_<datetime>.json with the run's
// datetime.now().isoformat(), which aisingapore/SEA-HELM writes since its
// v1 (seahelm_evaluation.py at ec25490, 2025-03-04; since 3780e96 in
// src/seahelm_evaluation.py, get_results_json_filepath).
var seahelmName = regexp.MustCompile(`^(.+)_seahelm_results(?:_(\d{4}-\d\d-\d\dT[0-9:.]+))?\.json$`)

// seahelmFile is one results file: its model and run datetime ("" for the
// undated name).
type seahelmFile struct {
	path, model, run string
}

func parseSEAHELMName(path string) (seahelmFile, bool) {
	m := seahelmName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return seahelmFile{}, false
	}
	return seahelmFile{path: path, model: m[1], run: m[2]}, true
}

// IsSEAHELMResults reports whether path is a SEA-HELM results file or a
// folder holding some.
func IsSEAHELMResults(path string) bool {
	files, err := seahelmFiles(path)
	return err == nil && len(files) > 0
}

func seahelmFiles(path string) ([]seahelmFile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if f, ok := parseSEAHELMName(path); ok {
			return []seahelmFile{f}, nil
		}
		return nil, nil
	}
	var files []seahelmFile
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if f, ok := parseSEAHELMName(p); ok && !d.IsDir() {
			files = append(files, f)
		}
		return nil
	})
	slices.SortFunc(files, func(a, b seahelmFile) int { return strings.Compare(a.path, b.path) })
	return files, err
}

// pickSEAHELMRuns keeps one file per model: the run named run, or else the
// newest (ISO datetimes sort as text; a file of the undated name, which
// carries no datetime, is older than any that does). Two files of one model
// and one run are an error.
func pickSEAHELMRuns(files []seahelmFile, run string) ([]seahelmFile, error) {
	best := map[string]seahelmFile{}
	for _, f := range files {
		if run != "" && f.run != run {
			continue
		}
		if prev, ok := best[f.model]; ok {
			if prev.run == f.run {
				return nil, fmt.Errorf("%s and %s: two results of model %s for the same run", prev.path, f.path, f.model)
			}
			if prev.run > f.run {
				continue
			}
		}
		best[f.model] = f
	}
	if len(best) == 0 {
		var runs []string
		for _, f := range files {
			runs = append(runs, cmpRun(f.run))
		}
		slices.Sort(runs)
		return nil, fmt.Errorf("no SEA-HELM results of run %s (runs there: %s)", run, strings.Join(slices.Compact(runs), ", "))
	}
	out := make([]seahelmFile, 0, len(best))
	for _, f := range best {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b seahelmFile) int { return strings.Compare(a.model, b.model) })
	return out, nil
}

func cmpRun(run string) string {
	if run == "" {
		return "(undated)"
	}
	return run
}

// ReadSEAHELM reads model scores from SEA-HELM results files: the file,
// or every <model>_seahelm_results[_<datetime>].json under the folder,
// one per model: the run whose datetime is run, or by default each
// model's newest. A results file nests
// language → competency → task → metric, with a "total" at each level
// (SEA-HELM's aggregate of the level below); key is the dotted path of the
// number to read: "total" (the overall SEA score, the default), "ms.total"
// (one language), "ms.nlu.total" (a competency), "ms.knowledge.global_mmlu_lite"
// or "ms.nlu.qa.normalized_f1" (a task's metric). A metric of a task that
// failed in the run (SEA-HELM writes it as 0 beside an "error") is an
// error, and so is a total over a level where a task failed (SEA-HELM
// counts the failed task as 0 in it). Errors name the file and the path.
func ReadSEAHELM(path, key, run string) (map[string]ModelScore, error) {
	if key == "" {
		key = "total"
	}
	all, err := seahelmFiles(path)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no <model>_seahelm_results[_<datetime>].json file", path)
	}
	picked, err := pickSEAHELMRuns(all, run)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]ModelScore{}
	for _, sf := range picked {
		f := sf.path
		var doc any
		if err := readJSON(f, &doc, ""); err != nil {
			return nil, err
		}
		cur := doc
		var level map[string]any // the object holding the number
		for i, part := range strings.Split(key, ".") {
			m, ok := cur.(map[string]any)
			level = m
			if !ok {
				return nil, fmt.Errorf("%s: field %s: not an object", f, strings.Join(strings.Split(key, ".")[:i], "."))
			}
			// A task that failed keeps its metric keys at 0 beside the
			// error: not a score.
			if e, failed := m["error"].(string); failed && e != "" && i > 0 {
				return nil, fmt.Errorf("%s: field %s: the task failed in this run (%s); its metrics are not scores", f, strings.Join(strings.Split(key, ".")[:i], "."), e)
			}
			if cur, ok = m[part]; !ok {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				return nil, fmt.Errorf("%s: field %s: missing (there: %s)", f, strings.Join(strings.Split(key, ".")[:i+1], "."), strings.Join(keys, ", "))
			}
		}
		v, ok := cur.(float64)
		if !ok {
			return nil, fmt.Errorf("%s: field %s: not a number", f, key)
		}
		// SEA-HELM's totals count a failed task as 0: a number summing up
		// a level where a task failed is not a score either.
		prefix := strings.Join(strings.Split(key, ".")[:strings.Count(key, ".")], ".")
		if failed := failedTasks(level, prefix, nil); len(failed) > 0 {
			tasks := "tasks"
			if len(failed) == 1 {
				tasks = "task"
			}
			return nil, fmt.Errorf("%s: field %s: %d %s under it failed in this run (the first: %s); SEA-HELM counts them as 0 in its totals, so read a part where none failed",
				f, key, len(failed), tasks, failed[0])
		}
		out[sf.model] = ModelScore{Score: v}
	}
	return out, nil
}

// failedTasks lists, in key order, the tasks under m (at dotted path
// prefix) that failed in the run, as "path, error": SEA-HELM keeps a
// failed task's metric keys at 0 beside a non-empty "error".
func failedTasks(m map[string]any, prefix string, out []string) []string {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		sub, ok := m[k].(map[string]any)
		if !ok {
			continue
		}
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if e, _ := sub["error"].(string); e != "" {
			out = append(out, path+", "+e)
			continue
		}
		out = failedTasks(sub, path, out)
	}
	return out
}
