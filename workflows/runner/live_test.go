package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
)

// An EvalRun whose checkpoints and result live on a real S3-compatible server
// (versitygw in CI) and whose model is a real llama-server serving the tiny
// model, when both are up; each half runs alone when only one is.
func TestEvalRunLive(t *testing.T) {
	endpoint, bucket := os.Getenv("GLOSSOBENCH_S3_ENDPOINT"), os.Getenv("GLOSSOBENCH_S3_BUCKET")
	llama := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_URL")
	if endpoint == "" && llama == "" {
		t.Skip("GLOSSOBENCH_S3_ENDPOINT and GLOSSOBENCH_LLAMA_SERVER_URL unset")
	}
	storeURI := t.TempDir()
	if endpoint != "" {
		storeURI = fmt.Sprintf("s3://%s/evalrun-%s?endpoint=%s&region=us-east-1&path_style=true&access_key_env=AWS_ACCESS_KEY_ID&secret_key_env=AWS_SECRET_ACCESS_KEY",
			bucket, filepath.Base(t.TempDir()), endpoint)
	}
	model, extra := "gguf:"+filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf"), ""
	if llama != "" {
		model, extra = llama, "  flavor: llama-server\n  concurrency: 1\n"
	}
	c := serverWithWorkers(t)
	res := runEval(t, c, workflows.EvalRunInput{Config: mcqConfig(t, model, storeURI, "cloze", extra), RunID: "live"})

	st, err := store.Open(context.Background(), storeURI)
	if err != nil {
		t.Fatal(err)
	}
	data, err := st.Get(context.Background(), res.Summary.ResultKey)
	if err != nil {
		t.Fatal(err)
	}
	var r runfiles.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	for _, axis := range []string{"knowledge", "nlu", "cultural"} {
		if ax := r.Axes[axis]; ax.Score == nil || ax.N == 0 {
			t.Fatalf("axis %s unscored on %s with %s: %+v", axis, st.Describe(), model, ax.AxisResult)
		}
	}
	keys, err := st.List(context.Background(), "runs/live/knowledge/shards/")
	if err != nil || len(keys) < 3 {
		t.Fatalf("checkpoints in %s: %v %v", st.Describe(), keys, err)
	}
	// The store never holds a secret.
	for _, k := range keys {
		b, _ := st.Get(context.Background(), k)
		if secret := os.Getenv("AWS_SECRET_ACCESS_KEY"); secret != "" && strings.Contains(string(b), secret) {
			t.Fatalf("%s holds the S3 secret", k)
		}
	}
}
