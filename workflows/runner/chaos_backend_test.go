package runner_test

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
)

// flakyBackend serves fakeModel on a fixed address and injects faults: every
// failEvery-th request is answered with 429 (with Retry-After), 500 or no
// answer at all until the client times out, and the whole server can be
// taken away (listener closed, open connections cut) and brought back on the
// same address.
type flakyBackend struct {
	model     *fakeModel
	addr      string
	failEvery int // every failEvery-th request fails; 0 = none

	mu     sync.Mutex
	srv    *http.Server
	faults map[string]int // fault kind → count
	calls  atomic.Int64   // requests that reached the handler
}

func newFlakyBackend(t *testing.T, failEvery int) *flakyBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &flakyBackend{
		model: &fakeModel{seen: map[string]int{}}, addr: ln.Addr().String(), failEvery: failEvery, faults: map[string]int{},
	}
	f.serve(ln)
	t.Cleanup(f.down)
	return f
}

func (f *flakyBackend) URL() string { return "http://" + f.addr }

func (f *flakyBackend) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(f.handle)}
	f.mu.Lock()
	f.srv = srv
	f.mu.Unlock()
	go srv.Serve(ln)
}

// down takes the server away: new connections are refused, open ones cut.
func (f *flakyBackend) down() {
	f.mu.Lock()
	srv := f.srv
	f.srv = nil
	f.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// up brings the server back on its old address.
func (f *flakyBackend) up(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port may linger briefly after Close
		if ln, err = net.Listen("tcp", f.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("backend cannot listen on %s again: %v", f.addr, err)
	}
	f.serve(ln)
}

func (f *flakyBackend) handle(w http.ResponseWriter, r *http.Request) {
	// Every fifth request fails, the kinds in turn, so a run meets each
	// kind several times whatever the timing.
	n := f.calls.Add(1)
	kind := ""
	if f.failEvery > 0 && n%int64(f.failEvery) == 0 {
		kind = []string{"429", "500", "timeout"}[(n/int64(f.failEvery))%3]
		f.mu.Lock()
		f.faults[kind]++
		f.mu.Unlock()
	}
	switch kind {
	case "429":
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"message":"rate limited"}}`, http.StatusTooManyRequests)
	case "500":
		http.Error(w, `{"error":{"message":"internal error"}}`, http.StatusInternalServerError)
	case "timeout":
		// Answer nothing until the client gives up (its timeout is 1 s).
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	default:
		f.model.ServeHTTP(w, r)
	}
}

func (f *flakyBackend) faultCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.faults {
		out[k] = v
	}
	return out
}

// waitAnswered waits until the model has answered n requests.
func waitAnswered(t *testing.T, m *fakeModel, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if total, _ := m.count(); total >= n {
			return
		}
		if time.Now().After(deadline) {
			total, _ := m.count()
			t.Fatalf("the model answered %d requests in %s, waiting for %d", total, timeout, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// backendConfig is mcqConfig against a flaky server: a 1 s request timeout
// so hung requests fail fast.
func backendConfig(t *testing.T, url, storeDir string) string {
	return mcqConfig(t, url, storeDir, "generate", "  flavor: vllm\n  concurrency: 2\n  timeout_seconds: 1\n")
}

// Fault-matrix case 4: the backend answers 20% of requests with 429, 500 or
// a timeout, then disappears for 30 s and comes back. Requests are retried
// with backoff (the client's, then the activity's), every item is scored,
// none is recorded as failed, and the result equals an undisturbed run's.
func TestChaosFlakyBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s backend outage inside two EvalRuns")
	}
	c := serverWithWorkers(t)

	clean := newFlakyBackend(t, 0)
	refDir := t.TempDir()
	ref := runEval(t, c, workflows.EvalRunInput{Config: backendConfig(t, clean.URL(), refDir), RunID: "backend-ref"})

	flaky := newFlakyBackend(t, 5)
	storeDir := t.TempDir()
	wf := startRun(t, c, workflows.EvalRunInput{Config: backendConfig(t, flaky.URL(), storeDir), RunID: "backend-flaky"})
	waitAnswered(t, flaky.model, 20, 2*time.Minute)
	flaky.down()
	outage := 30 * time.Second
	t.Logf("backend down after %d answers, for %s", func() int { n, _ := flaky.model.count(); return n }(), outage)
	time.Sleep(outage)
	flaky.up(t)
	back := time.Now()
	res := awaitRun(t, c, wf, 5*time.Minute)
	recovered := time.Since(back)

	total, repeated := flaky.model.count()
	faults := flaky.faultCounts()
	t.Logf("requests %d, answered %d (%d repeated), faults %v, recovered %s after the outage",
		flaky.calls.Load(), total, repeated, faults, recovered.Round(time.Millisecond))
	if faults["429"] == 0 || faults["500"] == 0 || faults["timeout"] == 0 {
		t.Fatalf("not every fault kind was injected: %v", faults)
	}
	st, err := store.NewLocal(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	rep := auditCheckpoints(t, st, "backend-flaky")
	got := readResult(t, res.Summary.ResultPath)
	lost := mcqItems - scoredItems(got)
	chaosRow(t, "4 backend 20% 429/500/timeout + 30s away", 1, 1, lost, repeated, flaky.model.firstCallAfter(back), recovered)
	if rep.missing != 0 || lost != 0 {
		t.Fatalf("%d items without a prediction, %d not scored (%s)", rep.missing, lost, axisNames(got))
	}
	if repeated > inFlightBound {
		t.Fatalf("%d items were sent to the model again; at most %d were in flight", repeated, inFlightBound)
	}
	sameScores(t, "after backend faults", got, readResult(t, ref.Summary.ResultPath))
}

// Fault-matrix case 4, budget variant: the backend fails 20% of requests and
// then goes away for longer than the run's budget. Every axis stops at its
// budget, what was answered is scored, nothing is recorded as failed, and the
// notes count exactly the items left unscored.
func TestChaosBackendBudgetExpires(t *testing.T) {
	if testing.Short() {
		t.Skip("an EvalRun that waits out its budget")
	}
	c := serverWithWorkers(t)

	flaky := newFlakyBackend(t, 5)
	storeDir := t.TempDir()
	// The workflow keeps 120 s back for scoring and aggregation, so 150 s
	// leaves about 30 s of inference budget for the three axes.
	start := time.Now()
	wf := startRun(t, c, workflows.EvalRunInput{Config: backendConfig(t, flaky.URL(), storeDir), RunID: "backend-budget", MaxWallSeconds: 150})
	waitAnswered(t, flaky.model, 10, 2*time.Minute)
	flaky.down() // for good: the budget runs out first
	downAt := time.Now()
	res := awaitRun(t, c, wf, 4*time.Minute)
	t.Logf("run took %s; backend down after %s", time.Since(start).Round(time.Millisecond), downAt.Sub(start).Round(time.Millisecond))

	got := readResult(t, res.Summary.ResultPath)
	st, err := store.NewLocal(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	rep := auditCheckpoints(t, st, "backend-budget")
	unscored := unscoredInNotes(t, got.Summary.Notes)
	sum := 0
	for _, axis := range []string{"knowledge", "nlu", "cultural"} {
		n := 0
		if ax, ok := got.Axes[axis]; ok {
			n = ax.N
		}
		want := map[string]int{"knowledge": 20, "nlu": 20, "cultural": 12}[axis]
		if n+unscored[axis] != want {
			t.Errorf("axis %s: %d scored + %d unscored in the notes != %d items; notes %q", axis, n, unscored[axis], want, got.Summary.Notes)
		}
		sum += unscored[axis]
	}
	// Lost here: items neither scored nor counted as unscored in the notes.
	// (The model may have answered one more item than was kept: taking the
	// server away cuts a response on its way to the client.)
	total, repeated := flaky.model.count()
	t.Logf("unscored per axis in the notes: %v; scored: %s; the model answered %d items, %d kept",
		unscored, axisNames(got), total-repeated, rep.predicted)
	chaosRow(t, "4b backend away past the budget", 1, 1, mcqItems-scoredItems(got)-sum, repeated, 0, 0)
	if sum == 0 || sum != mcqItems-scoredItems(got) || sum != rep.missing {
		t.Fatalf("notes count %d unscored items; %d were not scored, %d have no prediction; notes %q",
			sum, mcqItems-scoredItems(got), rep.missing, got.Summary.Notes)
	}
}
