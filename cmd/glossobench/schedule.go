package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/runner"
	"github.com/glossobench/glossobench/workflows"
)

func init() {
	register("schedule", "create, list or delete the nightly LeaderboardRefresh schedule", runSchedule)
}

func runSchedule(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, "usage: glossobench schedule create --input REFRESH.json [--id ID] [--cron EXPR] | list | delete [--id ID]")
		return 2
	}
	fs := newFlagSet("schedule "+args[0], "glossobench schedule create|list|delete [flags]")
	id := fs.String("id", "glossobench-leaderboard-refresh", "schedule id")
	cron := fs.String("cron", "0 2 * * *", "cron expression (UTC); default nightly at 02:00")
	input := fs.String("input", "", "LeaderboardRefresh input JSON: {\"lang\", \"store_uri\", \"runs\": [{\"config_path\", \"model\", \"model_id\"}]}")
	if !parse(fs, args[1:]) {
		return 2
	}
	env := runner.FromEnv()
	if env.Address == "" {
		env.Address = "127.0.0.1:7233"
	}
	c, err := dial(env.Address, env.Namespace, newLogger())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sc := c.ScheduleClient()
	switch args[0] {
	case "create":
		in, err := readRefreshInput(*input)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		_, err = sc.Create(ctx, client.ScheduleOptions{
			ID:   *id,
			Spec: client.ScheduleSpec{CronExpressions: []string{*cron}},
			// A refresh still running when the next is due is not stacked.
			Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			Action: &client.ScheduleWorkflowAction{
				ID: "leaderboard-refresh", Workflow: workflows.LeaderboardRefreshName,
				TaskQueue: workflows.TaskQueue, Args: []any{in},
			},
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "schedule create %s: %v\n", *id, err)
			return 1
		}
		fmt.Printf("created schedule %s (%s, overlap: skip)\n", *id, *cron)
	case "list":
		it, err := sc.List(ctx, client.ScheduleListOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Printf("%s\t%s\n", e.ID, e.WorkflowType.Name)
		}
	case "delete":
		if err := sc.GetHandle(ctx, *id).Delete(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "schedule delete %s: %v\n", *id, err)
			return 1
		}
		fmt.Printf("deleted schedule %s\n", *id)
	default:
		fmt.Fprintf(os.Stderr, "schedule: unknown action %q (create, list, delete)\n", args[0])
		return 2
	}
	return 0
}

// readRefreshInput reads and checks the refresh input file.
func readRefreshInput(path string) (activities.RefreshInput, error) {
	var in activities.RefreshInput
	if path == "" {
		return in, fmt.Errorf("schedule create: --input is required")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return in, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	if in.StoreURI == "" || len(in.Runs) == 0 {
		return in, fmt.Errorf("%s: fields store_uri and runs are required", path)
	}
	for i, r := range in.Runs {
		if r.ConfigPath == "" {
			return in, fmt.Errorf("%s: runs[%d].config_path: required", path, i)
		}
	}
	return in, nil
}
