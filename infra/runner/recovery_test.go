package runner_test

// Recovery on the shipped defaults, measured the way an operator meets it
// (issue 28 item 1): the glossobench binary in its own network namespace
// (its own 127.0.0.1, so `run` starts the embedded server on 7233 as on a
// laptop, with the state folder .glossobench beside the config), a run
// under way, and `run`, a worker or `glossobench dev` SIGKILLed and started
// again by the same command. The figure is the time from the restart to
// the first model request for an item. By hand: it prints its table and
// checks only that every run completes with the clean run's scores.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runner/runnertest"
	"github.com/glossobench/glossobench/infra/store"
)

// preflightPrompt is the one generation `run`'s preflight asks for
// (infra/preflight): a model request, but no item's.
const preflightPrompt = "Soalan: 1 + 1 = ?\nJawapan:"

// itemCalls are the model's calls for items, in order of arrival.
func (f *fakeModel) itemCalls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.prompt != preflightPrompt {
			out = append(out, c)
		}
	}
	return out
}

// recoveryFigures reads the model's log of one faulted run: how long after
// restart the first item was asked, how long after kill an item asked
// before the kill was asked again, and how many item requests repeated one.
func recoveryFigures(calls []call, kill, restart time.Time) (first, firstRepeat time.Duration, repeats int) {
	seen := map[string]bool{}
	for _, c := range calls {
		if c.at.After(restart) && first == 0 {
			first = c.at.Sub(restart)
		}
		if seen[c.prompt] {
			repeats++
			if c.at.After(kill) && firstRepeat == 0 {
				firstRepeat = c.at.Sub(kill)
			}
		}
		seen[c.prompt] = true
	}
	return first, firstRepeat, repeats
}

// TestRecoveryByHand runs the three crashes on the shipped
// defaults, after a clean run of the same config, and prints the figures:
//
//	sudo GLOSSOBENCH_RECOVERY=1 go test ./infra/runner -run '^TestRecoveryByHand$' -v -timeout 30m
//
// (task recovery). GLOSSOBENCH_RECOVERY_KILL_AT (default 15) is the number
// of item requests the model has seen when the process is killed.
func TestRecoveryByHand(t *testing.T) {
	if os.Getenv("GLOSSOBENCH_RECOVERY") == "" {
		t.Skip("by hand: GLOSSOBENCH_RECOVERY=1, as root (task recovery)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("GLOSSOBENCH_RECOVERY=1: the measurement needs root for its network namespace")
	}
	killAt := 15
	if v := os.Getenv("GLOSSOBENCH_RECOVERY_KILL_AT"); v != "" {
		if _, err := fmt.Sscan(v, &killAt); err != nil {
			t.Fatalf("GLOSSOBENCH_RECOVERY_KILL_AT=%q: %v", v, err)
		}
	}
	const bridge, rootIP, hostIP = "gbr-br0", "10.78.0.1", "10.78.0.2"
	root := t.TempDir()
	host := &clusterHost{name: "solo", ip: hostIP, dir: filepath.Join(root, "solo"), prefix: "gbr"}
	clusterTeardown(bridge, []*clusterHost{host})
	t.Cleanup(func() { clusterTeardown(bridge, []*clusterHost{host}) })
	clusterNetwork(t, bridge, rootIP, []*clusterHost{host}) // host.dir changes per case below
	bin := buildBinary(t)

	// model serves one case on the bridge, where the namespace reaches it.
	model := func() (*fakeModel, string) {
		f := &fakeModel{seen: map[string]int{}}
		ln, err := net.Listen("tcp", rootIP+":0")
		if err != nil {
			t.Fatal(err)
		}
		s := &http.Server{Handler: f}
		go s.Serve(ln)
		t.Cleanup(func() { s.Close() })
		return f, "http://" + ln.Addr().String()
	}
	// setup gives a case its folder (the host's disk) and config.
	setup := func(name, modelURL string) string {
		host.dir = mkdir(t, root, name)
		cfg := filepath.Join(host.dir, "eval.yaml")
		body := mcqConfig(t, modelURL, filepath.Join(host.dir, "store"), "generate", "  flavor: vllm\n  concurrency: 2\n")
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	waitItems := func(f *fakeModel, n int) {
		deadline := time.Now().Add(5 * time.Minute)
		for len(f.itemCalls()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("the model saw %d item requests in 5 minutes, waiting for %d", len(f.itemCalls()), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// dial reaches a server started with --ip hostIP from the test.
	dial := func() client.Client {
		var c client.Client
		var err error
		for i := 0; i < 120; i++ {
			if c, err = client.Dial(client.Options{HostPort: hostIP + ":7233", Namespace: "default", Logger: runnertest.QuietLogger()}); err == nil {
				return c
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Fatalf("no Temporal server at %s:7233: %v", hostIP, err)
		return nil
	}
	stored := func(run string) runfiles.Result {
		st, err := store.Open(context.Background(), filepath.Join(host.dir, "store"))
		if err != nil {
			t.Fatal(err)
		}
		return readStoredResult(t, st, run)
	}
	devArgs := func(extra ...string) []string {
		return append([]string{bin, "dev", "--ip", hostIP, "--port", "7233", "--ui-port", "-1", "--dir", filepath.Join(host.dir, "state")}, extra...)
	}
	remote := []string{"TEMPORAL_ADDRESS=" + hostIP + ":7233"}

	// The clean run, on `dev` with its worker: the reference scores and
	// the heartbeat cost (every running activity heartbeats once a second,
	// so its calls are its seconds of running).
	fclean, url := model()
	cfg := setup("clean", url)
	host.start(t, "dev", nil, devArgs()...)
	c := dial()
	began := time.Now()
	host.start(t, "run", remote, bin, "run", "--config", cfg, "--run-id", "rec")
	awaitRun(t, c, "evalrun-rec", 10*time.Minute)
	took := time.Since(began)
	want := stored("rec")
	nActs, activitySecs, beats := activityTime(t, c, "evalrun-rec")
	c.Close()
	host.kill()
	items := len(fclean.itemCalls())
	t.Logf("clean run: %d items in %s; %d activities (the child workflows' included) ran %.1f s in all: %d heartbeat calls, %.2f per item (plus a checkpoint write per 4 items)",
		items, took.Round(time.Millisecond), nActs, activitySecs, beats, float64(beats)/float64(items))

	type row struct {
		name                            string
		gone, first, firstRepeat, total time.Duration
		repeats                         int
	}
	var rows []row
	measure := func(name string, f *fakeModel, kill, restart, done time.Time, run string) {
		first, firstRepeat, repeats := recoveryFigures(f.itemCalls(), kill, restart)
		rows = append(rows, row{name, restart.Sub(kill), first, firstRepeat, done.Sub(restart), repeats})
		sameScores(t, name, stored(run), want)
	}

	// 1. `glossobench run` alone (embedded server and worker in the
	// process), SIGKILLed and started again with its run id.
	f, url := model()
	cfg = setup("run", url)
	runArgs := []string{bin, "run", "--config", cfg, "--run-id", "rec"}
	pid := host.start(t, "run", nil, runArgs...)
	waitItems(f, killAt)
	kill := time.Now()
	host.killPID(t, pid)
	host.kill()
	restart := time.Now()
	host.start(t, "run", nil, runArgs...)
	waitExit(t, host, "run", 10*time.Minute)
	measure("`run` SIGKILL, `run --run-id` again", f, kill, restart, time.Now(), "rec")

	// 2. A worker under `dev --no-worker`, SIGKILLed and started again.
	f, url = model()
	cfg = setup("worker", url)
	host.start(t, "dev", nil, devArgs("--no-worker")...)
	c = dial()
	pid = host.start(t, "worker", remote, bin, "worker")
	host.start(t, "run", remote, bin, "run", "--config", cfg, "--run-id", "rec")
	waitItems(f, killAt)
	kill = time.Now()
	host.killPID(t, pid)
	restart = time.Now()
	host.start(t, "worker", remote, bin, "worker")
	awaitRun(t, c, "evalrun-rec", 10*time.Minute)
	measure("worker SIGKILL, started again", f, kill, restart, time.Now(), "rec")
	c.Close()
	host.kill()

	// 3. `glossobench dev` (server and worker) SIGKILLed under a running
	// `run` and started again on its folder.
	f, url = model()
	cfg = setup("dev", url)
	pid = host.start(t, "dev", nil, devArgs()...)
	c = dial()
	host.start(t, "run", remote, bin, "run", "--config", cfg, "--run-id", "rec")
	waitItems(f, killAt)
	kill = time.Now()
	host.killPID(t, pid)
	restart = time.Now()
	host.start(t, "dev", nil, devArgs()...)
	awaitRun(t, c, "evalrun-rec", 10*time.Minute)
	measure("`dev` SIGKILL, started again", f, kill, restart, time.Now(), "rec")
	c.Close()
	host.kill()

	var b strings.Builder
	fmt.Fprintf(&b, "recovery on the shipped defaults, killed after %d item requests (%d items):\n", killAt, items)
	fmt.Fprintf(&b, "  %-38s | %-12s | %-28s | %-27s | %-14s | %s\n", "crash", "killed, gone", "restart to first item asked", "kill to first item re-asked", "items re-asked", "restart to done")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-38s | %-12s | %-28s | %-27s | %-14d | %s\n", r.name, dur(r.gone), dur(r.first), dur(r.firstRepeat), r.repeats, dur(r.total))
	}
	t.Log(b.String())
}

// activityTime adds up how long the activities of a workflow and its
// children ran (each last attempt, from its start to its completion) and
// the heartbeats that took: one per whole second of each (HeartbeatEvery).
func activityTime(t *testing.T, c client.Client, wfID string) (n int, secs float64, beats int) {
	started := map[int64]time.Time{}
	eachEvent(t, c, wfID, "", func(ev *historypb.HistoryEvent) {
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			started[a.GetScheduledEventId()] = ev.GetEventTime().AsTime()
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			d := ev.GetEventTime().AsTime().Sub(started[a.GetScheduledEventId()])
			n, secs, beats = n+1, secs+d.Seconds(), beats+int(d/activities.HeartbeatEvery)
		}
	})
	for _, child := range childWorkflows(t, c, wfID) {
		cn, cs, cb := activityTime(t, c, child)
		n, secs, beats = n+cn, secs+cs, beats+cb
	}
	return n, secs, beats
}

// killPID SIGKILLs one process the host started and waits until it is gone
// (its ports closed), as an operator sees it gone before starting it again.
func (h *clusterHost) killPID(t *testing.T, pid int) {
	t.Helper()
	h.mu.Lock()
	var p *hostProc
	for _, x := range h.procs {
		if x.cmd.Process.Pid == pid {
			p = x
		}
	}
	h.mu.Unlock()
	if p == nil {
		t.Fatalf("host %s started no process %d", h.name, pid)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	<-p.done
}

// waitExit waits until the host's process logging to log has exited, and
// fails unless it exited 0.
func waitExit(t *testing.T, h *clusterHost, log string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		h.mu.Lock()
		p := h.procs[len(h.procs)-1]
		h.mu.Unlock()
		select {
		case <-p.done:
			if p.cmd.ProcessState.ExitCode() != 0 {
				t.Fatal(h.exited(log))
			}
			return
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on host %s still running after %s", log, h.name, timeout)
		}
	}
}
