package inputs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SEAHELMSuffix ends the name of a SEA-HELM results file:
// <model>_seahelm_results.json, one per model, which names the model only
// in its file name.
const SEAHELMSuffix = "_seahelm_results.json"

// IsSEAHELMResults reports whether path is a SEA-HELM results file or a
// folder holding some.
func IsSEAHELMResults(path string) bool {
	files, err := seahelmFiles(path)
	return err == nil && len(files) > 0
}

func seahelmFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if strings.HasSuffix(path, SEAHELMSuffix) {
			return []string{path}, nil
		}
		return nil, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), SEAHELMSuffix) {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// ReadSEAHELM reads model scores from SEA-HELM results files: the file,
// or every *_seahelm_results.json under the folder. A results file nests
// language → competency → task → metric, with a "total" at each level
// (SEA-HELM's aggregate of the level below); key is the dotted path of the
// number to read: "total" (the overall SEA score, the default), "ms.total"
// (one language), "ms.nlu.total" (a competency), "ms.knowledge.global_mmlu_lite"
// or "ms.nlu.qa.normalized_f1" (a task's metric). Errors name the file and
// the path.
func ReadSEAHELM(path, key string) (map[string]ModelScore, error) {
	if key == "" {
		key = "total"
	}
	files, err := seahelmFiles(path)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *%s file", path, SEAHELMSuffix)
	}
	out := map[string]ModelScore{}
	for _, f := range files {
		var doc any
		if err := readJSON(f, &doc, ""); err != nil {
			return nil, err
		}
		cur := doc
		for i, part := range strings.Split(key, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: field %s: not an object", f, strings.Join(strings.Split(key, ".")[:i], "."))
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
		model := strings.TrimSuffix(filepath.Base(f), SEAHELMSuffix)
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("%s: model %s read twice", f, model)
		}
		out[model] = ModelScore{Score: v}
	}
	return out, nil
}
