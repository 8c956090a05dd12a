package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// tinyConfig is a one-axis config on the tiny GGUF model writing to store.
func tinyConfig(t *testing.T, store string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.yaml")
	yaml := fmt.Sprintf(`model:
  spec: gguf:%s/testdata/models/tiny-llama/tiny-llama.gguf
  id: tiny
store:
  uri: %s
run:
  shard_size: 8
  bootstrap_resamples: 100
axes:
  knowledge:
    scoring_mode: cloze
    datasets:
      - {name: global_mmlu_ms, path: %s/testdata/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, lang: ms, limit: 8}
`, root, store, root)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeRefresh(t *testing.T, in activities.RefreshInput) string {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "REFRESH.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Operators manage refreshes with glossobench alone, on the embedded server:
// two schedules side by side (one per language), trigger --wait, then
// leaderboard show has the new row; pause, unpause and describe say so.
func TestScheduleTriggerThenLeaderboardShow(t *testing.T) {
	dir := t.TempDir()
	srv, c := runnertest.StartServer(t)
	acts := activities.New(zerolog.Nop())
	w, err := runner.StartWorkers(c, acts, runner.All)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); acts.Close() })
	t.Setenv("TEMPORAL_ADDRESS", srv.Address)
	t.Setenv("TEMPORAL_NAMESPACE", srv.Namespace)

	runs, board := t.TempDir(), t.TempDir()
	cfg := tinyConfig(t, runs)
	run := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := scheduleMain(args, &out, &errb); code != want {
			t.Fatalf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, want, out.String(), errb.String())
		}
		return out.String()
	}
	ms := writeRefresh(t, activities.RefreshInput{Lang: "ms", StoreURI: board, Runs: []activities.PrepareInput{
		{ConfigPath: cfg}, {ConfigPath: filepath.Join(dir, "missing.yaml"), ModelID: "ghost"},
	}})
	id := writeRefresh(t, activities.RefreshInput{Lang: "id", StoreURI: board, Runs: []activities.PrepareInput{{ConfigPath: cfg}}})
	run(0, "create", "--id", "lb-ms", "--input", ms)
	run(0, "create", "--id", "lb-id", "--input", id, "--paused")
	// The server lists schedules from its visibility store, which lags.
	for start := time.Now(); ; time.Sleep(500 * time.Millisecond) {
		out := run(0, "list")
		if strings.Contains(out, "lb-ms\tLeaderboardRefresh\tactive") && strings.Contains(out, "lb-id\tLeaderboardRefresh\tpaused") {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("list:\n%s", out)
		}
	}

	// One model fails (its config is missing): the command says so and
	// exits 1, and the other model's row is on the leaderboard.
	out := run(1, "trigger", "--id", "lb-ms", "--wait")
	if !strings.Contains(out, "ran 1") || !strings.Contains(out, "failed ghost") || !strings.Contains(out, "missing.yaml") {
		t.Fatalf("trigger --wait:\n%s", out)
	}
	show := func(lang string) string {
		var o, e bytes.Buffer
		if code := leaderboardMain([]string{"show", "--store", board, "--lang", lang}, &o, &e); code != 0 {
			t.Fatalf("leaderboard show: %d %s", code, e.String())
		}
		return o.String()
	}
	if out := show("ms"); !strings.Contains(out, "tiny") || !strings.Contains(out, "(1 rows)") {
		t.Fatalf("leaderboard show after the trigger:\n%s", out)
	}
	if out := show("id"); !strings.Contains(out, "no rows") {
		t.Fatalf("the paused schedule's board:\n%s", out)
	}
	// The store's leaderboard.jsonl is the export.
	var exp, e bytes.Buffer
	if code := leaderboardMain([]string{"export", "--store", board, "--lang", "ms"}, &exp, &e); code != 0 {
		t.Fatal(e.String())
	}
	if f, err := os.ReadFile(filepath.Join(board, "leaderboard/ms/v1/leaderboard.jsonl")); err != nil || !bytes.Equal(f, exp.Bytes()) || !bytes.Contains(f, []byte(`"model_id":"tiny"`)) {
		t.Fatalf("leaderboard.jsonl %q (%v), export %q", f, err, exp.String())
	}

	// The second schedule, side by side: unpaused and triggered, it fills
	// its own language's board from the same run (same pins, new board).
	if out := run(0, "describe", "--id", "lb-id"); !strings.Contains(out, "state     paused") || !strings.Contains(out, "lang      id") {
		t.Fatalf("describe paused:\n%s", out)
	}
	run(0, "unpause", "--id", "lb-id", "--note", "go")
	out = run(0, "trigger", "--id", "lb-id", "--wait")
	if !strings.Contains(out, "failed 0") {
		t.Fatalf("trigger lb-id:\n%s", out)
	}
	if out := show("id"); !strings.Contains(out, "tiny") {
		t.Fatalf("leaderboard show --lang id:\n%s", out)
	}
	if out := run(0, "describe", "--id", "lb-ms"); !strings.Contains(out, "state     active") || !strings.Contains(out, "failed ghost") || !strings.Contains(out, "cron      0 2 * * * UTC") {
		t.Fatalf("describe lb-ms:\n%s", out)
	}
	run(0, "pause", "--id", "lb-ms", "--note", "model servers down")
	if out := run(0, "describe", "--id", "lb-ms"); !strings.Contains(out, "paused (model servers down)") {
		t.Fatalf("describe after pause:\n%s", out)
	}
	run(0, "delete", "--id", "lb-ms")
	run(0, "delete", "--id", "lb-id")
}
