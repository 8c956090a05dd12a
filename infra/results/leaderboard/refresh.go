package leaderboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

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
func (r Refresh) Language() string {
	if r.Lang == "" {
		return "ms"
	}
	return r.Lang
}

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
