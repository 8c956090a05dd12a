package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/leaderboard"
	"github.com/glossobench/glossobench/infra/runner"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
)

// A LeaderboardRefresh schedule on the embedded server: triggered, it runs the
// model whose pins have no row yet and appends the row; a second refresh with
// unchanged pins runs nothing.
func TestLeaderboardRefreshSchedule(t *testing.T) {
	_, c := startServer(t)
	acts := activities.New(zerolog.Nop())
	defer acts.Close()
	w, err := runner.StartWorkers(c, acts, runner.All)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	storeDir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "run.yaml")
	model := "gguf:" + filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf")
	if err := os.WriteFile(cfgPath, []byte(mcqConfig(t, model, storeDir, "cloze", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	in := activities.RefreshInput{Lang: "ms", StoreURI: storeDir, Runs: []activities.PrepareInput{{ConfigPath: cfgPath}}}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:      "refresh-test",
		Spec:    client.ScheduleSpec{CronExpressions: []string{"0 2 * * *"}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Action: &client.ScheduleWorkflowAction{ID: "leaderboard-refresh", Workflow: workflows.LeaderboardRefreshName,
			TaskQueue: workflows.TaskQueue, Args: []any{in}},
	})
	if err != nil {
		t.Fatal(err)
	}
	desc, err := h.Describe(ctx)
	if err != nil || desc.Schedule.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
		t.Fatalf("schedule: %+v %v", desc, err)
	}
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP}); err != nil {
		t.Fatal(err)
	}
	st, err := store.NewLocal(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	var rows []leaderboard.Row
	for len(rows) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the triggered refresh appended no row")
		}
		time.Sleep(500 * time.Millisecond)
		rows, _ = leaderboard.Read(ctx, st, "ms", 1)
	}
	if rows[0].ModelID != "test-model" || rows[0].Scores["nlu"] == 0 || rows[0].Pins["config_hash"] == "" {
		t.Fatalf("row %+v", rows[0])
	}

	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "refresh-again", TaskQueue: workflows.TaskQueue}, workflows.LeaderboardRefreshName, in)
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.LeaderboardRefreshResult
	if err := we.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Ran) != 0 || len(res.Current) != 1 {
		t.Fatalf("second refresh with unchanged pins: %+v", res)
	}
	if err := h.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}
