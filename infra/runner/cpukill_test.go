package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/glossobench/glossobench/infra/runner"
	"github.com/glossobench/glossobench/infra/runner/runnertest"
	"github.com/glossobench/glossobench/workflows"
)

// A CPU worker SIGKILLed inside a CPU stage (here Prepare, reading a large
// dataset) is noticed by its stopped heartbeat and the stage runs again on
// the replacement worker within seconds; without a heartbeat the server
// waits for the stage's 30-minute start-to-close timeout.
func TestCPUWorkerKilledMidStage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs an EvalRun on a subprocess CPU worker")
	}
	srv, c := runnertest.StartServer(t)
	startWorkers(t, c, runner.Inference)
	bin := buildBinary(t)
	model := &quickModel{seen: map[[16]byte]int32{}}
	hs := httptest.NewServer(model)
	defer hs.Close()

	// 400,000 rows of which the filter keeps 40: Prepare reads for seconds,
	// the rest of the run is short.
	const rows, kept = 400000, 40
	data := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < rows; i++ {
		label := "-"
		if i%(rows/kept) == 0 {
			label = "CS"
		}
		row, _ := json.Marshal(map[string]string{"sample_id": fmt.Sprintf("s/%d", i), "subject": "s",
			"question": fmt.Sprintf("Soalan nombor %d?", i), "A": "satu", "B": "dua", "C": "tiga", "D": "empat",
			"answer": string(rune('A' + i%4)), "cultural_sensitivity_label": label})
		w.Write(append(row, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cfg := fmt.Sprintf(`model: {spec: %q, id: quick, flavor: vllm, concurrency: 4}
store: {uri: %s}
run: {shard_size: 10, checkpoint_every: 5, bootstrap_resamples: 200}
axes:
  cultural:
    scoring_mode: generate
    datasets: [{name: big, path: %s, format: global_mmlu, filter: {cultural_sensitivity_label: CS}}]
`, hs.URL, t.TempDir(), data)

	cpu := startQueueWorker(t, bin, srv.Address, "cpu")
	wf := startRun(t, c, workflows.EvalRunInput{Config: cfg, RunID: "cpu-kill"})
	// Kill the worker as soon as it runs Prepare.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := c.DescribeWorkflowExecution(context.Background(), wf, "")
		if err == nil && len(d.GetPendingActivities()) == 1 {
			a := d.GetPendingActivities()[0]
			if a.GetActivityType().GetName() == "Prepare" && a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prepare did not start within 2 minutes (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cpu.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	cpu.Wait()
	startQueueWorker(t, bin, srv.Address, "cpu")
	res := awaitRun(t, c, wf, 3*time.Minute)

	// The history's ActivityTaskStarted of Prepare is its last attempt's.
	var attempt int32
	var retried time.Time
	eachEvent(t, c, wf, "", func(ev *historypb.HistoryEvent) {
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && attempt == 0 {
			attempt, retried = a.GetAttempt(), ev.GetEventTime().AsTime()
		}
	})
	if attempt < 2 {
		t.Fatalf("Prepare ran in attempt %d: it finished before the kill, so nothing was tested; make its dataset larger", attempt)
	}
	took := retried.Sub(killed)
	t.Logf("Prepare: attempt %d started on the new worker %s after the kill", attempt, took.Round(time.Millisecond))
	// The shipped heartbeat timeout (5 s) plus the first retry (1 s), with
	// room for a loaded machine; without a heartbeat it is 30 minutes.
	if took > time.Minute {
		t.Errorf("Prepare was retried %s after its worker died, want within a minute", took)
	}
	if got := readResult(t, res.Summary.ResultPath).Axes["cultural"].N; got != kept {
		t.Errorf("scored %d items, want %d", got, kept)
	}
}
