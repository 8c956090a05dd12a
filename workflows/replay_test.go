package workflows

import (
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplayRecordedHistory replays histories recorded from real EvalRuns on
// the embedded server (infra/runner's TestEvalRunEmbedded with
// GLOSSOBENCH_RECORD_HISTORY=1 writes evalrun.json). Older recordings stay,
// named by the commit that recorded them (evalrun-0d1f43b.json: before the
// search-attribute upsert and the ScreenCorpus child), so a change to
// EvalRun that would break running workflows of any of those versions fails
// here with a non-determinism error.
func TestReplayRecordedHistory(t *testing.T) {
	files, err := filepath.Glob("../testdata/histories/evalrun*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("recorded histories missing: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			Register(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
				t.Fatal(err)
			}
		})
	}
}
