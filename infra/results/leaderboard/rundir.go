package leaderboard

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// RunDir is a local run folder as leaderboard append reads it.
type RunDir struct {
	Row      Row
	Major    int    // the board's major version, from bench_version
	Language string // the run config's language; "" when the folder has no manifest or it names none
}

// ReadRunDir reads the run folder dir: its row (RowOf) for the board of
// its bench major. The row's result_ref names the run's store (which Elo
// reads its items from) when dir is <store>/runs/<run_id>, else the
// absolute path of its result.json.
func ReadRunDir(dir string) (RunDir, error) {
	f, err := runfiles.Dir(dir)
	if err != nil {
		return RunDir{}, err
	}
	defer f.Close()
	res, err := f.Result()
	if err != nil {
		return RunDir{}, err
	}
	if res.ModelID == "" {
		return RunDir{}, fmt.Errorf("%s: field model_id is missing or empty", f.Path(runfiles.ResultName))
	}
	var man runfiles.Manifest
	if err := f.Manifest(&man); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return RunDir{}, err
	}
	var rd RunDir
	if man.Config != nil {
		rd.Language = man.Config.Language
	}
	if rd.Row, err = RowOf(res, filepath.Join(dir, runfiles.ResultName)); err != nil {
		return RunDir{}, err
	}
	if rd.Major, err = BenchMajor(res.BenchVersion); err != nil {
		return RunDir{}, fmt.Errorf("%s: field bench_version: %w", filepath.Join(dir, "result.json"), err)
	}
	abs := mustAbs(dir)
	rd.Row.ResultRef = filepath.Join(abs, "result.json")
	if filepath.Base(filepath.Dir(abs)) == "runs" && filepath.Base(abs) == res.RunID {
		runs := "file:" + filepath.Dir(filepath.Dir(abs))
		rd.Row.ResultRef, rd.Row.RunStore = runs+"/"+runfiles.ResultKey(res.RunID), runs
	}
	return rd, nil
}

// StoreOfRunDir is the store root of the run folder <store>/runs/<run_id>.
func StoreOfRunDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if filepath.Base(filepath.Dir(abs)) != "runs" {
		return "", fmt.Errorf("%s is not <store>/runs/<run_id>; say where the leaderboard is with --store", dir)
	}
	return filepath.Dir(filepath.Dir(abs)), nil
}

func mustAbs(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
