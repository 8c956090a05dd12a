package runner_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/results/elo"
	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/infra/store/storetest"
	"github.com/glossobench/glossobench/workflows"
)

// A LeaderboardRefresh schedule on the embedded server: triggered, it runs the
// model whose pins have no row yet and appends the row; a second refresh with
// unchanged pins runs nothing; a refresh that adds a model recomputes Elo.
func TestLeaderboardRefreshSchedule(t *testing.T) {
	c := serverWithWorkers(t)
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
	if len(res.Ran) != 0 || len(res.Current) != 1 || res.Elo != nil {
		t.Fatalf("second refresh with unchanged pins: %+v", res)
	}

	// A second model joins: the refresh runs it alone, appends its row and
	// recomputes Elo over both models' item-level results.
	fake := httptest.NewServer(&fakeModel{seen: map[string]int{}})
	defer fake.Close()
	fakePath := filepath.Join(t.TempDir(), "fake.yaml")
	if err := os.WriteFile(fakePath, []byte(mcqConfig(t, fake.URL, storeDir, "generate", "  flavor: vllm\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	in.Runs = append(in.Runs, activities.PrepareInput{ConfigPath: fakePath, ModelID: "fake-model"})
	we, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "refresh-two", TaskQueue: workflows.TaskQueue}, workflows.LeaderboardRefreshName, in)
	if err != nil {
		t.Fatal(err)
	}
	res = workflows.LeaderboardRefreshResult{}
	if err := we.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Ran) != 1 || res.Elo == nil || len(res.Elo.Boards) != 1 {
		t.Fatalf("refresh with a new model: %+v", res)
	}
	board := res.Elo.Boards[0]
	if len(board.Ratings) != 2 || board.Ratings["test-model"] == 0 || board.Ratings["fake-model"] == 0 {
		t.Fatalf("Elo board %+v", board)
	}
	var rep elo.Report
	data, err := st.Get(ctx, board.Key)
	if err != nil || json.Unmarshal(data, &rep) != nil {
		t.Fatalf("Elo report %s: %v", board.Key, err)
	}
	if rep.Method != "bradley-terry" || rep.Matches == 0 || len(rep.Players) != 2 || rep.Players[0].Rating != max(board.Ratings["test-model"], board.Ratings["fake-model"]) {
		t.Fatalf("Elo report %+v", rep)
	}
	if err := h.Delete(ctx); err != nil {
		t.Fatal(err)
	}
}

// refreshAcross runs a LeaderboardRefresh whose leaderboard store differs from
// the store the model's config writes its runs to, and checks that the row
// lands on the leaderboard and that its Elo inputs are found in the run store.
func refreshAcross(t *testing.T, runsURI, boardURI string) {
	c := serverWithWorkers(t)
	cfgPath := filepath.Join(t.TempDir(), "run.yaml")
	model := "gguf:" + filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf")
	if err := os.WriteFile(cfgPath, []byte(mcqConfig(t, model, runsURI, "cloze", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	in := activities.RefreshInput{Lang: "ms", StoreURI: boardURI, Runs: []activities.PrepareInput{{ConfigPath: cfgPath}}}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	we, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "refresh-across", TaskQueue: workflows.TaskQueue}, workflows.LeaderboardRefreshName, in)
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.LeaderboardRefreshResult
	if err := we.Get(ctx, &res); err != nil {
		t.Fatalf("refresh with runs on %s and the leaderboard on %s: %v", runsURI, boardURI, err)
	}
	if len(res.Ran) != 1 || len(res.Appended) != 1 {
		t.Fatalf("refresh result %+v", res)
	}
	board, err := store.Open(ctx, boardURI)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := leaderboard.Read(ctx, board, "ms", 1)
	if err != nil || len(rows) != 1 || rows[0].ModelID != "test-model" {
		t.Fatalf("leaderboard rows %+v, %v", rows, err)
	}
	runs, err := store.Open(ctx, runsURI)
	if err != nil {
		t.Fatal(err)
	}
	// The row says where its run is, and the run is really there.
	if ok, err := runs.Exists(ctx, runfiles.ResultKey(res.Ran[0])); !ok || err != nil {
		t.Fatalf("run %s: result.json not in the run store %s: %v", res.Ran[0], runs.Describe(), err)
	}
	if ok, _ := board.Exists(ctx, runfiles.ResultKey(res.Ran[0])); ok {
		t.Fatalf("run %s was written to the leaderboard store", res.Ran[0])
	}
	if rows[0].ResultRef != runs.Describe()+"/"+runfiles.ResultKey(res.Ran[0]) {
		t.Fatalf("row result_ref %q does not name the run store %s", rows[0].ResultRef, runs.Describe())
	}
}

// The runs go to the config's store, the leaderboard to the refresh's: both
// on local disk, in different folders.
func TestLeaderboardRefreshAcrossLocalStores(t *testing.T) {
	refreshAcross(t, t.TempDir(), t.TempDir())
}

// Leaderboard on local disk, runs on a live S3-compatible server.
func TestLeaderboardRefreshRunsOnS3(t *testing.T) {
	refreshAcross(t, storetest.S3(t).Describe(), t.TempDir())
}

// Leaderboard on S3, runs on local disk.
func TestLeaderboardRefreshBoardOnS3(t *testing.T) {
	refreshAcross(t, t.TempDir(), storetest.S3(t).Describe())
}

// triggerAndWait triggers the schedule and returns the result of the refresh
// the trigger started.
func triggerAndWait(ctx context.Context, t *testing.T, c client.Client, h client.ScheduleHandle) workflows.LeaderboardRefreshResult {
	t.Helper()
	before, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range before.Info.RecentActions {
		if a.StartWorkflowResult != nil {
			seen[a.StartWorkflowResult.FirstExecutionRunID] = true
		}
	}
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range d.Info.RecentActions {
			if s := a.StartWorkflowResult; s != nil && !seen[s.FirstExecutionRunID] {
				var res workflows.LeaderboardRefreshResult
				if err := c.GetWorkflow(ctx, s.WorkflowID, s.FirstExecutionRunID).Get(ctx, &res); err != nil {
					t.Fatalf("refresh %s: %v", s.WorkflowID, err)
				}
				return res
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the trigger started no refresh")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The production shape on the embedded server: three models, one broken. A
// triggered refresh appends the two working ones, reports the broken one with
// its reason and writes an Elo table over the two with rows; once the broken
// one is mended, the next trigger runs it alone (it has no row yet), appends
// it and re-ranks; a trigger with unchanged pins then runs nothing.
func TestLeaderboardRefreshOneBrokenModel(t *testing.T) {
	c := serverWithWorkers(t)
	storeDir := t.TempDir()
	tiny := filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf")
	// The third model's weights are not there tonight.
	missing := filepath.Join(t.TempDir(), "late.gguf")
	fake := httptest.NewServer(&fakeModel{seen: map[string]int{}})
	defer fake.Close()
	cfgDir := t.TempDir()
	good, other, late := filepath.Join(cfgDir, "good.yaml"), filepath.Join(cfgDir, "fake.yaml"), filepath.Join(cfgDir, "late.yaml")
	for path, body := range map[string]string{
		good:  mcqConfig(t, "gguf:"+tiny, storeDir, "cloze", ""),
		other: mcqConfig(t, fake.URL, storeDir, "generate", "  flavor: vllm\n"),
		late:  mcqConfig(t, "gguf:"+missing, storeDir, "cloze", ""),
	} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := activities.RefreshInput{Lang: "ms", StoreURI: storeDir, Runs: []activities.PrepareInput{
		{ConfigPath: late, ModelID: "late-model"}, {ConfigPath: good}, {ConfigPath: other, ModelID: "fake-model"},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID: "refresh-broken", Spec: client.ScheduleSpec{CronExpressions: []string{"0 2 * * *"}},
		Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		Action: &client.ScheduleWorkflowAction{ID: "refresh-broken", Workflow: workflows.LeaderboardRefreshName,
			TaskQueue: workflows.TaskQueue, Args: []any{in}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Delete(context.Background())
	st, err := store.NewLocal(storeDir)
	if err != nil {
		t.Fatal(err)
	}

	res := triggerAndWait(ctx, t, c, h)
	if len(res.Ran) != 2 || len(res.Failed) != 1 || res.Failed[0].ModelID != "late-model" || !strings.Contains(res.Failed[0].Reason, missing) {
		t.Fatalf("first refresh: %+v", res)
	}
	if strings.Contains(res.Failed[0].Reason, "\n") {
		t.Errorf("reason %q is more than one line", res.Failed[0].Reason)
	}
	rows, err := leaderboard.Read(ctx, st, "ms", 1)
	if err != nil || len(rows) != 2 || rows[0].ModelID != "test-model" || rows[1].ModelID != "fake-model" {
		t.Fatalf("rows after the first refresh: %+v, %v", rows, err)
	}
	eloOver := func(res workflows.LeaderboardRefreshResult, models ...string) {
		t.Helper()
		if res.Elo == nil || len(res.Elo.Boards) != 1 {
			t.Fatalf("Elo: %+v", res.Elo)
		}
		board := res.Elo.Boards[0]
		if board.Key == "" || len(board.Ratings) != len(models) {
			t.Fatalf("Elo over %v: %+v", models, board)
		}
		for _, m := range models {
			if board.Ratings[m] == 0 {
				t.Fatalf("Elo over %v: %+v", models, board)
			}
		}
		if ok, err := st.Exists(ctx, board.Key); !ok || err != nil {
			t.Fatalf("Elo table %s not written: %v", board.Key, err)
		}
	}
	eloOver(res, "test-model", "fake-model")

	// The weights arrive: the failed model is tried again, alone.
	data, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(missing, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res = triggerAndWait(ctx, t, c, h)
	if len(res.Ran) != 1 || len(res.Failed) != 0 || !slices.Equal(res.Current, []string{"test-model", "fake-model"}) {
		t.Fatalf("second refresh: %+v", res)
	}
	eloOver(res, "test-model", "fake-model", "late-model")

	res = triggerAndWait(ctx, t, c, h)
	if len(res.Ran) != 0 || len(res.Failed) != 0 || len(res.Current) != 3 || res.Elo != nil {
		t.Fatalf("refresh with unchanged pins: %+v", res)
	}
}
