package workflows

import (
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistory replays histories recorded from real EvalRuns on
// the embedded server (workflows/runner's TestEvalRunEmbedded with
// GLOSSOBENCH_RECORD_HISTORY=1 writes evalrun.json and, of the knowledge
// axis's InferAxis child, inferaxis.json). Older recordings stay, named by
// the commit that recorded them (evalrun-0d1f43b.json: before the
// search-attribute upsert and the ScreenCorpus child; evalrun-b8d8d56.json:
// before the InferAxis child; evalrun-969f3a4.json: before DedupCounts;
// evalrun-69872cb.json and inferaxis-69872cb.json: axes one after another,
// before the pipeline), so a change to EvalRun or InferAxis that
// would break running workflows of any of those versions fails here with a
// non-determinism error.
func TestReplayRecordedHistory(t *testing.T) {
	var files []string
	for _, pattern := range []string{"evalrun*.json", "inferaxis*.json"} {
		f, err := filepath.Glob(filepath.Join("..", "testdata", "histories", pattern))
		if err != nil || len(f) == 0 {
			t.Fatalf("recorded histories %s missing: %v", pattern, err)
		}
		files = append(files, f...)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Replay under the recorded workflow id: EvalRun names its
			// children after it, and the history holds those names.
			id := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowId()
			r := worker.NewWorkflowReplayer()
			Register(r)
			if err := r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: id},
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
