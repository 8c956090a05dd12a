package leaderboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A REFRESH.json field that would be ignored is an error naming it.
func TestReadRefreshRejects(t *testing.T) {
	for name, tc := range map[string]struct{ json, want string }{
		"unknown field": {`{"store_uri":"s","runs":[{"config_path":"c"}],"paralel":2}`, "paralel"},
		"no store":      {`{"runs":[{"config_path":"c"}]}`, "store_uri"},
		"no runs":       {`{"store_uri":"s"}`, "runs"},
		"negative":      {`{"store_uri":"s","runs":[{"config_path":"c"}],"max_parallel":-1}`, "max_parallel"},
		"run_id":        {`{"store_uri":"s","runs":[{"config_path":"c","run_id":"x"}]}`, "runs[0]: run_id"},
		"chat_template": {`{"store_uri":"s","runs":[{"config_path":"c","chat_template":"always"}]}`, "chat_template"},
		"no config":     {`{"store_uri":"s","runs":[{"model":"gguf:x"}]}`, "runs[0].config_path"},
		"new model":     {`{"store_uri":"s","runs":[{"config_path":"c","allow_new_model":true}]}`, "runs[0]: allow_new_model"},
	} {
		path := filepath.Join(t.TempDir(), "REFRESH.json")
		os.WriteFile(path, []byte(tc.json), 0o644)
		if _, err := ReadRefresh(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", name, err, tc.want)
		}
	}
	path := filepath.Join(t.TempDir(), "REFRESH.json")
	os.WriteFile(path, []byte(`{"lang":"id","store_uri":"s","runs":[{"config_path":"c"}],"max_parallel":2}`), 0o644)
	if in, err := ReadRefresh(path); err != nil || in.MaxParallel != 2 || in.Lang != "id" {
		t.Errorf("good REFRESH.json: %+v %v", in, err)
	}
}
