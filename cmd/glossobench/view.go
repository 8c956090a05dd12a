package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/infra/results/viewer"
	"github.com/glossobench/glossobench/infra/runner"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/workflows"
)

func init() {
	register("view", "serve a local web app over a store: its runs, the runs going on, a run's axes, an axis's items with filters and search", runView)
}

func runView(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return viewMain(ctx, args, os.Stdout, os.Stderr)
}

// viewMain serves until ctx ends.
func viewMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := commandFlags("view", stderr, "view [--store URI|FOLDER] [--addr 127.0.0.1:7788] [--temporal HOST:PORT] [--temporal-ui URL]",
		"\nServes the runs of the store until interrupted. It only reads the store, and the",
		"pages load nothing from the network. With --temporal (or TEMPORAL_ADDRESS) the",
		"live page lists the runs going on in the namespace (TEMPORAL_NAMESPACE, default",
		"\"default\") with each axis's stage and items done, from the workflows' progress query.")
	uri := fs.String("store", defaultStore, "store `URI|FOLDER` to read (a folder, file:DIR or s3://bucket/prefix?...)")
	addr := fs.String("addr", "127.0.0.1:7788", "`HOST:PORT` to serve on (port 0 picks a free one)")
	temporalAddr := fs.String("temporal", os.Getenv("TEMPORAL_ADDRESS"), "Temporal frontend `HOST:PORT` to list the runs going on from (default TEMPORAL_ADDRESS; none: no live page)")
	uiURL := fs.String("temporal-ui", "", "the Temporal UI's `URL`, for links to a run's workflow (default: http://HOST:8233 of --temporal)")
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	fail := failer(stderr, "view")
	st, err := store.Open(ctx, *uri)
	if err != nil {
		return fail(err)
	}
	srv := viewer.New(st)
	if *temporalAddr != "" {
		env := runner.FromEnv()
		c, err := dial(*temporalAddr, env.Namespace, zerolog.Nop())
		if err != nil {
			return fail(err)
		}
		defer c.Close()
		ui, err := temporalUI(*temporalAddr, *uiURL)
		if err != nil {
			return fail(err)
		}
		srv.WithLive(&temporalLive{c: c, addr: *temporalAddr, ns: env.Namespace, ui: ui})
	}
	err = viewer.Serve(ctx, srv, *addr, func(a string) {
		fmt.Fprintf(stdout, "glossobench view: %s on http://%s/\n", st.Describe(), a)
	})
	if err != nil {
		return fail(err)
	}
	return 0
}

// temporalUI is the Temporal UI's base URL: ui when given, else port 8233
// (the dev server's UI) on the frontend's host.
func temporalUI(frontend, ui string) (string, error) {
	if ui != "" {
		u, err := url.Parse(ui)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("--temporal-ui %q: want an http(s) URL", ui)
		}
		return strings.TrimRight(ui, "/"), nil
	}
	host, _, err := net.SplitHostPort(frontend)
	if err != nil {
		return "", fmt.Errorf("--temporal %q: want HOST:PORT", frontend)
	}
	return "http://" + net.JoinHostPort(host, "8233"), nil
}

// temporalLive lists the EvalRun workflows running in a namespace and reads
// each one's progress query.
type temporalLive struct {
	c            client.Client
	addr, ns, ui string
}

func (l *temporalLive) Describe() string {
	return fmt.Sprintf("Temporal namespace %s at %s", l.ns, l.addr)
}

func (l *temporalLive) Running(ctx context.Context) ([]viewer.LiveRun, error) {
	var out []viewer.LiveRun
	req := &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: l.ns,
		Query:     fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", workflows.WorkflowName),
	}
	for {
		resp, err := l.c.ListWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list the running %s workflows of namespace %s: %w", workflows.WorkflowName, l.ns, err)
		}
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			run := viewer.LiveRun{RunID: strings.TrimPrefix(id, "evalrun-"), WorkflowID: id, Started: e.GetStartTime().AsTime(),
				UIURL: l.ui + "/namespaces/" + url.PathEscape(l.ns) + "/workflows/" + url.PathEscape(id)}
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			p, err := workflows.QueryProgress(qctx, l.c, id)
			cancel()
			if err != nil {
				run.Err = "progress query: " + err.Error()
				out = append(out, run)
				continue
			}
			if p.RunID != "" {
				run.RunID = p.RunID
			}
			run.Stage = p.Stage
			for _, ax := range p.Axes {
				run.Axes = append(run.Axes, viewer.LiveAxis{Axis: ax.Axis, Stage: ax.Stage, Done: ax.Done, Total: ax.Total})
			}
			out = append(out, run)
		}
		if len(resp.GetNextPageToken()) == 0 {
			return out, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}
