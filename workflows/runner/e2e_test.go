package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

// repoRoot is the module root, found from this file's path.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// runYAML is the run settings of the end-to-end configs: shards of 8
// items, a checkpoint every 4, 200 bootstrap resamples. The heartbeat is
// the shipped default, so the fault matrix measures what a user gets.
const runYAML = `run:
  shard_size: 8
  checkpoint_every: 4
  bootstrap_resamples: 200
`

// mcqConfig is a small three-axis config on the repository's test data.
func mcqConfig(t testing.TB, model, storeURI, mode, extra string) string {
	root := repoRoot(t)
	data := filepath.Join(root, "testdata", "data")
	return fmt.Sprintf(`model:
  spec: %s
  id: test-model
%sstore:
  uri: %s
`+runYAML+`axes:
  knowledge:
    scoring_mode: %s
    datasets:
      - {name: global_mmlu_ms, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, lang: ms, limit: 20}
  nlu:
    scoring_mode: %s
    datasets:
      - {name: belebele_ms, path: %s/belebele_ms_en/ms_belebele.jsonl, format: belebele, lang: ms, limit: 10}
      - {name: indonli, path: %s/nli_indonli/id_indonli_lay_1000sample.jsonl, format: indonli, lang: id, limit: 10}
  cultural:
    scoring_mode: %s
    datasets:
      - {name: gmmlu_cs, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, lang: ms, limit: 12, filter: {cultural_sensitivity_label: CS}}
`, model, extra, storeURI, mode, data, mode, data, data, mode, data)
}

// serverWithWorkers starts the embedded Temporal server and every queue's
// workers in the test process, all stopped when the test ends.
func serverWithWorkers(t testing.TB) client.Client {
	t.Helper()
	_, c := runnertest.StartServer(t)
	startWorkers(t, c, runner.All)
	return c
}

// serverWithInstantWorkers is serverWithWorkers with the instant in-process
// backend in place of the configured model.
func serverWithInstantWorkers(t testing.TB) client.Client {
	t.Helper()
	_, c := runnertest.StartServer(t)
	startInstantWorkers(t, c)
	return c
}

// startWorkers runs the given task queues' workers in the test process
// until the test ends.
func startWorkers(t testing.TB, c client.Client, q runner.Queues) {
	t.Helper()
	serve(t, c, q, nil)
}

// startInstantWorkers starts every queue's workers with the instant
// in-process backend in place of the configured model.
func startInstantWorkers(t testing.TB, c client.Client) {
	t.Helper()
	serve(t, c, runner.All, func(string, registry.Options) (backends.Backend, error) { return instant{}, nil })
}

// serve starts workers of this process for q, opening models with open
// (nil: the registry), stopped when the test ends.
func serve(t testing.TB, c client.Client, q runner.Queues, open func(string, registry.Options) (backends.Backend, error)) {
	t.Helper()
	acts := activities.New(zerolog.Nop())
	acts.OpenBackend = open
	w, err := runner.StartWorkers(c, acts, q)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); acts.Close() })
}

func runEval(t testing.TB, c client.Client, in workflows.EvalRunInput) workflows.EvalRunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "evalrun-" + in.RunID, TaskQueue: workflows.TaskQueue}, workflows.WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.EvalRunResult
	if err := we.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func readResult(t testing.TB, path string) runfiles.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r runfiles.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// historyEvents counts a workflow's history events and optionally saves them as JSON.
func historyEvents(t testing.TB, c client.Client, wfID, saveTo string) int {
	t.Helper()
	var hist historypb.History
	eachEvent(t, c, wfID, "", func(ev *historypb.HistoryEvent) { hist.Events = append(hist.Events, ev) })
	if saveTo != "" {
		data, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&hist)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(saveTo), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(saveTo, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return len(hist.Events)
}

// The three MCQ axes end to end on a real Temporal server with the embedded
// GGUF model and the local store.
func TestEvalRunEmbedded(t *testing.T) {
	c := serverWithWorkers(t)

	storeDir := t.TempDir()
	model := "gguf:" + filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf")
	cfg := strings.Replace(mcqConfig(t, model, storeDir, "both", ""), "  knowledge:\n", "  knowledge:\n    probes: [shuffle, unanswerable]\n", 1)
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "e2e-1"})
	r := readResult(t, res.Summary.ResultPath)
	for _, axis := range []string{"knowledge", "nlu", "cultural"} {
		ax, ok := r.Axes[axis]
		if !ok || ax.Score == nil {
			t.Fatalf("axis %s missing or unscored: %+v", axis, ax)
		}
		if ax.CI95 == nil || ax.CI95[0] > *ax.Score || ax.CI95[1] < *ax.Score {
			t.Fatalf("axis %s: CI %v does not bracket %v", axis, ax.CI95, *ax.Score)
		}
	}
	if n := r.Axes["knowledge"].N; n != 20 {
		t.Fatalf("knowledge n = %d, want 20", n)
	}
	if r.Axes["knowledge"].ByScoring == nil || r.Axes["knowledge"].ByScoring.Cloze == nil {
		t.Fatalf("knowledge by_scoring missing: %+v", r.Axes["knowledge"].ByScoring)
	}
	// Probes on the tiny model: both leakage signals are measured on the knowledge items.
	sec := r.Axes["knowledge"].Secondary
	if sec["shuffle_n"] != 20.0 || sec["unanswerable_n"] != 20.0 {
		t.Fatalf("probes did not run on every knowledge item: %v", sec)
	}
	if _, ok := sec["shuffle_drop"].(float64); !ok {
		t.Fatalf("shuffle_drop missing: %v", sec)
	}
	if r.Axes["nlu"].Profile.Leakage == nil || r.Axes["nlu"].Profile.Leakage.Sources != 2 {
		t.Fatalf("nlu pools two datasets; audit = %+v", r.Axes["nlu"].Profile.Leakage)
	}
	if r.Summary.MSPublic == nil || r.Summary.MSCI95 == nil || len(r.Summary.MSAxes) != 3 {
		t.Fatalf("summary = %+v", r.Summary)
	}
	if r.Summary.Dedup.Corpus != "no corpus" || len(r.Summary.Dedup.KeptSHA256) != 64 {
		t.Fatalf("dedup = %+v", r.Summary.Dedup)
	}

	// Same pins, same numbers.
	res2 := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "e2e-2"})
	r2 := readResult(t, res2.Summary.ResultPath)
	for axis, ax := range r.Axes {
		if *ax.Score != *r2.Axes[axis].Score || *ax.CI95 != *r2.Axes[axis].CI95 {
			t.Fatalf("axis %s differs between identical runs: %v %v vs %v %v", axis, *ax.Score, *ax.CI95, *r2.Axes[axis].Score, *r2.Axes[axis].CI95)
		}
	}
	if *r.Summary.MSPublic != *r2.Summary.MSPublic {
		t.Fatal("ms_public differs between identical runs")
	}

	save := func(string) string { return "" }
	if os.Getenv("GLOSSOBENCH_RECORD_HISTORY") != "" {
		save = func(name string) string { return filepath.Join(repoRoot(t), "testdata", "histories", name+".json") }
	}
	n := historyEvents(t, c, "evalrun-e2e-1", save("evalrun"))
	t.Logf("history events: %d for %d items", n, 20+20+12)
	if n > 300 {
		t.Fatalf("history has %d events for 52 items", n)
	}
	// Each axis's inference runs in an InferAxis child; the knowledge
	// axis's history is recorded beside EvalRun's for the replay test.
	children := childWorkflows(t, c, "evalrun-e2e-1")
	if len(children) != 3 {
		t.Fatalf("EvalRun started children %v, want one InferAxis per axis", children)
	}
	for _, id := range children {
		to := ""
		if id == "evalrun-e2e-1-infer-knowledge" {
			to = save("inferaxis")
		}
		n := historyEvents(t, c, id, to)
		t.Logf("%s: %d history events", id, n)
		if n > 300 {
			t.Fatalf("%s has %d history events", id, n)
		}
	}
	checkReadableInUI(t, c, "evalrun-e2e-1", "test-model")
}

// eachEvent calls fn with each event of the history of run runID of wfID
// (the latest run when runID is empty).
func eachEvent(t testing.TB, c client.Client, wfID, runID string, fn func(*historypb.HistoryEvent)) {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), wfID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		fn(ev)
	}
}

// childWorkflows lists the ids of the child workflows wfID started.
func childWorkflows(t testing.TB, c client.Client, wfID string) []string {
	t.Helper()
	var ids []string
	eachEvent(t, c, wfID, "", func(ev *historypb.HistoryEvent) {
		if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			ids = append(ids, a.GetWorkflowId())
		}
	})
	return ids
}

// checkReadableInUI checks what an operator sees of a run started without
// search attributes, as the Temporal CLI or a Schedule starts it: the run is
// found by its model id, and every activity and timer row says what it is.
func checkReadableInUI(t *testing.T, c client.Client, wfID, modelID string) {
	t.Helper()
	ctx := context.Background()
	query := fmt.Sprintf("GlossoModelID = %q AND GlossoAxes = 'knowledge'", modelID)
	var found []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		found = found[:0]
		for _, e := range resp.GetExecutions() {
			found = append(found, e.GetExecution().GetWorkflowId())
		}
		if slices.Contains(found, wfID) || time.Now().After(deadline) {
			break
		}
	}
	if !slices.Contains(found, wfID) {
		t.Fatalf("ListWorkflowExecutions %s found %v, not %s", query, found, wfID)
	}

	summary := func(ev *historypb.HistoryEvent) string {
		var s string
		if p := ev.GetUserMetadata().GetSummary(); p != nil {
			if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
				t.Fatalf("event %d: summary: %v", ev.GetEventId(), err)
			}
		}
		return s
	}
	shape := regexp.MustCompile(`^(prepare|dedup|aggregate|infer (knowledge|nlu|cultural) shard \d+/\d+|(probes|score|audit) (knowledge|nlu|cultural))$`)
	seen := map[string]bool{}
	// The run's rows are in its history and its children's (InferAxis).
	for _, id := range append([]string{wfID}, childWorkflows(t, c, wfID)...) {
		eachEvent(t, c, id, "", func(ev *historypb.HistoryEvent) {
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				s := summary(ev)
				if !shape.MatchString(s) {
					t.Fatalf("activity %s (event %d) has summary %q", ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName(), ev.GetEventId(), s)
				}
				seen[s] = true
			case enumspb.EVENT_TYPE_TIMER_STARTED:
				s := summary(ev)
				if !strings.HasPrefix(s, "budget ") {
					t.Fatalf("timer (event %d) has summary %q", ev.GetEventId(), s)
				}
				seen[s] = true
			}
		})
	}
	for _, want := range []string{"prepare", "infer knowledge shard 3/3", "budget nlu", "probes knowledge", "audit cultural", "aggregate"} {
		if !seen[want] {
			t.Fatalf("no event with summary %q among %v", want, seen)
		}
	}
}
