package inputs

import (
	"fmt"
	"path/filepath"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

// Run is a run folder's result.json, as the comparison tools read it.
type Run struct {
	Dir string // the run directory: <store>/runs/<run>
	*runfiles.Result
}

// Path is the run's result.json, for messages.
func (r Run) Path() string { return filepath.Join(r.Dir, runfiles.ResultName) }

// FindRuns returns the runs at or under dir, in path order.
func FindRuns(dir string) ([]Run, error) {
	dirs, err := runfiles.FindRuns(dir)
	if err != nil {
		return nil, err
	}
	runs := make([]Run, len(dirs))
	for i, d := range dirs {
		if runs[i], err = ReadRun(d); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// ReadRun reads the result.json of the run folder dir; a result without a
// model_id is an error, since every comparison keys on it.
func ReadRun(dir string) (Run, error) {
	r := Run{Dir: dir}
	f, err := runfiles.Dir(dir)
	if err != nil {
		return r, err
	}
	defer f.Close()
	if r.Result, err = f.Result(); err != nil {
		return r, err
	}
	if r.ModelID == "" {
		return r, fmt.Errorf("%s: field model_id is missing or empty", r.Path())
	}
	return r, nil
}

// RunAxisScores reads the item scores of one axis of the run folder dir:
// item_id → score.
func RunAxisScores(dir, axis string) (map[string]float64, error) {
	f, err := runfiles.Dir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	err = f.EachScore(axis, func(s scorers.ItemScore) error {
		out[s.ItemID] = s.Score
		return nil
	})
	return out, err
}
