package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/preflight"
	"github.com/glossobench/glossobench/infra/runner"
)

func init() {
	register("check", "check a run config without running it: datasets, model and judges, store, Temporal", runCheck)
}

func runCheck(args []string) int {
	fs := newFlagSet("check", "glossobench check --config FILE [--model SPEC] [--chat-template auto|always]\n\n"+
		"Checks what `glossobench run` checks before it starts a workflow: the config decodes strictly; every\n"+
		"dataset file exists and its first rows parse; the model and every judge answer with what the config\n"+
		"needs (log-likelihoods for cloze scoring, chat for chat messages); the store takes writes; the Temporal\n"+
		"address (TEMPORAL_ADDRESS) answers. Prints one sentence per problem; exit 0 when there is none.")
	cfgPath := fs.String("config", "", "run config (YAML)")
	model := fs.String("model", "", "model spec; overrides model.spec")
	chatTemplate := fs.String("chat-template", "", "auto or always; overrides run.chat_template")
	if !parse(fs, args) {
		return 2
	}
	if *cfgPath == "" {
		fmt.Fprintln(os.Stderr, "check: --config is required")
		return 2
	}
	ov := config.Overrides{Model: *model, ChatTemplate: *chatTemplate}
	cfg, err := config.Load(*cfgPath, ov)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signalContext()
	defer stop()
	problems := checkRun(ctx, *cfgPath, cfg, ov)
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
	fmt.Printf("%s: ready: %d axes, model %s answers, store %s takes writes; %s\n", *cfgPath, len(cfg.Axes), cfg.Model.Spec, cfg.Store.URI, temporal)
	return 0
}

// checkRun is the preflight `run` and `check` share: the problems a run of
// cfg would meet, one sentence each.
func checkRun(ctx context.Context, path string, cfg *config.Config, ov config.Overrides) []error {
	return preflight.Check(ctx, cfg, preflight.Options{ConfigPath: path, Overrides: ov})
}
