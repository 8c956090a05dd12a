package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/infra/results/viewer"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// slowModel answers every log-likelihood request after a pause, so a run
// lasts long enough to be watched.
type slowModel struct{ wait time.Duration }

func (m slowModel) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	time.Sleep(m.wait)
	out := make([]backends.Generation, len(reqs))
	for i, r := range reqs {
		out[i] = backends.Generation{ID: r.ID, Text: "B", FinishReason: "stop"}
	}
	return out, nil
}

func (m slowModel) LogLikelihood(ctx context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	time.Sleep(m.wait)
	backends.ObserveCtx(ctx).Request("slow", "loglikelihood", "ok", m.wait)
	backends.ObserveCtx(ctx).Tokens("slow", 10*len(reqs), 0)
	out := make([]backends.LLResult, len(reqs))
	for i, r := range reqs {
		out[i] = backends.LLResult{ID: r.ID, LogProb: -float64(len(r.ID)%7 + i)}
	}
	return out, nil
}

func (slowModel) Capabilities() backends.Capabilities {
	return backends.Capabilities{LogLikelihood: true}
}
func (slowModel) Close() error { return nil }

// TestViewShowsARunGoingOn: on a real Temporal dev server, an EvalRun that
// is going on appears on the viewer's live page in headless Chromium with
// its axes' stages, items done and a link to the Temporal UI; a later load
// shows more items done; and the axis page shows the checkpointed answers
// (their choices' log-probabilities) before anything is scored.
func TestViewShowsARunGoingOn(t *testing.T) {
	watchLiveRun(t, "live-view", func(srv *devserver.Server, c client.Client, in workflows.EvalRunInput) {
		_, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: "evalrun-" + in.RunID, TaskQueue: workflows.TaskQueue},
			workflows.WorkflowName, in)
		if err != nil {
			t.Fatal(err)
		}
	})
}

// TestViewShowsARunStartedFromTheTemporalCLI is the same watch on a run
// started the way operators start one (README.md): `temporal workflow start
// --type EvalRun` with the config's path in the JSON input, nothing of this
// process between the CLI and the workers but the server.
func TestViewShowsARunStartedFromTheTemporalCLI(t *testing.T) {
	watchLiveRun(t, "live-cli", func(srv *devserver.Server, _ client.Client, in workflows.EvalRunInput) {
		temporal := runnertest.TemporalCLI(t, srv)
		path := filepath.Join(t.TempDir(), "run.yaml")
		if err := os.WriteFile(path, []byte(in.Config), 0o644); err != nil {
			t.Fatal(err)
		}
		runnertest.StartWithCLI(temporal, workflows.EvalRunInput{ConfigPath: path, RunID: in.RunID})
	})
}

// watchLiveRun starts workers whose model answers slowly, has start begin
// an EvalRun (workflow id "evalrun-"+runID) of 100 knowledge items, and
// watches it in headless Chromium: the run is on /live with its stage, items
// answered, a link to the Temporal UI and a self-refresh; a later load
// shows more answered; the axis page shows the checkpointed answers before
// anything is scored.
func watchLiveRun(t *testing.T, runID string, start func(*devserver.Server, client.Client, workflows.EvalRunInput)) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Temporal server and a run")
	}
	srv, c := runnertest.StartServer(t)
	acts := activities.New(zerolog.Nop())
	acts.OpenBackend = func(string, registry.Options) (backends.Backend, error) {
		return slowModel{wait: 150 * time.Millisecond}, nil
	}
	w, err := runner.StartWorkers(c, acts, runner.All)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); acts.Close() })

	root, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	cfg := fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: slow-model, concurrency: 1}
store: {uri: %s}
run: {shard_size: 100, checkpoint_every: 2, bootstrap_resamples: 100}
axes:
  knowledge:
    scoring_mode: cloze
    datasets:
      - {name: global_mmlu_ms, path: %s/testdata/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, lang: ms, limit: 100}
`, dir, root)
	wfID := "evalrun-" + runID
	start(srv, c, workflows.EvalRunInput{Config: cfg, RunID: runID})
	t.Cleanup(func() { c.TerminateWorkflow(context.Background(), wfID, "", "test over") })

	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	live := &temporalLive{c: c, addr: srv.Address, ns: srv.Namespace, ui: "http://127.0.0.1:8233"}
	web := httptest.NewServer(viewer.New(st).WithLive(live))
	defer web.Close()

	// answered/total of the knowledge axis on the live page, as Chromium
	// shows it: its one shard's checkpoints land two items at a time.
	axisRE := regexp.MustCompile(`data-axis="knowledge" data-answered="(\d+)" data-done="\d+" data-total="(\d+)"><td><a href="/run/` + runID + `/axis/knowledge/">knowledge</a></td><td>(\w+)</td>`)
	look := func() (done, total int, stage, doc string) {
		doc = dumpDOM(t, web.URL+"/live")
		m := axisRE.FindStringSubmatch(doc)
		if m == nil {
			return -1, 0, "", doc
		}
		done, _ = strconv.Atoi(m[1])
		total, _ = strconv.Atoi(m[2])
		return done, total, m[3], doc
	}
	var first int
	var doc string
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var stage string
		var total int
		first, total, stage, doc = look()
		if first > 0 && first < total && stage == workflows.StageInference {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never showed as going on with items done (last %d of %d, stage %q):\n%.3000s", first, total, stage, doc)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !strings.Contains(doc, `href="http://127.0.0.1:8233/namespaces/`+srv.Namespace+`/workflows/`+wfID+`"`) {
		t.Errorf("no link to the run in the Temporal UI:\n%.3000s", doc)
	}
	if !strings.Contains(doc, `http-equiv="refresh"`) {
		t.Error("the live page does not refresh itself")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		if later, _, _, _ := look(); later > first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("items done stayed at %d", first)
		}
	}
	// The checkpointed answers are on the axis page before the axis is scored.
	axis := dumpDOM(t, web.URL+"/run/"+runID+"/axis/knowledge/")
	answered := strings.Count(axis, `class="meta usage"`)
	if answered == 0 || !strings.Contains(axis, `<td class="num">-`) {
		t.Errorf("the axis page shows no checkpointed answer (%d with a cost):\n%.3000s", answered, axis)
	}
}

// dumpDOM loads url in headless Chromium and returns the DOM it built, as
// the viewer's own tests do (infra/results/internal/pagetest, which this
// package cannot import); without Chromium the test is skipped.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("no /usr/bin/chromium (apt-get install -y chromium)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}
