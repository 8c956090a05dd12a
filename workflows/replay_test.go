package workflows

import (
	"os"
	"testing"

	"go.temporal.io/sdk/worker"
)

// TestReplayRecordedHistory replays a history recorded from a real EvalRun on
// the embedded server (infra/runner's TestEvalRunEmbedded with
// GLOSSOBENCH_RECORD_HISTORY=1). A change to EvalRun that would break running
// workflows fails here with a non-determinism error.
func TestReplayRecordedHistory(t *testing.T) {
	const file = "../testdata/histories/evalrun.json"
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("recorded history missing: %v", err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(EvalRun, workflowOptions())
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, file); err != nil {
		t.Fatal(err)
	}
}
