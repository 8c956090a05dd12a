// Package runnertest starts what the tests of a whole run need: the embedded
// Temporal server with GlossoBench's search attributes and a client on it.
package runnertest

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
)

// StartServer starts the embedded server in a temporary folder and dials it;
// both are stopped when the test ends. The SDK's own lines are kept to
// warnings and errors: at its default level a failing package's output is
// thousands of DEBUG lines with the failure somewhere among them.
func StartServer(t testing.TB) (*devserver.Server, client.Client) {
	t.Helper()
	dir := t.TempDir()
	srv, err := devserver.Start(devserver.Options{DBFile: filepath.Join(dir, "temporal.db"), Port: -1, UIPort: -1,
		LogFile: filepath.Join(dir, "temporal.log"), SearchAttributes: runner.SearchAttributes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c, err := client.Dial(client.Options{HostPort: srv.Address, Namespace: srv.Namespace, Logger: QuietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return srv, c
}

// QuietLogger is the SDK logger tests dial with: warnings and errors only.
func QuietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// TemporalCLI returns a function that runs the Temporal CLI
// (GLOSSOBENCH_TEMPORAL_CLI: the binary of `go install
// github.com/temporalio/cli/cmd/temporal@v1.5.1`, which .ci/run builds and
// caches) against srv and returns its combined output, failing the test when
// the CLI fails. Without the variable the test is skipped.
func TemporalCLI(t testing.TB, srv *devserver.Server) func(args ...string) []byte {
	t.Helper()
	cli := os.Getenv("GLOSSOBENCH_TEMPORAL_CLI")
	if cli == "" {
		t.Skip("GLOSSOBENCH_TEMPORAL_CLI (the temporal v1.5.1 binary) not set")
	}
	return func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(cli, append(args, "--address", srv.Address, "--namespace", srv.Namespace)...).CombinedOutput()
		if err != nil {
			t.Fatalf("temporal %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
}

// StartWithCLI starts EvalRun the way operators do (README.md):
// `temporal workflow start --type EvalRun --task-queue glossobench
// --workflow-id evalrun-RUNID --input JSON`, and returns the workflow id.
func StartWithCLI(temporal func(args ...string) []byte, in workflows.EvalRunInput) string {
	input, _ := json.Marshal(in)
	id := "evalrun-" + in.RunID
	temporal("workflow", "start", "--type", "EvalRun", "--task-queue", workflows.TaskQueue,
		"--workflow-id", id, "--input", string(input))
	return id
}
