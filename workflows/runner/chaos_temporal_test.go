package runner_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// The embedded Temporal server in a process of its own, so a test can kill
// it and start it again on the same SQLite file and address. The test binary
// runs itself as that process: TestChaosHelperTemporalServer does nothing
// unless these variables are set.
const (
	helperDBEnv   = "GLOSSOBENCH_CHAOS_TEMPORAL_DB"
	helperPortEnv = "GLOSSOBENCH_CHAOS_TEMPORAL_PORT"
)

func TestChaosHelperTemporalServer(t *testing.T) {
	db := os.Getenv(helperDBEnv)
	if db == "" {
		t.Skip("the Temporal server process of TestChaosTemporalRestart")
	}
	port, err := strconv.Atoi(os.Getenv(helperPortEnv))
	if err != nil {
		t.Fatalf("%s: %v", helperPortEnv, err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	srv, err := devserver.Start(devserver.Options{DBFile: db, Port: port, UIPort: -1,
		LogFile: filepath.Join(filepath.Dir(db), "temporal.log"), SearchAttributes: runner.SearchAttributes})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("TEMPORAL-READY", srv.Address)
	<-stop
	srv.Stop()
}

// temporalProcess is one life of the server process.
type temporalProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startTemporalProcess starts the server process on db and port and waits
// until its frontend answers.
func startTemporalProcess(t *testing.T, db string, port int) *temporalProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChaosHelperTemporalServer$", "-test.v")
	cmd.Env = append(os.Environ(), helperDBEnv+"="+db, helperPortEnv+"="+strconv.Itoa(port))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &temporalProcess{cmd: cmd, done: make(chan struct{})}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "TEMPORAL-READY") {
				ready <- sc.Text()
			}
		}
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill(syscall.SIGKILL) })
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("the Temporal server process exited at start (%v)", cmd.ProcessState)
	case <-time.After(90 * time.Second):
		t.Fatal("the Temporal server process did not start in 90 s")
	}
	return p
}

// kill sends sig and waits for the process to end (SIGKILL after 30 s).
func (p *temporalProcess) kill(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Fault-matrix case 2: the Temporal server is stopped mid-run, once cleanly
// (SIGTERM) and once by SIGKILL, and started again on the same SQLite file
// and address after a pause longer than the inference heartbeat timeout.
// The workers and the client reconnect by themselves, the run completes with
// the undisturbed run's result, and no item reaches the model twice beyond
// those in flight.
func TestChaosTemporalRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a Temporal server under three EvalRuns")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "temporal.db")
	port, err := devserver.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	proc := startTemporalProcess(t, db, port)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default", Logger: runnertest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	startWorkers(t, c, runner.All)

	refModel := httptest.NewServer(&fakeModel{seen: map[string]int{}})
	defer refModel.Close()
	ref := runEval(t, c, workflows.EvalRunInput{
		Config: mcqConfig(t, refModel.URL, t.TempDir(), "generate", "  flavor: vllm\n  concurrency: 2\n"), RunID: "temporal-ref"})
	want := readResult(t, ref.Summary.ResultPath)

	trials := []struct {
		name string
		sig  syscall.Signal
	}{{"stop", syscall.SIGTERM}, {"kill", syscall.SIGKILL}}
	completed, lost, reinferred := 0, 0, 0
	var worst, worstFirst time.Duration
	for _, tr := range trials {
		model := &fakeModel{seen: map[string]int{}}
		hs := httptest.NewServer(model)
		run := "temporal-" + tr.name
		wf := startRun(t, c, workflows.EvalRunInput{
			Config: mcqConfig(t, hs.URL, t.TempDir(), "generate", "  flavor: vllm\n  concurrency: 2\n"), RunID: run})
		waitAnswered(t, model, 12, 2*time.Minute)
		stopping := time.Now()
		proc.kill(tr.sig)
		stopTook := time.Since(stopping)
		stoppedAt, _ := model.count()
		// Longer than the 5 s inference heartbeat timeout, so the restarted
		// server times the running attempts out and schedules new ones.
		time.Sleep(8 * time.Second)
		proc = startTemporalProcess(t, db, port)
		back := time.Now()
		res := awaitRun(t, c, wf, 5*time.Minute)
		recovered := time.Since(back)
		hs.Close()

		total, repeated := model.count()
		got := readResult(t, res.Summary.ResultPath)
		t.Logf("%s: server down after %d model calls (stopping took %s); %d calls in all, %d repeated; recovered in %s",
			tr.name, stoppedAt, stopTook.Round(time.Millisecond), total, repeated, recovered.Round(time.Millisecond))
		if total-repeated != mcqItems {
			t.Fatalf("%s: the model answered %d distinct items, want %d", tr.name, total-repeated, mcqItems)
		}
		if repeated > inFlightBound {
			t.Fatalf("%s: %d items were sent to the model again; at most %d were in flight", tr.name, repeated, inFlightBound)
		}
		sameScores(t, "after a Temporal "+tr.name, got, want)
		completed++
		lost += mcqItems - scoredItems(got)
		reinferred += repeated
		worst = max(worst, recovered)
		worstFirst = max(worstFirst, model.firstCallAfter(back))
	}
	chaosRow(t, "2 Temporal server stop/kill + restart", len(trials), completed, lost, reinferred, worstFirst, worst)
}
