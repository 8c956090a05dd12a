package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/workflows"
)

func TestCheckInputRefusesBeforeAnythingStarts(t *testing.T) {
	cfg := "../../testdata/quickstart.yaml"
	for _, c := range []struct {
		in   workflows.EvalRunInput
		want string
	}{
		{workflows.EvalRunInput{}, "--config is required"},
		{workflows.EvalRunInput{ConfigPath: cfg, MaxWallSeconds: config.AggregateReserveSeconds}, "--max-wall-seconds"},
		{workflows.EvalRunInput{ConfigPath: cfg, RunID: "../x"}, "--run-id"},
	} {
		if err := CheckInput(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: want an error naming %s, got %v", c.in, c.want, err)
		}
	}
	if err := CheckInput(workflows.EvalRunInput{ConfigPath: cfg, MaxWallSeconds: config.AggregateReserveSeconds + 1, RunID: "r1"}); err != nil {
		t.Errorf("a good input refused: %v", err)
	}
}

// A run started from a command line names paths the workers, which may
// run elsewhere, can read, and gets a run id from its model id.
func TestPrepareRunCompletesTheInput(t *testing.T) {
	in := workflows.EvalRunInput{ConfigPath: "../../testdata/quickstart.yaml", Model: "gguf:../../testdata/models/tiny-llama/tiny-llama.gguf", ModelID: "m-x"}
	cfg, err := PrepareRun(context.Background(), &in, false)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("../../testdata/models/tiny-llama/tiny-llama.gguf")
	if !filepath.IsAbs(in.ConfigPath) || in.Model != "gguf:"+abs || cfg.Model.ID != "m-x" || !strings.HasPrefix(in.RunID, "m-x-") {
		t.Errorf("input %+v, model id %q", in, cfg.Model.ID)
	}
	in = workflows.EvalRunInput{ConfigPath: "../../testdata/quickstart.yaml", RunID: "kept"}
	if _, err := PrepareRun(context.Background(), &in, false); err != nil || in.RunID != "kept" {
		t.Errorf("run id %q, %v", in.RunID, err)
	}
}
