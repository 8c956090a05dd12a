package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// A run with a training corpus screens it in a ScreenCorpus child workflow
// on the real server: the parent's history holds the child, not the
// ScreenShard activities, whose rows in the child say which shard they are.
func TestEvalRunScreensCorpusInChild(t *testing.T) {
	c := serverWithWorkers(t)
	corpus := filepath.Join(t.TempDir(), "corpus.txt")
	var text strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&text, "paragraph %d of a training corpus that shares nothing with the test items\n\n", i)
	}
	if err := os.WriteFile(corpus, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	model := "gguf:" + filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf")
	data := filepath.Join(repoRoot(t), "testdata", "data")
	cfg := fmt.Sprintf(`model: {spec: %q, id: screen-model}
store: {uri: %s}
dedup: {corpus: [%s]}
run: {shard_size: 8, parallel_shards: 2, bootstrap_resamples: 50}
axes:
  knowledge:
    scoring_mode: cloze
    datasets:
      - {name: g, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 4}
`, model, t.TempDir(), corpus, data)
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "screen-1"})
	r := readResult(t, res.Summary.ResultPath)
	if !strings.Contains(r.Summary.Dedup.Corpus, "corpus.txt") {
		t.Fatalf("corpus not screened: %+v", r.Summary.Dedup)
	}

	ctx := context.Background()
	children := map[string]int{} // child workflows started, by type
	count := func(wfID string) map[enumspb.EventType]int {
		n := map[enumspb.EventType]int{}
		it := c.GetWorkflowHistory(ctx, wfID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			n[ev.GetEventType()]++
			if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
				children[a.GetWorkflowType().GetName()]++
			}
			if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && wfID != "evalrun-screen-1" {
				var s string
				converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &s)
				if !strings.HasPrefix(s, "screen corpus shard ") {
					t.Fatalf("%s: ScreenShard summary %q", wfID, s)
				}
			}
		}
		return n
	}
	parent := count("evalrun-screen-1")
	child := count("evalrun-screen-1-screen-1")
	shards := child[enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
	t.Logf("corpus shards %d; parent: children started %v, %d activities; child: %d activities", shards,
		children, parent[enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED], shards)
	// One ScreenCorpus child, and the one axis's InferAxis child.
	if children[workflows.ScreenCorpusName] != 1 || children[workflows.InferAxisName] != 1 || shards < 1 {
		t.Fatalf("parent events %v, child events %v", parent, child)
	}
}

// The corpus shards of a run spread over the CPU workers that poll: two
// workers each screen a good part of them. With eager activity dispatch
// (on by default in the server and the SDK) every ScreenShard the
// ScreenCorpus workflow schedules went to the worker that ran that
// workflow's task, so a second host screened next to none (2 of 33 on a
// 1 GB corpus) and adding hosts did not speed the screen up.
func TestScreenShardsSpreadOverWorkers(t *testing.T) {
	srv, c := runnertest.StartServer(t)
	for _, name := range []string{"worker-a", "worker-b"} {
		wc, err := client.Dial(client.Options{HostPort: srv.Address, Namespace: srv.Namespace, Identity: name, Logger: runnertest.QuietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(wc.Close)
		startWorkers(t, wc, runner.All)
	}
	// One shard per file (each far below the smallest shard cut).
	const files = 48
	dir := t.TempDir()
	for f := range files {
		var text strings.Builder
		for i := range 200 {
			fmt.Fprintf(&text, "file %d paragraph %d of a training corpus that shares nothing with the test items\n\n", f, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%02d.txt", f)), []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	model := "gguf:" + filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf")
	data := filepath.Join(repoRoot(t), "testdata", "data")
	cfg := fmt.Sprintf(`model: {spec: %q, id: spread-model}
store: {uri: %s}
dedup: {corpus: [%s]}
run: {shard_size: 8, parallel_shards: 4, bootstrap_resamples: 50}
axes:
  knowledge:
    scoring_mode: cloze
    datasets:
      - {name: g, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 4}
`, model, t.TempDir(), dir, data)
	runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "spread-1"})

	screened := map[string]int{} // ScreenShard attempts started, by worker
	it := c.GetWorkflowHistory(context.Background(), "evalrun-spread-1-screen-1", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			screened[a.GetIdentity()]++
		}
	}
	t.Logf("ScreenShard attempts by worker: %v", screened)
	// Handed out by the server to whichever worker polls, each of the two
	// gets about half; below a sixth is (binomially) a one-in-a-million
	// event, and what eager dispatch gave the second worker.
	if n := screened["worker-a"] + screened["worker-b"]; n < files || len(screened) != 2 {
		t.Fatalf("%d shards: screened by %v", files, screened)
	}
	for w, n := range screened {
		if n < files/6 {
			t.Errorf("%s screened %d of %d shards (%v): the shards do not spread over the workers", w, n, files, screened)
		}
	}
}
