package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// fakeModel is an OpenAI-compatible /v1/completions server that answers a
// letter derived from the prompt after a fixed latency, and counts how often
// it saw each prompt.
type fakeModel struct {
	mu    sync.Mutex
	seen  map[string]int
	total int
	calls []call // every call, in order of arrival
}

type call struct {
	at     time.Time
	prompt string
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt string `json:"prompt"`
	}
	if r.URL.Path != "/v1/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "unsupported", http.StatusNotFound)
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, call{time.Now(), req.Prompt}) // as it arrives: in flight at a kill is before it
	f.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	f.mu.Lock()
	f.seen[req.Prompt]++
	f.total++
	f.mu.Unlock()
	h := sha256.Sum256([]byte(req.Prompt))
	letter := string(rune('A' + int(h[0])%3))
	fmt.Fprintf(w, `{"choices":[{"index":0,"text":" %s","finish_reason":"stop"}],"usage":{"completion_tokens":1}}`, letter)
}

func (f *fakeModel) count() (total, repeated int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.seen {
		if n > 1 {
			repeated += n - 1
		}
	}
	return f.total, repeated
}

// firstCallAfter is how long after t0 the first call since t0 arrived, or
// 0 if none did.
func (f *fakeModel) firstCallAfter(t0 time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.at.After(t0) {
			return c.at.Sub(t0)
		}
	}
	return 0
}

// firstRepeatAfter is how long after t0 the model was first asked again a
// prompt it had been asked before t0: a killed attempt's items in flight,
// asked by its retry on another worker. 0 if none was.
func (f *fakeModel) firstRepeatAfter(t0 time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	before := map[string]bool{}
	for _, c := range f.calls {
		if !c.at.After(t0) {
			before[c.prompt] = true
		} else if before[c.prompt] {
			return c.at.Sub(t0)
		}
	}
	return 0
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "glossobench")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/glossobench")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func startInferenceWorker(t *testing.T, bin, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "worker", "--queues", "inference")
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+addr, "TEMPORAL_NAMESPACE=default")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// SIGKILL the inference worker mid-run and start a new one: the run
// completes, its result equals an uninterrupted run's, and the model saw no
// item twice beyond those in flight at the kill.
func TestCrashResumesWithoutRepeatingWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs two EvalRuns")
	}
	srv, c := runnertest.StartServer(t)
	startWorkers(t, c, runner.CPU)
	fake := &fakeModel{seen: map[string]int{}}
	hs := httptest.NewServer(fake)
	defer hs.Close()
	bin := buildBinary(t)

	cfg := mcqConfig(t, hs.URL, t.TempDir(), "generate", "  flavor: vllm\n  concurrency: 2\n")
	worker1 := startInferenceWorker(t, bin, srv.Address)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "evalrun-crash", TaskQueue: workflows.TaskQueue},
		workflows.WorkflowName, workflows.EvalRunInput{Config: cfg, RunID: "crash"})
	if err != nil {
		t.Fatal(err)
	}
	// `task chaos` moves the kill point through the run.
	killAt := 15
	if v, err := strconv.Atoi(os.Getenv("GLOSSOBENCH_CHAOS_KILL_AT")); err == nil && v > 0 {
		killAt = v
	}
	for {
		if total, _ := fake.count(); total >= killAt {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := worker1.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	worker1.Wait()
	killedAt, _ := fake.count()
	startInferenceWorker(t, bin, srv.Address)
	restarted := time.Now()
	var crashed workflows.EvalRunResult
	if err := we.Get(ctx, &crashed); err != nil {
		t.Fatal(err)
	}
	recovered := time.Since(restarted)
	total, repeated := fake.count()
	t.Logf("model calls: %d before the kill, %d in all, %d repeated", killedAt, total, repeated)
	a := readResult(t, crashed.Summary.ResultPath)
	// The killed attempts' items are asked again when their retries start
	// on the new worker: with the shipped heartbeat defaults, within 10 s.
	resumed := fake.firstRepeatAfter(killed)
	t.Logf("a killed attempt's item asked again %s after the kill (first request of the new worker after %s)",
		resumed.Round(time.Millisecond), fake.firstCallAfter(restarted).Round(time.Millisecond))
	chaosRow(t, fmt.Sprintf("1 inference worker SIGKILL after %d calls", killAt), 1, 1,
		mcqItems-scoredItems(a), repeated, resumed, recovered)
	if repeated > 0 && (resumed <= 0 || resumed > 10*time.Second) {
		t.Errorf("a killed attempt's item was asked again %s after the kill, want within 10 s", resumed)
	}
	if repeated > inFlightBound {
		t.Fatalf("%d items were sent to the model again; at most %d were in flight", repeated, inFlightBound)
	}
	if items := 20 + 20 + 12; total-repeated != items {
		t.Fatalf("model answered %d distinct items, want %d", total-repeated, items)
	}

	ref := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "uninterrupted"})
	b := readResult(t, ref.Summary.ResultPath)
	for axis, ax := range b.Axes {
		got := a.Axes[axis]
		if got.Score == nil || *got.Score != *ax.Score || got.N != ax.N || *got.CI95 != *ax.CI95 {
			t.Fatalf("axis %s after a crash %+v differs from uninterrupted %+v", axis, got.AxisResult, ax.AxisResult)
		}
	}
	if *a.Summary.MSPublic != *b.Summary.MSPublic {
		t.Fatal("ms_public differs after a crash")
	}
}
