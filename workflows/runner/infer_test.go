package runner_test

import (
	"fmt"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/workflows"
)

// runHistories follows each child of EvalRun wfID through its
// continue-as-new chain and returns the events of every history: EvalRun's
// first, then each run of each child, named "id run N".
func runHistories(t testing.TB, c client.Client, wfID string) (names []string, events []int) {
	t.Helper()
	type child struct{ id, runID string }
	var children []child
	n := 0
	eachEvent(t, c, wfID, "", func(ev *historypb.HistoryEvent) {
		n++
		if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
			children = append(children, child{a.GetWorkflowExecution().GetWorkflowId(), a.GetWorkflowExecution().GetRunId()})
		}
	})
	names, events = append(names, wfID), append(events, n)
	for _, ch := range children {
		for run, runID := 1, ch.runID; runID != ""; run++ {
			next, k := "", 0
			eachEvent(t, c, ch.id, runID, func(ev *historypb.HistoryEvent) {
				k++
				if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
					next = a.GetNewExecutionRunId()
				}
			})
			names, events = append(names, fmt.Sprintf("%s run %d", ch.id, run)), append(events, k)
			runID = next
		}
	}
	return names, events
}

// An axis of more shards than one InferAxis run starts, on the real server:
// the child continues as new, every item is answered and scored, and every
// history, counted by the server, stays small.
func TestInferAxisContinuesAsNewOnServer(t *testing.T) {
	const items, shardSize = 2100, 4 // 525 shards: three InferAxis runs
	c := serverWithInstantWorkers(t)
	cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: instant}
store: {uri: %s}
run: {shard_size: %d, checkpoint_every: 4, parallel_shards: 8, bootstrap_resamples: 50}
axes:
  knowledge:
    datasets: [{name: syn, path: %s, format: global_mmlu}]
`, t.TempDir(), shardSize, writeSynthetic(t, items))
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "infer-can"})
	if r := readResult(t, res.Summary.ResultPath); r.Axes["knowledge"].N != items {
		t.Fatalf("knowledge n = %d, want %d", r.Axes["knowledge"].N, items)
	}
	names, events := runHistories(t, c, "evalrun-infer-can")
	for i, name := range names {
		t.Logf("%-38s %4d history events", name, events[i])
		if events[i] >= 2000 {
			t.Errorf("%s: %d history events", name, events[i])
		}
	}
	if len(names) != 4 || names[3] != "evalrun-infer-can-infer-knowledge run 3" {
		t.Fatalf("histories %v: want EvalRun's and three InferAxis runs", names)
	}
}
