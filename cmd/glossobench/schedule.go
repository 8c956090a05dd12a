package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/glossobench/glossobench/infra/results/leaderboard"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
)

func init() {
	registerGroup("schedule", "create, list, describe, trigger, pause, unpause or delete LeaderboardRefresh schedules", scheduleMain, scheduleCommands...)
}

// defaultScheduleID is the schedule a command acts on without --id.
const defaultScheduleID = "glossobench-leaderboard-refresh"

var scheduleCommands = []subcommand{
	{"create", "create a schedule that starts LeaderboardRefresh with REFRESH.json on a cron", scheduleCreate},
	{"list", "list the schedules, active or paused", scheduleList},
	{"describe", "print a schedule's state, times and recent refreshes", scheduleDescribe},
	{"trigger", "start a schedule's refresh now (--wait: and print what it did)", scheduleTrigger},
	{"pause", "pause a schedule", func(args []string, stdout, stderr io.Writer) int { return schedulePause(true, args, stdout, stderr) }},
	{"unpause", "unpause a schedule", func(args []string, stdout, stderr io.Writer) int { return schedulePause(false, args, stdout, stderr) }},
	{"delete", "delete a schedule", scheduleDelete},
}

const scheduleAbout = `Each schedule starts a LeaderboardRefresh with its REFRESH.json (see the
REFRESH.json table in docs/GUIDE.md); several schedules, e.g. one per language,
live side by side under different --id. TEMPORAL_ADDRESS names the server
(default 127.0.0.1:7233).`

func scheduleMain(args []string, stdout, stderr io.Writer) int {
	return runGroup("schedule", scheduleAbout, scheduleCommands, args, stdout, stderr)
}

// scheduleFlags returns the flag set of schedule action, with --id.
func scheduleFlags(action, synopsis string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := commandFlags("schedule "+action, stderr, "schedule "+action+" "+synopsis, "\n"+scheduleAbout)
	return fs, fs.String("id", defaultScheduleID, "schedule `ID`")
}

// withSchedules dials the server TEMPORAL_ADDRESS names and runs do within
// a minute; its error is the command's failure.
func withSchedules(fail func(error) int, do func(ctx context.Context, c client.Client) error) int {
	env := runner.FromEnv()
	if env.Address == "" {
		env.Address = "127.0.0.1:7233"
	}
	c, err := dial(env.Address, env.Namespace, newLogger())
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := do(ctx, c); err != nil {
		return fail(err)
	}
	return 0
}

func scheduleCreate(args []string, stdout, stderr io.Writer) int {
	fs, id := scheduleFlags("create", "--input REFRESH.json [--id ID] [--cron EXPR] [--paused]", stderr)
	cron := fs.String("cron", "0 2 * * *", "cron `EXPR` (UTC); default nightly at 02:00")
	input := fs.String("input", "", "LeaderboardRefresh input `REFRESH.json`")
	paused := fs.Bool("paused", false, "create the schedule paused")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	fail := failer(stderr, "schedule create")
	in, err := leaderboard.ReadRefresh(*input)
	if err != nil {
		return fail(err)
	}
	return withSchedules(fail, func(ctx context.Context, c client.Client) error {
		_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID:   *id,
			Spec: client.ScheduleSpec{CronExpressions: []string{*cron}},
			// A refresh still running when the next is due is not stacked.
			Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			Paused:  *paused,
			// The server turns the cron into calendars; the memo keeps it as
			// written, for describe.
			Memo: map[string]any{"cron": *cron, "lang": in.Language(), "store_uri": in.StoreURI},
			Action: &client.ScheduleWorkflowAction{
				// The server appends the start time, so each refresh and
				// each schedule's refreshes have ids of their own.
				ID: *id, Workflow: workflows.LeaderboardRefreshName,
				TaskQueue: workflows.TaskQueue, Args: []any{in},
			},
		})
		if err != nil {
			return fmt.Errorf("%s: %w", *id, err)
		}
		state := ""
		if *paused {
			state = ", paused"
		}
		fmt.Fprintf(stdout, "created schedule %s (%s UTC, lang %s, %d models, overlap: skip%s)\n", *id, *cron, in.Language(), len(in.Runs), state)
		return nil
	})
}

func scheduleList(args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("schedule list", stderr, "schedule list", "\n"+scheduleAbout)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	return withSchedules(failer(stderr, "schedule list"), func(ctx context.Context, c client.Client) error {
		it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
		if err != nil {
			return err
		}
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				return err
			}
			state := "active"
			if e.Paused {
				state = "paused"
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", e.ID, e.WorkflowType.Name, state)
		}
		return nil
	})
}

func scheduleDescribe(args []string, stdout, stderr io.Writer) int {
	fs, id := scheduleFlags("describe", "[--id ID]", stderr)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	return withSchedules(failer(stderr, "schedule describe"), func(ctx context.Context, c client.Client) error {
		d, err := c.ScheduleClient().GetHandle(ctx, *id).Describe(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", *id, err)
		}
		describeSchedule(ctx, c, *id, d, stdout)
		return nil
	})
}

// errRefreshFailed ends `schedule trigger --wait` with exit 1 after it has
// printed which models the refresh failed.
var errRefreshFailed = errors.New("the refresh failed for some models")

func scheduleTrigger(args []string, stdout, stderr io.Writer) int {
	fs, id := scheduleFlags("trigger", "[--id ID] [--wait]", stderr)
	wait := fs.Bool("wait", false, "wait for the triggered refresh to finish and print what it did")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	return withSchedules(failer(stderr, "schedule trigger"), func(ctx context.Context, c client.Client) error {
		h := c.ScheduleClient().GetHandle(ctx, *id)
		before, err := h.Describe(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", *id, err)
		}
		if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
			return fmt.Errorf("%s: %w", *id, err)
		}
		started, err := triggeredRun(ctx, h, before.Info.RecentActions)
		if err != nil {
			return fmt.Errorf("%s: %w", *id, err)
		}
		fmt.Fprintf(stdout, "triggered schedule %s: started %s\n", *id, started.WorkflowID)
		if !*wait {
			return nil
		}
		// The refresh may take hours: wait without the command's timeout;
		// Ctrl-C stops waiting, not the refresh.
		wctx, stop := signalContext()
		defer stop()
		var res workflows.LeaderboardRefreshResult
		if err := c.GetWorkflow(wctx, started.WorkflowID, started.FirstExecutionRunID).Get(wctx, &res); err != nil {
			return fmt.Errorf("refresh %s: %w", started.WorkflowID, err)
		}
		printRefresh(stdout, res)
		if len(res.Failed) > 0 {
			return errRefreshFailed
		}
		return nil
	})
}

func schedulePause(pause bool, args []string, stdout, stderr io.Writer) int {
	action := "unpause"
	if pause {
		action = "pause"
	}
	fs, id := scheduleFlags(action, "[--id ID] [--note TEXT]", stderr)
	note := fs.String("note", "", "why, shown by describe")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	return withSchedules(failer(stderr, "schedule "+action), func(ctx context.Context, c client.Client) error {
		h := c.ScheduleClient().GetHandle(ctx, *id)
		var err error
		if pause {
			err = h.Pause(ctx, client.SchedulePauseOptions{Note: *note})
		} else {
			err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: *note})
		}
		if err != nil {
			return fmt.Errorf("%s: %w", *id, err)
		}
		fmt.Fprintf(stdout, "%sd schedule %s\n", action, *id)
		return nil
	})
}

func scheduleDelete(args []string, stdout, stderr io.Writer) int {
	fs, id := scheduleFlags("delete", "[--id ID]", stderr)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	return withSchedules(failer(stderr, "schedule delete"), func(ctx context.Context, c client.Client) error {
		if err := c.ScheduleClient().GetHandle(ctx, *id).Delete(ctx); err != nil {
			return fmt.Errorf("%s: %w", *id, err)
		}
		fmt.Fprintf(stdout, "deleted schedule %s\n", *id)
		return nil
	})
}

// triggeredRun waits for the refresh a trigger started: the action that was
// not among the schedule's recent actions before. The schedule skips a
// trigger while its previous refresh still runs (overlap: skip), which is an
// error here.
func triggeredRun(ctx context.Context, h client.ScheduleHandle, before []client.ScheduleActionResult) (*client.ScheduleWorkflowExecution, error) {
	for {
		d, err := h.Describe(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range d.Info.RecentActions {
			if a.StartWorkflowResult != nil && !slices.ContainsFunc(before, func(b client.ScheduleActionResult) bool {
				return b.StartWorkflowResult != nil && b.StartWorkflowResult.FirstExecutionRunID == a.StartWorkflowResult.FirstExecutionRunID
			}) {
				return a.StartWorkflowResult, nil
			}
		}
		if d.Info.NumActionsSkippedOverlap > 0 && len(d.Info.RunningWorkflows) > 0 {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("no refresh started: refresh %s is still running and the schedule skips overlapping refreshes", d.Info.RunningWorkflows[0].WorkflowID)
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("the triggered refresh did not start within a minute")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// describeSchedule prints a schedule's state, times and recent refreshes,
// with what the latest finished refresh did.
func describeSchedule(ctx context.Context, c client.Client, id string, d *client.ScheduleDescription, w io.Writer) {
	memo := map[string]string{}
	if d.Memo != nil {
		for k, p := range d.Memo.Fields {
			var v string
			if converter.GetDefaultDataConverter().FromPayload(p, &v) == nil {
				memo[k] = v
			}
		}
	}
	state := "active"
	if s := d.Schedule.State; s != nil && s.Paused {
		state = "paused"
	}
	if s := d.Schedule.State; s != nil && s.Note != "" {
		state += " (" + s.Note + ")"
	}
	fmt.Fprintf(w, "schedule  %s\nstate     %s\ncron      %s UTC\nlang      %s\nstore     %s\n", id, state, orDash(memo["cron"]), orDash(memo["lang"]), orDash(memo["store_uri"]))
	if len(d.Info.NextActionTimes) > 0 {
		fmt.Fprintf(w, "next      %s\n", d.Info.NextActionTimes[0].UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "actions   %d started, %d skipped (overlap)\n", d.Info.NumActions, d.Info.NumActionsSkippedOverlap)
	for _, r := range d.Info.RunningWorkflows {
		fmt.Fprintf(w, "running   %s\n", r.WorkflowID)
	}
	var last *client.ScheduleWorkflowExecution
	for _, a := range d.Info.RecentActions {
		if a.StartWorkflowResult == nil {
			continue
		}
		status := "?"
		if desc, err := c.DescribeWorkflowExecution(ctx, a.StartWorkflowResult.WorkflowID, a.StartWorkflowResult.FirstExecutionRunID); err == nil {
			st := desc.GetWorkflowExecutionInfo().GetStatus()
			status = strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_"))
			if st == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				last = a.StartWorkflowResult
			}
		}
		fmt.Fprintf(w, "refresh   %s  %s  %s\n", a.ActualTime.UTC().Format(time.RFC3339), a.StartWorkflowResult.WorkflowID, status)
	}
	if last != nil {
		var res workflows.LeaderboardRefreshResult
		if err := c.GetWorkflow(ctx, last.WorkflowID, last.FirstExecutionRunID).Get(ctx, &res); err == nil {
			fmt.Fprintf(w, "latest finished refresh %s:\n", last.WorkflowID)
			printRefresh(w, res)
		}
	}
}

// printRefresh says what a refresh did, one line per model that failed.
func printRefresh(w io.Writer, res workflows.LeaderboardRefreshResult) {
	fmt.Fprintf(w, "  ran %d (%s), current %d (%s), failed %d\n", len(res.Ran), strings.Join(res.Ran, ", "), len(res.Current), strings.Join(res.Current, ", "), len(res.Failed))
	for _, f := range res.Failed {
		run := ""
		if f.RunID != "" {
			run = " (run " + f.RunID + ")"
		}
		fmt.Fprintf(w, "  failed %s%s: %s\n", f.ModelID, run, f.Reason)
	}
	if res.Elo != nil {
		for _, b := range res.Elo.Boards {
			if b.Key != "" {
				fmt.Fprintf(w, "  Elo %s: %d models, report %s\n", b.Dir, len(b.Ratings), b.Key)
			} else {
				fmt.Fprintf(w, "  Elo %s: %s\n", b.Dir, strings.Join(b.Notes, "; "))
			}
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
