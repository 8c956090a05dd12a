package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/infra/metrics"
	"github.com/glossobench/glossobench/workflows/runner"
)

func init() {
	register("dev", "start an embedded Temporal server (SQLite, Web UI) and a worker", runDev)
	register("worker", "serve an existing Temporal cluster (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TLS, API key)", runWorker)
}

// logFormat is --log-format: console (readable lines, the default) or json
// (one JSON object a line, for log shippers). The Temporal SDK's own lines go
// through the same logger.
var logFormat = "console"

// logFormatFlag adds --log-format to a command that logs.
func logFormatFlag(fs *flag.FlagSet) {
	fs.Func("log-format", "console (readable lines, the default) or json (one JSON object a line, for log shippers)", func(s string) error {
		if s != "console" && s != "json" {
			return fmt.Errorf("want console or json, got %q", s)
		}
		logFormat = s
		return nil
	})
}

// metricsAddr is --metrics-addr: where GET /metrics is served; "" (the
// default) serves nothing.
var metricsAddr string

// metricsAddrFlag adds --metrics-addr to a command that runs a worker or a run.
func metricsAddrFlag(fs *flag.FlagSet) {
	fs.Func("metrics-addr", "serve Prometheus metrics (the Temporal SDK's and GlossoBench's) at http://HOST:PORT/metrics (off by default)", func(s string) error {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return fmt.Errorf("want HOST:PORT, got %q", s)
		}
		metricsAddr = s
		return nil
	})
}

// serveMetrics starts the metrics endpoint when --metrics-addr is set. The
// returned stop is never nil.
func serveMetrics(log zerolog.Logger) (stop func(), err error) {
	if metricsAddr == "" {
		return func() {}, nil
	}
	s, err := metrics.Serve(metricsAddr)
	if err != nil {
		return nil, err
	}
	log.Info().Str("url", "http://"+s.Addr()+"/metrics").Msg("Prometheus metrics")
	return func() { s.Close() }, nil
}

// loggerServingMetrics returns the logger of a server command (dev, worker)
// and starts its metrics endpoint; false (the error logged) means exit 1.
func loggerServingMetrics() (log zerolog.Logger, stop func(), ok bool) {
	log = newLogger()
	stop, err := serveMetrics(log)
	if err != nil {
		log.Error().Err(err).Msg("metrics")
		return log, nil, false
	}
	return log, stop, true
}

func newLogger() zerolog.Logger {
	lvl := zerolog.InfoLevel
	if os.Getenv("GLOSSOBENCH_DEBUG") != "" {
		lvl = zerolog.DebugLevel
	}
	var w io.Writer = zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly, NoColor: !isTerminal(os.Stderr)}
	if logFormat == "json" {
		w = os.Stderr
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// signalContext is cancelled by Ctrl-C or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runDev(args []string) int {
	fs := commandFlags("dev", os.Stderr, "dev [--ip 127.0.0.1] [--port 7233] [--ui-port 8233] [--dir .glossobench] [--no-worker]")
	ip := fs.String("ip", "127.0.0.1", "address the server listens on and announces; another host's workers dial IP:PORT")
	port := fs.Int("port", 7233, "frontend gRPC port")
	uiPort := fs.Int("ui-port", 8233, "Web UI port (-1: no UI)")
	dir := fs.String("dir", runner.StateDir, "folder for the SQLite database and logs")
	noWorker := fs.Bool("no-worker", false, "serve the Temporal server only; `glossobench worker` processes (on any host) do the work")
	logFormatFlag(fs)
	metricsAddrFlag(fs)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	log, stopMetrics, ok := loggerServingMetrics()
	if !ok {
		return 1
	}
	defer stopMetrics()
	srv, err := runner.Embedded(*dir, *ip, *port, *uiPort)
	if err != nil {
		log.Error().Err(err).Msg("dev server")
		return 1
	}
	defer srv.Stop()
	if !*noWorker {
		c, w, err := connectAndServe(srv.Address, srv.Namespace, log, runner.All)
		if err != nil {
			log.Error().Err(err).Msg("worker")
			return 1
		}
		defer c.Close()
		defer w.Stop()
	}
	fmt.Fprintf(os.Stderr, "Temporal frontend %s (namespace %s)\n", srv.Address, srv.Namespace)
	if srv.UIURL != "" {
		fmt.Fprintf(os.Stderr, "Temporal Web UI   %s\n", srv.UIURL)
	}
	fmt.Fprintf(os.Stderr, "State in %s; Ctrl-C stops.\n", *dir)
	ctx, stop := signalContext()
	defer stop()
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "stopping")
	return 0
}

func runWorker(args []string) int {
	fs := commandFlags("worker", os.Stderr, "worker [--queues all|cpu|inference]")
	queues := fs.String("queues", "all", "task queues to serve: all, cpu (workflows, scoring) or inference (model calls)")
	logFormatFlag(fs)
	metricsAddrFlag(fs)
	if _, code, ok := parseArgs(fs, args, 0); !ok {
		return code
	}
	var q runner.Queues
	switch *queues {
	case "all":
		q = runner.All
	case "cpu":
		q = runner.CPU
	case "inference":
		q = runner.Inference
	default:
		fmt.Fprintf(os.Stderr, "worker: --queues: want all, cpu or inference, got %q\n", *queues)
		return 2
	}
	log, stopMetrics, ok := loggerServingMetrics()
	if !ok {
		return 1
	}
	defer stopMetrics()
	env := runner.FromEnv()
	if env.Address == "" {
		env.Address = "127.0.0.1:7233"
	}
	c, w, err := connectAndServe(env.Address, env.Namespace, log, q)
	if err != nil {
		log.Error().Err(err).Msg("worker")
		return 1
	}
	defer c.Close()
	defer w.Stop()
	log.Info().Str("address", env.Address).Str("namespace", env.Namespace).Str("queues", *queues).Msg("worker started")
	ctx, stop := signalContext()
	defer stop()
	<-ctx.Done()
	return 0
}

// connectAndServe dials Temporal and starts workers for the selected queues.
func connectAndServe(addr, namespace string, log zerolog.Logger, q runner.Queues) (client.Client, *runner.Workers, error) {
	c, err := dial(addr, namespace, log)
	if err != nil {
		return nil, nil, err
	}
	w, err := runner.Serve(c, log, q)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, w, nil
}

func dial(addr, namespace string, log zerolog.Logger) (client.Client, error) {
	env := runner.FromEnv()
	env.Address, env.Namespace = addr, namespace
	opts, err := env.Options(log)
	if err != nil {
		return nil, err
	}
	if metricsAddr != "" {
		opts.MetricsHandler = metrics.SDKHandler()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("no Temporal server answers at %s (%s); start one (glossobench dev) or correct TEMPORAL_ADDRESS", addr, runner.Cause(err))
	}
	return c, nil
}

// ensureServer returns the address of a Temporal server for a run: the
// configured one, an embedded server already listening on 127.0.0.1:7233 (a
// `glossobench dev`), or a new embedded one started in this process.
func ensureServer(log zerolog.Logger) (addr, namespace string, srv *devserver.Server, err error) {
	env := runner.FromEnv()
	if env.Address != "" {
		return env.Address, env.Namespace, nil, nil
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:7233", 300*time.Millisecond); err == nil {
		c.Close()
		return "127.0.0.1:7233", "default", nil, nil
	}
	log.Info().Msg("no TEMPORAL_ADDRESS: starting the embedded Temporal server")
	srv, err = runner.Embedded(runner.StateDir, "", 7233, 8233)
	if err != nil {
		return "", "", nil, err
	}
	return srv.Address, srv.Namespace, srv, nil
}
