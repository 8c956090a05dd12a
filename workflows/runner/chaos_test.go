package runner_test

// Shared parts of the fault-matrix cases (issue 9): each case runs a real
// EvalRun with a fault injected mid-run and compares it with an undisturbed
// run of the same config, on the shipped heartbeat and retry defaults. In
// the CHAOS-ROW lines (see chaosRow) the recovery runs from the moment the
// fault ends (the worker, server or backend is back) to the first model
// request after it, and to the completion of the run.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/workflows"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// mcqItems is how many items mcqConfig's three axes hold (20 + 20 + 12).
const mcqItems = 20 + 20 + 12

// inFlightBound is how many items can be answered but not yet checkpointed at
// any moment under mcqConfig: its 8 shards (3 + 3 + 2 at shard_size 8) can
// all infer at once, now that three axes infer together (GetVersion
// axis-pipeline 2) with up to parallel_shards (4) shards each, and each shard
// holds up to checkpoint_every (4) answers before its checkpoint.
const inFlightBound = 8 * 4

// startRun starts an EvalRun and returns its workflow id.
func startRun(t testing.TB, c client.Client, in workflows.EvalRunInput) string {
	t.Helper()
	id := "evalrun-" + in.RunID
	if _, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue},
		workflows.WorkflowName, in); err != nil {
		t.Fatal(err)
	}
	return id
}

// awaitRun waits for a workflow's result and rides out a Temporal server that
// is away: only a failed workflow or the timeout ends the wait early.
func awaitRun(t testing.TB, c client.Client, wfID string, timeout time.Duration) workflows.EvalRunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		var res workflows.EvalRunResult
		err := c.GetWorkflow(ctx, wfID, "").Get(ctx, &res)
		if err == nil {
			return res
		}
		var wfErr *temporal.WorkflowExecutionError
		if errors.As(err, &wfErr) {
			t.Fatalf("workflow %s failed: %v", wfID, err)
		}
		if ctx.Err() != nil {
			t.Fatalf("workflow %s: no result after %s: %v", wfID, timeout, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// readStoredResult reads a run's result.json from any store.
func readStoredResult(t testing.TB, st store.Store, run string) runfiles.Result {
	t.Helper()
	data, err := st.Get(context.Background(), runfiles.ResultKey(run))
	if err != nil {
		t.Fatal(err)
	}
	var r runfiles.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", runfiles.ResultKey(run), err)
	}
	return r
}

// sameScores fails unless got has want's axes with the same score, n and CI
// and the same ms_public.
func sameScores(t testing.TB, label string, got, want runfiles.Result) {
	t.Helper()
	if len(got.Axes) != len(want.Axes) {
		t.Fatalf("%s: axes %d, undisturbed run has %d", label, len(got.Axes), len(want.Axes))
	}
	for axis, w := range want.Axes {
		g, ok := got.Axes[axis]
		if !ok || g.Score == nil || w.Score == nil || *g.Score != *w.Score || g.N != w.N || g.CI95 == nil || *g.CI95 != *w.CI95 {
			t.Fatalf("%s: axis %s %+v differs from the undisturbed run's %+v", label, axis, g.AxisResult, w.AxisResult)
		}
	}
	if got.Summary.MSPublic == nil || *got.Summary.MSPublic != *want.Summary.MSPublic {
		t.Fatalf("%s: ms_public %v differs from the undisturbed run's %v", label, got.Summary.MSPublic, *want.Summary.MSPublic)
	}
}

// scoredItems is the number of items scored over all axes.
func scoredItems(r runfiles.Result) int {
	n := 0
	for _, ax := range r.Axes {
		n += ax.N
	}
	return n
}

// checkpointReport is what auditCheckpoints found in a run's stored objects.
type checkpointReport struct {
	objects   int // objects under runs/<run>/
	predicted int // distinct items with a prediction
	missing   int // kept items of a shard without a prediction
}

var shardKey = regexp.MustCompile(`^(runs/[^/]+/[^/]+/shards/\d{4})/(items|pred-\d{5})\.jsonl$`)

// auditCheckpoints lists every object a run stored and parses each one whole:
// a JSONL object must end in a newline and every line must be JSON, a JSON
// object must be one value. Per shard, no item may have a prediction in two
// checkpoint objects, every prediction must belong to the shard, and no
// prediction may record an error (a transient failure must be retried, not
// written down as the item's answer). It reports how many kept items have no
// prediction; a run that completed its budget must have none.
func auditCheckpoints(t testing.TB, st store.Store, run string) checkpointReport {
	t.Helper()
	ctx := context.Background()
	keys, err := st.List(ctx, "runs/"+run+"/")
	if err != nil {
		t.Fatal(err)
	}
	var rep checkpointReport
	type shard struct {
		items map[string]bool
		preds map[string]string // item id → the object that holds its prediction
	}
	shards := map[string]*shard{}
	get := func(prefix string) *shard {
		if shards[prefix] == nil {
			shards[prefix] = &shard{items: map[string]bool{}, preds: map[string]string{}}
		}
		return shards[prefix]
	}
	for _, k := range keys {
		rep.objects++
		data, err := st.Get(ctx, k)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		switch {
		case strings.HasSuffix(k, ".jsonl") && len(data) > 0:
			if data[len(data)-1] != '\n' {
				t.Fatalf("%s: %d bytes not ending in a newline: half-written?", k, len(data))
			}
			for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				if !json.Valid(line) {
					t.Fatalf("%s:%d: not JSON: %.80q", k, i+1, line)
				}
			}
		case strings.HasSuffix(k, ".json"):
			if !json.Valid(data) {
				t.Fatalf("%s: not JSON (%d bytes): half-written?", k, len(data))
			}
		}
		m := shardKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		sh := get(m[1])
		if len(data) == 0 {
			// A checkpoint is written only with at least one prediction.
			t.Fatalf("%s: empty: half-written?", k)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if m[2] == "items" {
				var it scorers.Item
				if err := json.Unmarshal(line, &it); err != nil {
					t.Fatalf("%s:%d: %v", k, i+1, err)
				}
				sh.items[it.ID] = true
				continue
			}
			var p scorers.Prediction
			if err := json.Unmarshal(line, &p); err != nil {
				t.Fatalf("%s:%d: %v", k, i+1, err)
			}
			if prev, dup := sh.preds[p.ItemID]; dup {
				t.Fatalf("%s:%d: item %s already has a prediction in %s", k, i+1, p.ItemID, prev)
			}
			if p.Error != "" {
				t.Fatalf("%s:%d: item %s recorded as failed: %s", k, i+1, p.ItemID, p.Error)
			}
			sh.preds[p.ItemID] = k
		}
	}
	if len(shards) == 0 {
		t.Fatalf("run %s stored no shard objects (%d objects in all)", run, rep.objects)
	}
	for prefix, sh := range shards {
		for id, k := range sh.preds {
			if !sh.items[id] {
				t.Fatalf("%s: prediction for %s, which is not an item of %s", k, id, prefix)
			}
		}
		rep.predicted += len(sh.preds)
		rep.missing += len(sh.items) - len(sh.preds)
	}
	return rep
}

// unscoredInNotes adds up the "N of M kept items not scored" and "N items not
// scored" counts of the run notes, per axis.
func unscoredInNotes(t testing.TB, notes []string) map[string]int {
	t.Helper()
	re := regexp.MustCompile(`^axis (\S+) .*?(\d+)(?: of \d+ kept)? items not scored`)
	out := map[string]int{}
	for _, n := range notes {
		m := re.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		k, err := strconv.Atoi(m[2])
		if err != nil {
			t.Fatal(err)
		}
		out[m[1]] += k
	}
	return out
}

// axisNames lists a result's axes in order, for messages.
func axisNames(r runfiles.Result) string {
	var names []string
	for a, ax := range r.Axes {
		names = append(names, fmt.Sprintf("%s n=%d", a, ax.N))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
