// Package runner is the worker wiring, the composition root: it registers
// the workflows and the activities on the workers of both task queues, with
// the search attributes, the SDK's logging and the plugins. It connects to
// Temporal the way Temporal's own tools do (TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE, TEMPORAL_TLS_CERT/KEY/CA, TEMPORAL_API_KEY) and starts
// the embedded server when no address is set. It lives beside the workflows
// (as Temporal's reference applications keep worker.go beside theirs), above
// activities and infra, so every import from it runs down; only cmd imports
// it. Its tests are the end-to-end tests of a run.
package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/rs/zerolog"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/workflows"
)

// StateDir holds the embedded server's SQLite file, its log and the local store.
const StateDir = ".glossobench"

// SearchAttributes are registered on the embedded server's namespace so runs
// can be found by model, bench version and axes in the Temporal UI.
var SearchAttributes = workflows.SearchAttributes

// Env is the Temporal connection as Temporal's CLI reads it from the environment.
type Env struct {
	Address, Namespace       string
	TLSCert, TLSKey, TLSCA   string
	TLSServerName, APIKeyVar string
}

// FromEnv reads TEMPORAL_* variables. The API key stays in the environment;
// only the variable's name is kept.
func FromEnv() Env {
	e := Env{
		Address: os.Getenv("TEMPORAL_ADDRESS"), Namespace: os.Getenv("TEMPORAL_NAMESPACE"),
		TLSCert: os.Getenv("TEMPORAL_TLS_CERT"), TLSKey: os.Getenv("TEMPORAL_TLS_KEY"), TLSCA: os.Getenv("TEMPORAL_TLS_CA"),
		TLSServerName: os.Getenv("TEMPORAL_TLS_SERVER_NAME"),
	}
	if os.Getenv("TEMPORAL_API_KEY") != "" {
		e.APIKeyVar = "TEMPORAL_API_KEY"
	}
	if e.Namespace == "" {
		e.Namespace = "default"
	}
	return e
}

// Options turns the environment into client options.
func (e Env) Options(log zerolog.Logger) (client.Options, error) {
	o := client.Options{HostPort: e.Address, Namespace: e.Namespace, Logger: sdkLogger(log)}
	if e.TLSCert != "" || e.TLSCA != "" || e.APIKeyVar != "" {
		t := &tls.Config{ServerName: e.TLSServerName, MinVersion: tls.VersionTLS12}
		if e.TLSCert != "" {
			cert, err := tls.LoadX509KeyPair(e.TLSCert, e.TLSKey)
			if err != nil {
				return o, fmt.Errorf("TEMPORAL_TLS_CERT/TEMPORAL_TLS_KEY: %w", err)
			}
			t.Certificates = []tls.Certificate{cert}
		}
		if e.TLSCA != "" {
			pem, err := os.ReadFile(e.TLSCA)
			if err != nil {
				return o, fmt.Errorf("TEMPORAL_TLS_CA: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return o, fmt.Errorf("TEMPORAL_TLS_CA: %s holds no PEM certificate", e.TLSCA)
			}
			t.RootCAs = pool
		}
		o.ConnectionOptions.TLS = t
	}
	if e.APIKeyVar != "" {
		o.Credentials = client.NewAPIKeyDynamicCredentials(func(context.Context) (string, error) { return os.Getenv(e.APIKeyVar), nil })
	}
	return o, nil
}

// Embedded starts the embedded server for a newcomer's run or `glossobench
// dev`: SQLite under dir, listening on ip ("" is 127.0.0.1), frontend on
// port (7233 by default; -1 any free port), UI on uiPort (8233; -1 none).
func Embedded(dir, ip string, port, uiPort int) (*devserver.Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return devserver.Start(devserver.Options{
		DBFile: filepath.Join(dir, "temporal.db"), IP: ip, Port: port, UIPort: uiPort,
		LogFile: filepath.Join(dir, "temporal.log"), SearchAttributes: SearchAttributes,
	})
}

// Queues selects which task queues a worker serves.
type Queues int

const (
	CPU Queues = 1 << iota
	Inference
	All = CPU | Inference
)

// Workers are the running workers of one process.
type Workers struct {
	ws   []worker.Worker
	acts *activities.Activities // closed on Stop when Serve made them
}

// Serve starts the workers of the selected queues with their own
// activities logging to log; Stop stops them and closes the models they
// opened. Commands serve through it; tests that give the activities a fake
// backend call StartWorkers.
func Serve(c client.Client, log zerolog.Logger, q Queues) (*Workers, error) {
	acts := activities.New(log)
	w, err := StartWorkers(c, acts, q)
	if err != nil {
		acts.Close()
		return nil, err
	}
	w.acts = acts
	return w, nil
}

// StartWorkers registers EvalRun and the activities and starts polling.
func StartWorkers(c client.Client, acts *activities.Activities, q Queues) (*Workers, error) {
	if acts.SearchAttributes == nil {
		acts.SearchAttributes = func(ctx context.Context, namespace string) ([]string, error) {
			return namespaceSearchAttributes(ctx, c, namespace)
		}
	}
	var ws []worker.Worker
	if q&CPU != 0 {
		// Every activity heartbeats every second (activities.HeartbeatEvery);
		// each heartbeat goes out as it is recorded, not 80% of the heartbeat
		// timeout later, so a dead worker is told from a live one within
		// run.heartbeat_seconds. Eager activities are off: with them, every
		// activity a workflow task schedules on this queue (a corpus's
		// ScreenShards among them) runs on the worker that ran the task, so
		// the other CPU hosts would idle beside it.
		w := worker.New(c, workflows.TaskQueue, worker.Options{
			MaxHeartbeatThrottleInterval: activities.HeartbeatEvery, DisableEagerActivities: true,
		})
		workflows.Register(w)
		acts.RegisterCPU(w)
		ws = append(ws, w)
	}
	if q&Inference != 0 {
		// As on the CPU queue: heartbeats go out as they are recorded.
		w := worker.New(c, workflows.InferenceTaskQueue, worker.Options{
			MaxConcurrentActivityExecutionSize: 16, MaxHeartbeatThrottleInterval: activities.HeartbeatEvery,
		})
		acts.RegisterInference(w)
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return nil, errors.New("worker: no task queue selected")
	}
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, s := range ws[:i] {
				s.Stop()
			}
			return nil, fmt.Errorf("worker: %w", err)
		}
	}
	return &Workers{ws: ws}, nil
}

// namespaceSearchAttributes lists which of GlossoBench's search attributes
// the namespace registers, with the right type.
func namespaceSearchAttributes(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, err
	}
	var have []string
	for name, typ := range SearchAttributes {
		if t, ok := resp.GetCustomAttributes()[name]; ok && t == typ {
			have = append(have, name)
		}
	}
	sort.Strings(have)
	return have, nil
}

// Stop stops the workers, letting running activities finish their checkpoint.
func (w *Workers) Stop() {
	for _, x := range w.ws {
		x.Stop()
	}
	if w.acts != nil {
		w.acts.Close()
	}
}
