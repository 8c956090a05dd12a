// Package release reads a finished run folder and turns it into a release
// bundle: one reproducible JSONL of scored items plus a manifest, from which
// a third party re-derives every headline (Rescore) without the harness,
// the model or the raw outputs.
//
// A run folder (RUNDIR) is <store>/runs/<run_id> on a local store:
//
//	RUNDIR/result.json             runfiles.Result
//	RUNDIR/manifest.json           the resolved config and plan (optional)
//	RUNDIR/<axis>/scores.jsonl     scorers.ItemScore, one per line
//	RUNDIR/<axis>/items.jsonl      scorers.Item, one per line
//	RUNDIR/<axis>/shards/*/pred-*.jsonl  predictions (read only for --include-raw)
package release

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

// Run is a finished run as read from its folder.
type Run struct {
	Dir    string
	Result runfiles.Result
	// Config is the resolved config from manifest.json; nil when the run
	// folder has no manifest.
	Config *config.Config
	// Axes holds, per axis of the result, its stored items and item scores.
	Axes map[string]*AxisData
}

// AxisData is one axis's stored items and per-item scores.
type AxisData struct {
	Scores []scorers.ItemScore
	Items  map[string]scorers.Item // by item id; empty when items.jsonl is absent
}

// AxisNames returns the result's axes in sorted order.
func (r *Run) AxisNames() []string {
	names := make([]string, 0, len(r.Result.Axes))
	for n := range r.Result.Axes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Dataset returns the config entry of an axis's dataset, when known.
func (r *Run) Dataset(axis, name string) (scorers.DatasetConfig, bool) {
	if r.Config == nil {
		return scorers.DatasetConfig{}, false
	}
	for _, d := range r.Config.Axes[axis].Datasets {
		if d.Name == name {
			return d, true
		}
	}
	return scorers.DatasetConfig{}, false
}

// LoadRun reads a run folder through runfiles. result.json is required;
// manifest.json and an axis's items.jsonl are optional, its scores.jsonl is
// required when the axis has a score. Errors name the file, and the line and
// field where the content is at fault.
//
// The folder is read through an os.Root (runfiles.Dir): a symlink inside the
// run folder that points out of it is an error, so a bundle never carries a
// file from elsewhere on the machine.
func LoadRun(dir string) (*Run, error) {
	f, err := runfiles.Dir(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &Run{Dir: dir, Axes: map[string]*AxisData{}}
	res, err := f.Result()
	if err != nil {
		return nil, err
	}
	r.Result = *res
	resPath := f.Path(runfiles.ResultName)
	if r.Result.RunID == "" {
		return nil, fmt.Errorf("%s: field run_id is missing or empty", resPath)
	}
	if r.Result.ModelID == "" {
		return nil, fmt.Errorf("%s: field model_id is missing or empty", resPath)
	}
	var m runfiles.Manifest
	if err := f.Manifest(&m); err == nil {
		r.Config = m.Config
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, axis := range r.AxisNames() {
		if !safeName(axis) {
			return nil, fmt.Errorf("%s: axes: axis name %q is not a plain name", resPath, axis)
		}
		rep := r.Result.Axes[axis]
		if rep.Axis != "" && rep.Axis != axis {
			return nil, fmt.Errorf("%s: axes.%s.axis is %q", resPath, axis, rep.Axis)
		}
		ad := &AxisData{Items: map[string]scorers.Item{}}
		if ad.Scores, err = f.Scores(axis); err != nil && (!errors.Is(err, fs.ErrNotExist) || rep.Score != nil) {
			return nil, err
		}
		items, err := f.Items(axis)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, it := range items {
			ad.Items[it.ID] = it
		}
		r.Axes[axis] = ad
	}
	return r, nil
}

// safeName reports whether s is usable as one path segment.
func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`+"\x00")
}
