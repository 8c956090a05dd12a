package runner_test

// A cluster of hosts, faults included (issue 28 item 7): the deployment
// docs/OPERATOR.md describes, each host a network namespace of its own with
// its own address and local folder, joined by a bridge in the root
// namespace (the test process is the operator's machine on that bridge).
// Two EvalRuns run while one inference host is killed and another is cut
// off the network for 30 s; both finish with a clean run's results.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runner/runnertest"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
)

// The cluster's network: the bridge in the root namespace is .1, each host
// one address. Interface names stay within Linux's 15 characters.
const (
	clusterBridge  = "gbc-br0"
	clusterSubnet  = "10.77.0.0/24"
	clusterRootIP  = "10.77.0.1"
	clusterBucket  = "glossobench-cluster"
	clusterS3Key   = "glossobench-cluster"
	clusterS3Sec   = "glossobench-cluster-secret"
	clusterCut     = 30 * time.Second
	clusterCkpt    = 2 // run.checkpoint_every of the cluster configs
	clusterTimeout = 4 * time.Minute
)

// clusterHost is one machine: a network namespace, an address on the
// bridge and a local folder standing in for its disk.
type clusterHost struct {
	name, ip, dir string
	prefix        string // of its namespace and veth: "gbc" for the cluster, "gbr" for TestRecoveryByHand
	mu            sync.Mutex
	procs         []*hostProc
}

type hostProc struct {
	log  string
	cmd  *exec.Cmd
	done chan struct{}
}

func (h *clusterHost) ns() string   { return h.prefix + "-" + h.name }
func (h *clusterHost) veth() string { return h.prefix + "v-" + h.name }

// clusterHosts are the hosts in the order they are started.
func clusterHosts(root string) []*clusterHost {
	var hs []*clusterHost
	for _, x := range []struct{ name, ip string }{
		{"temporal", "10.77.0.2"}, {"s3", "10.77.0.3"}, {"model", "10.77.0.4"},
		{"cpu", "10.77.0.11"}, {"inf1", "10.77.0.21"}, {"inf2", "10.77.0.22"},
	} {
		hs = append(hs, &clusterHost{name: x.name, ip: x.ip, dir: filepath.Join(root, x.name), prefix: "gbc"})
	}
	return hs
}

// ipCmd runs ip(8) and fails the test with its output on error.
func ipCmd(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// clusterTeardown kills whatever runs in the hosts' namespaces (a test
// killed half-way leaves its processes there) and deletes them and the bridge.
func clusterTeardown(bridge string, hosts []*clusterHost) {
	for _, h := range hosts {
		killNamespace(h.ns())
		// The veth pair goes now, not when the kernel finally frees the
		// namespace (a socket still retransmitting holds it for minutes).
		exec.Command("ip", "link", "del", h.veth()).Run()
		exec.Command("ip", "netns", "del", h.ns()).Run()
	}
	exec.Command("ip", "link", "del", bridge).Run()
}

// killNamespace SIGKILLs every process in a namespace, as losing the
// machine would.
func killNamespace(ns string) int {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	n := 0
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

// clusterNetwork makes the bridge, with rootIP/24 for the test process, and
// one namespace per host, each with a veth pair: eth0 inside, gbcv-NAME on
// the bridge.
func clusterNetwork(t *testing.T, bridge, rootIP string, hosts []*clusterHost) {
	t.Helper()
	ipCmd(t, "link", "add", bridge, "type", "bridge")
	ipCmd(t, "addr", "add", rootIP+"/24", "dev", bridge)
	ipCmd(t, "link", "set", bridge, "up")
	for _, h := range hosts {
		ipCmd(t, "netns", "add", h.ns())
		ipCmd(t, "link", "add", h.veth(), "type", "veth", "peer", "name", "eth0", "netns", h.ns())
		ipCmd(t, "link", "set", h.veth(), "master", bridge, "up")
		ipCmd(t, "-n", h.ns(), "addr", "add", h.ip+"/24", "dev", "eth0")
		ipCmd(t, "-n", h.ns(), "link", "set", "eth0", "up")
		ipCmd(t, "-n", h.ns(), "link", "set", "lo", "up")
		if err := os.MkdirAll(h.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// start runs a program on the host: inside its namespace, in its folder,
// with HOME and TMPDIR there too, logging to DIR/LOG.log. It returns the
// process id, which is also the Temporal worker identity's prefix.
func (h *clusterHost) start(t *testing.T, log string, env []string, args ...string) int {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", h.ns()}, args...)...)
	cmd.Dir = h.dir
	for _, d := range []string{"home", "tmp"} {
		if err := os.MkdirAll(filepath.Join(h.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(h.dir, "home"), "TMPDIR=" + filepath.Join(h.dir, "tmp")}, env...)
	f, err := os.OpenFile(filepath.Join(h.dir, log+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &hostProc{log: log, cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	h.mu.Lock()
	h.procs = append(h.procs, p)
	h.mu.Unlock()
	// ip netns exec execs the program in place: its pid is the program's.
	return cmd.Process.Pid
}

// kill SIGKILLs every process of the host and waits for those it started.
func (h *clusterHost) kill() int {
	n := killNamespace(h.ns())
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.procs {
		p.cmd.Process.Kill()
		<-p.done
	}
	h.procs = nil
	return n
}

// exited reports a process of the host that has ended, with its log's tail.
func (h *clusterHost) exited(log string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.procs {
		if p.log != log {
			continue
		}
		select {
		case <-p.done:
			data, _ := os.ReadFile(filepath.Join(h.dir, log+".log"))
			if len(data) > 3000 {
				data = data[len(data)-3000:]
			}
			return fmt.Sprintf("%s on host %s exited (%v); its log ends:\n%s", p.cmd.Args[3], h.name, p.cmd.ProcessState, data)
		default:
		}
	}
	return ""
}

// waitTCP waits until addr accepts connections from the root namespace.
func waitTCP(t *testing.T, h *clusterHost, log, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		if msg := h.exited(log); msg != "" {
			t.Fatal(msg)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on host %s: nothing answers at %s after %s", log, h.name, addr, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clusterReady says why this machine cannot run the cluster test (skip):
// it is not root, or the servers' binaries are not named (.ci/run names
// them). Once both hold (CI), whatever else is missing is an error, which
// fails the test instead of skipping it.
func clusterReady() (skip string, err error) {
	if os.Geteuid() != 0 {
		return "network namespaces need root", nil
	}
	vars := []string{"GLOSSOBENCH_LLAMA_SERVER_BIN", "GLOSSOBENCH_VERSITYGW_BIN"}
	for _, v := range vars {
		if os.Getenv(v) == "" {
			return v + " unset (.ci/run sets it)", nil
		}
	}
	for _, v := range vars {
		if _, err := os.Stat(os.Getenv(v)); err != nil {
			return "", fmt.Errorf("%s: %w", v, err)
		}
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "", errors.New("ip (iproute2) not found")
	}
	if out, err := exec.Command("ip", "netns", "add", "gbc-probe").CombinedOutput(); err != nil {
		return "", fmt.Errorf("ip netns add: %v: %s", err, bytes.TrimSpace(out))
	}
	exec.Command("ip", "netns", "del", "gbc-probe").Run()
	return "", nil
}

// As root with both binaries named, a binary that is not there fails the
// cluster test: CI must not pass it by skipping.
func TestClusterReadyFailsLoudly(t *testing.T) {
	t.Setenv("GLOSSOBENCH_VERSITYGW_BIN", os.Args[0])
	t.Setenv("GLOSSOBENCH_LLAMA_SERVER_BIN", filepath.Join(t.TempDir(), "llama-server"))
	skip, err := clusterReady()
	if os.Geteuid() != 0 {
		if skip == "" || err != nil {
			t.Errorf("not root: skip %q, error %v; want a reason to skip", skip, err)
		}
		return
	}
	if skip != "" || err == nil || !strings.Contains(err.Error(), "GLOSSOBENCH_LLAMA_SERVER_BIN") {
		t.Errorf("root, llama-server missing: skip %q, error %v; want an error naming GLOSSOBENCH_LLAMA_SERVER_BIN", skip, err)
	}
	t.Setenv("GLOSSOBENCH_LLAMA_SERVER_BIN", "")
	if skip, err := clusterReady(); skip == "" || err != nil {
		t.Errorf("root, GLOSSOBENCH_LLAMA_SERVER_BIN unset: skip %q, error %v; want a reason to skip", skip, err)
	}
}

// clusterLock holds the machine's cluster network (bridge, subnet,
// namespaces) for one test process at a time: a second run waits for the
// first, and a killed run's lock goes with its process.
func clusterLock(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile("/run/glossobench-cluster.lock", os.O_CREATE|os.O_RDWR, 0o600) // root only, as the test
	if err != nil {
		t.Fatal(err)
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		t.Log("another process runs the cluster test on this machine; waiting for it")
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { f.Close() })
}

// The model host's request log: the test's latency proxy in front of
// llama-server. It stands in for a model slower than the tiny one (which
// answers in milliseconds), so that faults land while work is in flight,
// and writes one line per request: time, listener, client address, path and,
// for a request that carries an item's context, the context's SHA-256.
const (
	proxyEnv      = "GLOSSOBENCH_CLUSTER_PROXY" // "SLOW_ADDR PLAIN_ADDR CONTROL_ADDR UPSTREAM LOG"
	proxyPortSlow = "8080"                      // the model URL of the faulted runs
	proxyPortFast = "8081"                      // the model URL of the clean runs
	proxyPortCtl  = "8089"                      // POST /delay?ms=N
	llamaPort     = "8090"                      // llama-server itself
)

// TestClusterHelperModelProxy is the latency proxy's process; it does
// nothing unless GLOSSOBENCH_CLUSTER_PROXY is set.
func TestClusterHelperModelProxy(t *testing.T) {
	spec := os.Getenv(proxyEnv)
	if spec == "" {
		t.Skip("the model host's proxy process of TestClusterOfHosts")
	}
	f := strings.Fields(spec)
	if len(f) != 5 {
		t.Fatalf("%s: want 5 fields, got %q", proxyEnv, spec)
	}
	up, err := url.Parse(f[3])
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.OpenFile(f[4], os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var delayMS atomic.Int64
	var mu sync.Mutex
	rp := httputil.NewSingleHostReverseProxy(up)
	serve := func(addr, name string, slow bool) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			// An item's context: what llama-server's log-likelihood route
			// tokenizes without pieces, or a generation's prompt.
			key := "-"
			var rb struct {
				Content    string `json:"content"`
				WithPieces bool   `json:"with_pieces"`
				Prompt     string `json:"prompt"`
			}
			if json.Unmarshal(body, &rb) == nil {
				switch {
				case r.URL.Path == "/tokenize" && !rb.WithPieces:
					key = rb.Content
				case r.URL.Path == "/v1/completions":
					key = rb.Prompt
				}
				if key != "-" {
					s := sha256.Sum256([]byte(key))
					key = hex.EncodeToString(s[:8])
				}
			}
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			mu.Lock()
			fmt.Fprintf(logf, "%d %s %s %s %s\n", time.Now().UnixNano(), name, host, r.URL.Path, key)
			mu.Unlock()
			if d := delayMS.Load(); slow && d > 0 && (r.URL.Path == "/completion" || r.URL.Path == "/v1/completions") {
				select {
				case <-time.After(time.Duration(d) * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
			rp.ServeHTTP(w, r)
		})
		go func() { t.Error(http.ListenAndServe(addr, h)) }()
	}
	serve(f[0], "slow", true)
	serve(f[1], "fast", false)
	ctl := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		delayMS.Store(int64(ms))
	})
	t.Error(http.ListenAndServe(f[2], ctl))
}

// proxyLine is one line of the proxy's log.
type proxyLine struct {
	at                          time.Time
	listener, client, path, ctx string
}

func readProxyLog(t *testing.T, path string) []proxyLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []proxyLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		x := strings.Fields(sc.Text())
		if len(x) != 5 {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		ns, err := strconv.ParseInt(x[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, proxyLine{time.Unix(0, ns), x[1], x[2], x[3], x[4]})
	}
	return out
}

// repeatedItems counts the items the faulted runs asked the model for more
// than once. An item's context is sent a fixed number of times in one
// attempt (llama-server's log-likelihood route tokenizes it once per
// choice); the clean runs (the same items, undisturbed) give that count,
// and anything beyond it is a repeat of the item.
func repeatedItems(lines []proxyLine) (items, repeats int) {
	clean, faulted := map[string]int{}, map[string]int{}
	for _, l := range lines {
		if l.ctx == "-" {
			continue
		}
		if l.listener == "fast" {
			clean[l.ctx]++
		} else {
			faulted[l.ctx]++
		}
	}
	for k, n := range faulted {
		items++
		if c := clean[k]; c > 0 && n > c {
			repeats += (n - c + c - 1) / c
		}
	}
	return items, repeats
}

// pendingInfer is one Infer activity as Temporal describes it.
type pendingInfer struct {
	key      string // workflow id / run id / activity id
	attempt  int32
	started  bool
	identity string
	startAt  time.Time
}

// pendingInfers lists every pending Infer activity of the open workflows.
func pendingInfers(ctx context.Context, c client.Client) ([]pendingInfer, error) {
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "ExecutionStatus = 'Running'"})
	if err != nil {
		return nil, err
	}
	var out []pendingInfer
	for _, ex := range resp.GetExecutions() {
		d, err := c.DescribeWorkflowExecution(ctx, ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId())
		if err != nil {
			continue // finished between the list and the describe
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetActivityType().GetName() != "Infer" {
				continue
			}
			out = append(out, pendingInfer{
				key:      ex.GetExecution().GetWorkflowId() + "/" + ex.GetExecution().GetRunId() + "/" + a.GetActivityId(),
				attempt:  a.GetAttempt(),
				started:  a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED,
				identity: a.GetLastWorkerIdentity(),
				startAt:  a.GetLastStartedTime().AsTime(),
			})
		}
	}
	return out, nil
}

// heldBy is the started Infer activities whose worker identity is pid's
// (the Go SDK's default identity is "PID@HOSTNAME@").
func heldBy(ps []pendingInfer, pid int) []pendingInfer {
	var out []pendingInfer
	for _, p := range ps {
		if p.started && strings.HasPrefix(p.identity, strconv.Itoa(pid)+"@") {
			out = append(out, p)
		}
	}
	return out
}

// waitHolding waits until the worker pid holds at least one started Infer
// activity and returns them.
func waitHolding(t *testing.T, c client.Client, host string, pid int, timeout time.Duration) []pendingInfer {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ps, err := pendingInfers(context.Background(), c)
		if err == nil {
			if held := heldBy(ps, pid); len(held) > 0 {
				return held
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("host %s (pid %d) held no Infer activity within %s (last error %v)", host, pid, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitRetried waits until every held activity runs again as a new attempt
// (or is done) and returns the time from the fault to the first and to the
// last of them; the new attempt's start time is the server's.
func waitRetried(t *testing.T, c client.Client, host string, held []pendingInfer, fault time.Time, timeout time.Duration) (first, last time.Duration) {
	t.Helper()
	left := map[string]pendingInfer{}
	for _, h := range held {
		left[h.key] = h
	}
	first = -1
	note := func(d time.Duration) {
		if first < 0 || d < first {
			first = d
		}
		last = max(last, d)
	}
	deadline := fault.Add(timeout)
	for len(left) > 0 {
		ps, err := pendingInfers(context.Background(), c)
		if err == nil {
			now := map[string]pendingInfer{}
			for _, p := range ps {
				now[p.key] = p
			}
			for k, h := range left {
				p, ok := now[k]
				switch {
				case !ok:
					note(time.Since(fault)) // done between two looks
					delete(left, k)
				case p.attempt > h.attempt && p.started:
					note(p.startAt.Sub(fault))
					delete(left, k)
				}
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d Infer activities host %s held were not retried within %s of the fault", len(left), len(held), host, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return first, last
}

// pollerSeen waits until a worker of pid polls the queue after since and
// returns when it did.
func pollerSeen(c client.Client, queue string, pid int, since time.Time, timeout time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := c.DescribeTaskQueue(context.Background(), queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err == nil {
			for _, p := range resp.GetPollers() {
				if at := p.GetLastAccessTime().AsTime(); strings.HasPrefix(p.GetIdentity(), strconv.Itoa(pid)+"@") && at.After(since) {
					return at, true
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Time{}, false
}

// clusterConfig is a small config on the repository's test data against the
// model at modelURL and the cluster's S3 store (rows that fit the tiny
// model's 512-token window: belebele's passages do not). The two runs read
// disjoint rows, so an answer that crossed runs would change a result, and each
// item's context belongs to one run. Heartbeat and retry settings are the
// shipped defaults.
func clusterConfig(t *testing.T, which, modelURL, storeURI string) string {
	data := filepath.Join(repoRoot(t), "testdata", "data")
	axes := map[string]string{
		"ms": `  knowledge:
    datasets:
      - {name: global_mmlu_ms_ca, path: ` + data + `/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, lang: ms, limit: 16, filter: {cultural_sensitivity_label: CA}}
  nlu:
    datasets:
      - {name: indonli, path: ` + data + `/nli_indonli/id_indonli_lay_1000sample.jsonl, format: indonli, lang: id, limit: 16}
`,
		"xl": `  cultural:
    datasets:
      - {name: global_mmlu_ms_cs, path: ` + data + `/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, lang: ms, limit: 32, filter: {cultural_sensitivity_label: CS}}
`,
	}[which]
	return fmt.Sprintf(`model:
  spec: %s
  id: tiny-llama-%s
  flavor: llama-server
  concurrency: 1
store:
  uri: %s
run:
  shard_size: 4
  checkpoint_every: %d
  bootstrap_resamples: 200
axes:
%s`, modelURL, which, storeURI, clusterCkpt, axes)
}

// TestClusterOfHosts starts the deployment docs/OPERATOR.md describes, one
// network namespace per host: a Temporal server (`glossobench dev
// --no-worker`), S3 (versitygw), a model server (llama-server on the tiny
// model), a CPU worker and two inference workers. It runs two EvalRuns
// undisturbed, then the same two again while inference host inf1 is killed
// (every process SIGKILLed; a replacement host with an empty disk joins
// after) and host inf2 is cut off the network for 30 s. Both faulted runs
// must finish with the undisturbed runs' scores, their S3 checkpoints whole
// and unduplicated, the model asked again for no more items than were in
// flight on the faulted hosts, and every host's time to recover printed.
func TestClusterOfHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("a six-host cluster in network namespaces, four EvalRuns")
	}
	skip, err := clusterReady()
	if err != nil {
		t.Fatalf("root with the servers' binaries named, but: %v", err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	clusterLock(t)
	hosts := clusterHosts(t.TempDir())
	clusterTeardown(clusterBridge, hosts) // what a killed earlier run left
	if out, _ := exec.Command("ip", "route", "show", clusterSubnet).Output(); len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("%s is already routed on this machine (%s); the test needs it for its own bridge", clusterSubnet, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { clusterTeardown(clusterBridge, hosts) })
	clusterNetwork(t, clusterBridge, clusterRootIP, hosts)
	h := map[string]*clusterHost{}
	for _, x := range hosts {
		h[x.name] = x
	}
	bin := buildBinary(t)
	temporalAddr := h["temporal"].ip + ":7233"
	s3Addr := h["s3"].ip + ":7070"
	s3Env := []string{"GLOSSOBENCH_CLUSTER_S3_KEY=" + clusterS3Key, "GLOSSOBENCH_CLUSTER_S3_SECRET=" + clusterS3Sec}
	workerEnv := append([]string{"TEMPORAL_ADDRESS=" + temporalAddr, "TEMPORAL_NAMESPACE=default"}, s3Env...)

	// The Temporal server host: the embedded server only, on its address.
	h["temporal"].start(t, "dev", nil, bin, "dev", "--ip", h["temporal"].ip, "--port", "7233", "--ui-port", "8233",
		"--dir", filepath.Join(h["temporal"].dir, "state"), "--no-worker")
	// The S3 host.
	h["s3"].start(t, "versitygw", []string{"ROOT_ACCESS_KEY=" + clusterS3Key, "ROOT_SECRET_KEY=" + clusterS3Sec},
		os.Getenv("GLOSSOBENCH_VERSITYGW_BIN"), "--port", s3Addr, "--quiet", "posix", mkdir(t, h["s3"].dir, "data"))
	// The model host: llama-server, and the latency proxy in front of it.
	model := h["model"]
	model.start(t, "llama-server", nil, os.Getenv("GLOSSOBENCH_LLAMA_SERVER_BIN"),
		"-m", filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf"),
		"--host", model.ip, "--port", llamaPort, "-t", "1", "-np", "1", "-c", "2048")
	proxyLog := filepath.Join(model.dir, "requests.log")
	model.start(t, "proxy", []string{proxyEnv + "=" + strings.Join([]string{model.ip + ":" + proxyPortSlow, model.ip + ":" + proxyPortFast,
		model.ip + ":" + proxyPortCtl, "http://" + model.ip + ":" + llamaPort, proxyLog}, " ")},
		os.Args[0], "-test.run=^TestClusterHelperModelProxy$", "-test.v")

	waitTCP(t, h["temporal"], "dev", temporalAddr, 90*time.Second)
	waitTCP(t, h["s3"], "versitygw", s3Addr, 30*time.Second)
	waitHTTP(t, model, "llama-server", "http://"+model.ip+":"+llamaPort+"/health", 120*time.Second)
	waitTCP(t, model, "proxy", model.ip+":"+proxyPortCtl, 30*time.Second)

	t.Setenv("GLOSSOBENCH_CLUSTER_S3_KEY", clusterS3Key)
	t.Setenv("GLOSSOBENCH_CLUSTER_S3_SECRET", clusterS3Sec)
	storeURI := fmt.Sprintf("s3://%s/evals?endpoint=http://%s&region=us-east-1&path_style=true&access_key_env=GLOSSOBENCH_CLUSTER_S3_KEY&secret_key_env=GLOSSOBENCH_CLUSTER_S3_SECRET", clusterBucket, s3Addr)
	st, err := store.Open(context.Background(), storeURI)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.(*store.S3).EnsureBucket(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The worker hosts.
	cpuPID := h["cpu"].start(t, "worker", workerEnv, bin, "worker", "--queues", "cpu")
	infPID := map[string]int{}
	for _, n := range []string{"inf1", "inf2"} {
		infPID[n] = h[n].start(t, "worker", workerEnv, bin, "worker", "--queues", "inference")
	}
	c, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: "default", Logger: runnertest.QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, w := range []struct {
		host, queue string
		pid         int
	}{{"cpu", workflows.TaskQueue, cpuPID}, {"inf1", workflows.InferenceTaskQueue, infPID["inf1"]}, {"inf2", workflows.InferenceTaskQueue, infPID["inf2"]}} {
		if _, ok := pollerSeen(c, w.queue, w.pid, time.Time{}, 60*time.Second); !ok {
			t.Fatalf("the worker of host %s (pid %d) never polled %s; %s", w.host, w.pid, w.queue, h[w.host].exited("worker"))
		}
	}

	slowURL := "http://" + model.ip + ":" + proxyPortSlow
	fastURL := "http://" + model.ip + ":" + proxyPortFast
	runs := []string{"ms", "xl"}

	// Undisturbed runs: the reference results.
	began := time.Now()
	for _, r := range runs {
		startRun(t, c, workflows.EvalRunInput{Config: clusterConfig(t, r, fastURL, storeURI), RunID: "clean-" + r})
	}
	want := map[string]runfiles.Result{}
	for _, r := range runs {
		awaitRun(t, c, "evalrun-clean-"+r, clusterTimeout)
		want[r] = readStoredResult(t, st, "clean-"+r)
	}
	t.Logf("undisturbed runs done in %s", time.Since(began).Round(time.Second))

	// The faulted runs, slowed by the proxy until the faults are over.
	setDelay(t, model.ip, 1500)
	began = time.Now()
	for _, r := range runs {
		startRun(t, c, workflows.EvalRunInput{Config: clusterConfig(t, r, slowURL, storeURI), RunID: "fault-" + r})
	}
	var rows []clusterFault

	// Fault 1: host inf1 is lost (every process SIGKILLed).
	held1 := waitHolding(t, c, "inf1", infPID["inf1"], 60*time.Second)
	kill := time.Now()
	n := h["inf1"].kill()
	first, last := waitRetried(t, c, "inf1", held1, kill, 2*time.Minute)
	rows = append(rows, clusterFault{fault: fmt.Sprintf("inf1 SIGKILL (%d process)", n), held: len(held1), first: first, last: last, rejoin: "replaced"})
	// A replacement host with an empty disk takes its place.
	lostPID := infPID["inf1"]
	h["inf1"].dir += "-replacement"
	infPID["inf1"] = h["inf1"].start(t, "worker", workerEnv, bin, "worker", "--queues", "inference")
	if _, ok := pollerSeen(c, workflows.InferenceTaskQueue, infPID["inf1"], time.Time{}, 60*time.Second); !ok {
		t.Fatalf("the replacement inf1 never polled; %s", h["inf1"].exited("worker"))
	}

	// Fault 2: host inf2 is cut off the network for 30 s (its port on the
	// bridge is down: no packet in or out, no reset), then restored.
	held2 := waitHolding(t, c, "inf2", infPID["inf2"], 60*time.Second)
	cut := time.Now()
	ipCmd(t, "link", "set", h["inf2"].veth(), "down")
	first, last = waitRetried(t, c, "inf2", held2, cut, 2*time.Minute)
	time.Sleep(time.Until(cut.Add(clusterCut)))
	ipCmd(t, "link", "set", h["inf2"].veth(), "up")
	restored := time.Now()
	rejoin := "not within 60s"
	if at, ok := pollerSeen(c, workflows.InferenceTaskQueue, infPID["inf2"], restored, 60*time.Second); ok {
		rejoin = at.Sub(restored).Round(100 * time.Millisecond).String()
	}
	rows = append(rows, clusterFault{fault: fmt.Sprintf("inf2 cut off %s", clusterCut), held: len(held2), first: first, last: last, rejoin: rejoin})

	// The faults are over: the model answers at full speed again.
	setDelay(t, model.ip, 0)
	got := map[string]runfiles.Result{}
	for _, r := range runs {
		awaitRun(t, c, "evalrun-fault-"+r, clusterTimeout)
		got[r] = readStoredResult(t, st, "fault-"+r)
	}
	t.Logf("faulted runs done in %s", time.Since(began).Round(time.Second))

	items, repeats := repeatedItems(readProxyLog(t, proxyLog))
	inFlight := (len(held1) + len(held2)) * clusterCkpt
	var b strings.Builder
	fmt.Fprintf(&b, "cluster fault table (shipped heartbeat and retry defaults; recovery = fault to the lost Infer activities running again on another host):\n")
	fmt.Fprintf(&b, "  %-26s | %-12s | %-15s | %-15s | %s\n", "fault", "Infer held", "first retried", "all retried", "host back polling")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-26s | %-12d | %-15s | %-15s | %s\n", r.fault, r.held, r.first.Round(100*time.Millisecond), r.last.Round(100*time.Millisecond), r.rejoin)
	}
	fmt.Fprintf(&b, "  items asked again: %d of %d (at most %d were in flight: %d activities held x checkpoint_every %d)",
		repeats, items, inFlight, len(held1)+len(held2), clusterCkpt)
	t.Log(b.String())

	for _, r := range runs {
		rep := auditCheckpoints(t, st, "fault-"+r)
		if rep.missing != 0 {
			t.Errorf("run fault-%s: %d kept items have no checkpointed prediction", r, rep.missing)
		}
		sameScores(t, "run "+r+" after the faults", got[r], want[r])
	}
	if repeats > inFlight {
		t.Errorf("the model was asked again for %d items; at most %d were in flight on the faulted hosts", repeats, inFlight)
	}
	if rejoin == "not within 60s" {
		t.Errorf("host inf2 did not poll Temporal again within 60 s of its network coming back")
	}
	// Only the worker hosts served (the lost inf1 is listed for a few
	// minutes after its last poll): `dev --no-worker` runs no worker.
	for _, q := range []string{workflows.TaskQueue, workflows.InferenceTaskQueue} {
		for _, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
			resp, err := c.DescribeTaskQueue(context.Background(), q, typ)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range resp.GetPollers() {
				if !workerIdentity(p.GetIdentity(), cpuPID, lostPID, infPID["inf1"], infPID["inf2"]) {
					t.Errorf("task queue %s is polled by %s, not by a worker host", q, p.GetIdentity())
				}
			}
		}
	}
}

// clusterFault is one row of the fault table.
type clusterFault struct {
	fault       string
	held        int
	first, last time.Duration
	rejoin      string
}

func workerIdentity(id string, pids ...int) bool {
	for _, p := range pids {
		if strings.HasPrefix(id, strconv.Itoa(p)+"@") {
			return true
		}
	}
	return false
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	d := filepath.Join(parts...)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// waitHTTP waits until url answers 200 (llama-server answers 503 while it loads).
func waitHTTP(t *testing.T, h *clusterHost, log, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if msg := h.exited(log); msg != "" {
			t.Fatal(msg)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s on host %s: %s not healthy after %s (%v)", log, h.name, url, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// setDelay sets the latency the proxy adds to each /completion of the slow listener.
func setDelay(t *testing.T, ip string, ms int) {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("http://%s:%s/delay?ms=%d", ip, proxyPortCtl, ms), "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("proxy delay: %s", resp.Status)
	}
}
