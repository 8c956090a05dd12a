package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/preflight"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/workflows/runner"
)

func init() {
	register("check", "check a run config without running it: datasets, model and judges, store, Temporal", runCheck)
}

func runCheck(args []string) int {
	fs := commandFlags("check", os.Stderr, "check --config FILE [--model SPEC] [--model-id ID] [--limit N] [--chat-template auto|always]\n\n"+
		"Checks what `glossobench run` checks before it starts a workflow: the config decodes strictly; every\n"+
		"dataset file exists and its first rows parse; the model and every judge answer with what the config\n"+
		"needs (log-likelihoods for cloze scoring, chat for chat messages); the store takes writes; the Temporal\n"+
		"address (TEMPORAL_ADDRESS) answers. Prints one sentence per problem; exit 0 when there is none.")
	cfgPath := fs.String("config", "", "run config (YAML)")
	model := fs.String("model", "", "model spec; overrides model.spec")
	modelID := fs.String("model-id", "", "model id; overrides model.id")
	limit := limitFlag(fs)
	chatTemplate := fs.String("chat-template", "", "auto or always; overrides run.chat_template")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	if *cfgPath == "" {
		fmt.Fprintln(os.Stderr, "check: --config is required")
		return 2
	}
	ov := config.Overrides{Model: *model, ModelID: *modelID, ChatTemplate: *chatTemplate, Limit: int(*limit)}
	cfg, err := config.Load(*cfgPath, ov)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signalContext()
	defer stop()
	problems := preflight.Check(ctx, cfg, preflight.Options{ConfigPath: *cfgPath, Overrides: ov})
	env := runner.FromEnv()
	if env.Address != "" {
		opts, err := env.Options(newLogger())
		if err == nil {
			err = preflight.Temporal(ctx, opts)
		}
		if err != nil {
			problems = append(problems, err)
		}
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		return 1
	}
	temporal := "TEMPORAL_ADDRESS " + env.Address + " answers"
	if env.Address == "" {
		temporal = "no TEMPORAL_ADDRESS: run starts the embedded Temporal server"
		if c, err := net.DialTimeout("tcp", "127.0.0.1:7233", 300*time.Millisecond); err == nil {
			c.Close()
			temporal = "no TEMPORAL_ADDRESS: run uses the Temporal server on 127.0.0.1:7233"
		}
	}
	axes := fmt.Sprintf("%d axes", len(cfg.Axes))
	// The axes the run will skip, and why, as its result will say.
	skipped, _ := runplan.EachAxis(cfg, runplan.ModelMeta(cfg), func(string, scorers.Axis, func(func(scorers.Item) error) error) error { return nil })
	for _, s := range skipped {
		axes += fmt.Sprintf(" (%s %s)", s.Axis, s.Reason)
	}
	fmt.Printf("%s: ready: %s, model %s answers, store %s takes writes; %s\n", *cfgPath, axes, cfg.Model.Spec, cfg.Store.URI, temporal)
	return 0
}
