package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/infra/results/release"
	"github.com/glossobench/glossobench/workflows"
)

// hostileIDs are item ids and names that would escape a folder if anything
// ever used them as a path. An id with a NUL byte is not among them: dataset text is valid or
// refused, and Prepare refuses it naming the file, line and field
// (scorers/mcq TestMalformedTextIsRefused).
var hostileIDs = []string{"../../../../escaped", "/etc/escaped", "a/../../escaped", "..", `..\..\escaped`, "ok"}

// treeOf lists every file under dir, relative and slash-separated.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p == dir && errors.Is(err, fs.ErrNotExist) {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Run ids, dataset names and item ids cannot move a write out of the store
// prefix or the release folder: a hostile run id is refused before anything
// is written (a non-retryable config error naming run_id), and hostile
// dataset names and item ids are carried as data, never as paths.
func TestHostileIDsStayInsideStoreAndRelease(t *testing.T) {
	c := serverWithInstantWorkers(t)

	parent := t.TempDir()
	storeDir := filepath.Join(parent, "store")
	data := filepath.Join(parent, "data.jsonl")
	var rows bytes.Buffer
	for i, id := range hostileIDs {
		row, _ := json.Marshal(map[string]string{"sample_id": id, "subject": "s", "question": fmt.Sprintf("Soalan %d?", i),
			"A": "satu", "B": "dua", "C": "tiga", "D": "empat", "answer": "B"})
		rows.Write(append(row, '\n'))
	}
	if err := os.WriteFile(data, rows.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: "../../model"}
store: {uri: %s}
run: {shard_size: 3, bootstrap_resamples: 50}
axes:
  knowledge:
    scoring_mode: generate
    datasets: [{name: "../../../evil", path: %s, format: global_mmlu}]
`, storeDir, data)

	// Hostile run ids are refused at once, with nothing written.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, id := range []string{"../escaped", "/abs", "a/../../escaped", "nul\x00byte", "..", "a//b", `..\escaped`, "a/b", "x" + strings.Repeat("y", 200)} {
		we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("evalrun-hostile-%d", i), TaskQueue: workflows.TaskQueue},
			workflows.WorkflowName, workflows.EvalRunInput{Config: cfg, RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		err = we.Get(ctx, nil)
		var app *temporal.ApplicationError
		if err == nil || !strings.Contains(err.Error(), "run_id") || !errors.As(err, &app) || !app.NonRetryable() {
			t.Errorf("run id %q: err = %v; want a non-retryable error naming run_id", id, err)
		}
	}
	// A dataset path with a NUL byte is a data error naming the axis, not a
	// panic or a retry loop.
	nulCfg := strings.Replace(cfg, "path: "+data, `path: "`+data+`\0.jsonl"`, 1)
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "evalrun-hostile-nul-path", TaskQueue: workflows.TaskQueue},
		workflows.WorkflowName, workflows.EvalRunInput{Config: nulCfg, RunID: "nul-path"})
	if err != nil {
		t.Fatal(err)
	}
	err = we.Get(ctx, nil)
	var app *temporal.ApplicationError
	if err == nil || !strings.Contains(err.Error(), "axes.knowledge") || !errors.As(err, &app) || !app.NonRetryable() {
		t.Errorf("dataset path with a NUL byte: err = %v; want a non-retryable error naming axes.knowledge", err)
	}
	for _, f := range treeOf(t, storeDir) {
		if !strings.HasPrefix(f, "runs/nul-path/") {
			t.Errorf("refused runs wrote %q", f)
		}
	}

	// Hostile dataset names and item ids: the run completes inside its prefix.
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "hostile"})
	if got := readResult(t, res.Summary.ResultPath).Axes["knowledge"].N; got != len(hostileIDs) {
		t.Fatalf("knowledge n = %d, want %d", got, len(hostileIDs))
	}
	for _, f := range treeOf(t, storeDir) {
		if !strings.HasPrefix(f, "runs/hostile/") {
			t.Errorf("store object %q is outside runs/hostile/", f)
		}
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 2 {
		t.Errorf("the store's parent holds %d entries, want the store and the data file", len(entries))
	}

	// The release bundle holds exactly its two files, the ids as data.
	run, err := release.LoadRun(filepath.Join(storeDir, "runs", "hostile"))
	if err != nil {
		t.Fatal(err)
	}
	outParent := t.TempDir()
	out := filepath.Join(outParent, "bundle")
	if _, err := release.Write(run, out, release.Options{IncludeRaw: true}); err != nil {
		t.Fatal(err)
	}
	if files := treeOf(t, outParent); !slices.Equal(files, []string{"bundle/items.jsonl", "bundle/manifest.json"}) {
		t.Errorf("release wrote %q, want only bundle/items.jsonl and bundle/manifest.json", files)
	}
	_, items, err := release.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, strings.TrimPrefix(it.ItemID, "../../../evil/"))
	}
	slices.Sort(ids)
	want := slices.Clone(hostileIDs)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("bundle item ids %q, want %q", ids, want)
	}
}
