// Package runnertest starts what the tests of a whole run need: the embedded
// Temporal server with GlossoBench's search attributes and a client on it.
package runnertest

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/glossobench/glossobench/infra/devserver"
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
