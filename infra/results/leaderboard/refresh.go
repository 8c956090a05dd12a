package leaderboard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runplan"
)

// Refresh lists the runs a leaderboard refresh keeps current. It is the
// REFRESH.json of `glossobench schedule create` and the LeaderboardRefresh
// workflow's input; docs/GUIDE.md documents it.
type Refresh struct {
	Lang     string            `json:"lang"`      // default "ms"
	StoreURI string            `json:"store_uri"` // where the leaderboard lives; runs go to their configs' stores
	Runs     []runplan.Request `json:"runs"`      // config and model of each leaderboard entry
	// MaxParallel is how many models are evaluated at once (default 1).
	MaxParallel int `json:"max_parallel,omitempty"`
}

// Language is the leaderboard's language, "ms" when unset.
func (r Refresh) Language() string { return Language(r.Lang) }

// Language is a leaderboard's language as given, "ms" when unset.
func Language(lang string) string { return cmp.Or(lang, "ms") }

// ReadRefresh reads and checks a REFRESH.json: unknown fields and missing
// required ones are errors naming the field.
func ReadRefresh(path string) (Refresh, error) {
	var in Refresh
	if path == "" {
		return in, fmt.Errorf("--input REFRESH.json is required")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return in, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	if in.StoreURI == "" {
		return in, fmt.Errorf("%s: field store_uri is required (the store the leaderboard lives in)", path)
	}
	if len(in.Runs) == 0 {
		return in, fmt.Errorf("%s: field runs is required: list at least one {\"config_path\": ...}", path)
	}
	if in.MaxParallel < 0 {
		return in, fmt.Errorf("%s: field max_parallel is %d: want 1 or more (absent means 1)", path, in.MaxParallel)
	}
	for i, r := range in.Runs {
		if r.ConfigPath == "" {
			return in, fmt.Errorf("%s: runs[%d].config_path: required", path, i)
		}
		if err := CheckRefreshRun(r); err != nil {
			return in, fmt.Errorf("%s: runs[%d]: %w", path, i, err)
		}
	}
	return in, nil
}

// CheckRefreshRun rejects the request fields a refresh run does not take,
// so none is silently ignored: the refresh names each run itself, and what
// changes the numbers belongs in the config, whose hash is the pin.
func CheckRefreshRun(r runplan.Request) error {
	switch {
	case r.ConfigPath == "":
		return errors.New("config_path: required")
	case r.RunID != "":
		return errors.New("run_id: not a refresh field (each run is named after its model and config hash)")
	case r.ConfigYAML != "":
		return errors.New("config: not a refresh field (give config_path)")
	case r.JudgeOverlay || r.ChatTemplate != "":
		return errors.New("judge_overlay, chat_template: not refresh fields (set run.judge_overlay / run.chat_template in the config, so the pins record them)")
	case r.Limit != 0:
		return errors.New("limit: not a refresh field (a leaderboard ranks full runs)")
	case r.AllowNewModel:
		return errors.New("allow_new_model: not a refresh field (a refresh run measures one model)")
	}
	return nil
}

// LoadRefreshRun checks a refresh run and loads its config; major is its
// bench version's major, the leaderboard it joins.
func LoadRefreshRun(r runplan.Request) (cfg *config.Config, major int, err error) {
	if err := CheckRefreshRun(r); err != nil {
		return nil, 0, err
	}
	if cfg, err = config.Load(r.ConfigPath, config.Overrides{Model: r.Model, ModelID: r.ModelID}); err != nil {
		return nil, 0, err
	}
	if major, err = BenchMajor(cfg.BenchVersion); err != nil {
		return nil, 0, fmt.Errorf("bench_version: %w", err)
	}
	return cfg, major, nil
}

// Pending reports whether a run of cfg needs a new row on a board of rows:
// none of the model's rows carries the pins the run's would (config hash,
// bench version, model revision, and a GGUF file's SHA-256, the one weight
// pin known without running, so swapped weights behind the same path are a
// new row). runID is the run id the refresh gives the run.
func Pending(cfg *config.Config, rows []Row) (pending bool, runID string, err error) {
	hash, err := cfg.ContentHash()
	if err != nil {
		return false, "", err
	}
	var sum string
	if p, ok := registry.GGUFPath(cfg.Model.Spec); ok {
		if sum, err = config.FileSHA256(p); err != nil {
			return false, "", fmt.Errorf("model: %w", err)
		}
	}
	for _, row := range rows {
		if row.ModelID == cfg.Model.ID && row.Pins["config_hash"] == hash && row.Pins["bench_version"] == cfg.BenchVersion &&
			row.Pins["model_sha256"] == sum && row.Pins["model_revision"] == cfg.Model.Revision {
			return false, "", nil
		}
	}
	return true, fmt.Sprintf("%s-%s", unsafeRunChars.ReplaceAllString(cfg.Model.ID, "_"), hash[:12]), nil
}

var unsafeRunChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
