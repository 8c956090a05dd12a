package runner_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// TestTemporalCLIStartsEvalRun starts EvalRun the way operators do, with
// the Temporal CLI itself (runnertest.TemporalCLI), waits for its result
// through the CLI, and finds the run with `temporal workflow list --query` on the search attribute the
// workflow upserts itself: a run started this way is as findable in the UI
// as one started by `glossobench run`.
func TestTemporalCLIStartsEvalRun(t *testing.T) {
	srv, c := runnertest.StartServer(t)
	temporal := runnertest.TemporalCLI(t, srv)
	startWorkers(t, c, runner.All)
	storeDir := t.TempDir()
	model := "gguf:" + filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf")
	cfgPath := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(cfgPath, []byte(mcqConfig(t, model, storeDir, "cloze", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	id := runnertest.StartWithCLI(temporal, workflows.EvalRunInput{ConfigPath: cfgPath, RunID: "cli-1"})
	var res workflows.EvalRunResult
	out := temporal("workflow", "result", "--workflow-id", id, "--output", "json")
	var wrapped struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(out, &wrapped); err != nil || wrapped.Status != "COMPLETED" {
		t.Fatalf("temporal workflow result: %v\n%s", err, out)
	}
	if err := json.Unmarshal(wrapped.Result, &res); err != nil || res.Summary.MSPublic == nil {
		t.Fatalf("result %s: %v", wrapped.Result, err)
	}
	if _, err := os.Stat(res.Summary.ResultPath); err != nil {
		t.Fatalf("result.json: %v", err)
	}

	// Visibility is eventually consistent: ask until the run shows up.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		out = temporal("workflow", "list", "--query", `GlossoModelID = "test-model" AND GlossoAxes = 'knowledge'`, "--output", "json")
		if strings.Contains(string(out), `"evalrun-cli-1"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("temporal workflow list --query GlossoModelID did not find evalrun-cli-1:\n%s", out)
		}
	}
}
