// Package metrics holds a worker process's Prometheus metrics and serves
// them: the Temporal SDK's own worker metrics (through SDKHandler, passed as
// client.Options.MetricsHandler) and GlossoBench's (items, model requests,
// tokens, checkpoint writes, judge parse failures). Counting is always on and
// costs an atomic add; serving is opt-in (--metrics-addr). docs/GUIDE.md lists
// every metric.
package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/glossobench/glossobench/backends"
)

// Registry holds every metric of the process; Serve exposes it.
var Registry = prometheus.NewRegistry()

// Buckets of the model request latency histogram, in seconds: an embedded
// model's log-likelihood takes milliseconds, a long generation minutes.
var requestBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

var (
	itemsInferred = counterVec("glossobench_items_inferred_total",
		"Items whose model answer was checkpointed, by axis.", "axis")
	itemsScored = counterVec("glossobench_items_scored_total",
		"Items a completed Score activity gave a score (a line of scores.jsonl), by axis.", "axis")
	itemsUnscored = counterVec("glossobench_items_unscored_total",
		"Kept items a completed Score activity left without a score (no answer, or no valid judge rating), by axis.", "axis")
	itemsPlanned = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "glossobench_items_planned",
		Help: "Items an axis of a followed run has to go through in its current stage, by run, axis and stage (the workflow's progress query).",
	}, []string{"run", "axis", "stage"})
	itemsDone = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "glossobench_items_done",
		Help: "Items an axis of a followed run has gone through in its current stage, by run, axis and stage (the workflow's progress query).",
	}, []string{"run", "axis", "stage"})
	backendRequests = counterVec("glossobench_backend_requests_total",
		"Attempts of model requests, by backend, endpoint and status (HTTP status, error, or ok for the embedded model).", "backend", "endpoint", "status")
	backendLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "glossobench_backend_request_duration_seconds",
		Help:    "Duration of one attempt of a model request, by backend and endpoint.",
		Buckets: requestBuckets,
	}, []string{"backend", "endpoint"})
	backendRetries = counterVec("glossobench_backend_retries_total",
		"Model request attempts retried after a transient failure (429, 5xx, timeout, refused connection), by backend and endpoint.", "backend", "endpoint")
	tokens = counterVec("glossobench_backend_tokens_total",
		"Tokens sent to the model (direction in) and generated (out), by backend, as the server's usage or the embedded model counts them.", "backend", "direction")
	checkpointWrites = counterVec("glossobench_checkpoint_writes_total",
		"Checkpoint objects written to the store (kind predictions or ratings), by result (ok or error).", "kind", "result")
	checkpointRetries = counterVec("glossobench_checkpoint_write_retries_total",
		"Checkpoint writes tried again after the store failed them, by kind.", "kind")
	judgeParseFailures = counterVec("glossobench_judge_parse_failures_total",
		"Judge replies that held no valid rating, by judge.", "judge")
)

// counterVec is a counter of the given name and help text, by the labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		itemsInferred, itemsScored, itemsUnscored, itemsPlanned, itemsDone, backendRequests, backendLatency, backendRetries, tokens,
		checkpointWrites, checkpointRetries, judgeParseFailures,
	)
	// The backends cannot import this package; they report through the
	// observer it installs in every process that links it.
	backends.SetObserver(backendObserver{})
}

// ItemsInferred counts n items of axis answered and checkpointed.
func ItemsInferred(axis string, n int) { itemsInferred.WithLabelValues(axis).Add(float64(n)) }

// ItemsScored counts n items of axis scored.
func ItemsScored(axis string, n int) { itemsScored.WithLabelValues(axis).Add(float64(n)) }

// ItemsUnscored counts n kept items of axis left without a score.
func ItemsUnscored(axis string, n int) { itemsUnscored.WithLabelValues(axis).Add(float64(n)) }

// stageOf remembers each followed (run, axis)'s stage, so a stage's gauges
// go away when the axis moves on and a dashboard plots only current stages.
var stageOf = struct {
	sync.Mutex
	m map[[2]string]string
}{m: map[[2]string]string{}}

// Progress sets the planned and done gauges of an axis of run in stage
// from a progress report.
func Progress(run, axis, stage string, planned, done int) {
	stageOf.Lock()
	defer stageOf.Unlock()
	k := [2]string{run, axis}
	if old, ok := stageOf.m[k]; ok && old != stage {
		itemsPlanned.DeleteLabelValues(run, axis, old)
		itemsDone.DeleteLabelValues(run, axis, old)
	}
	stageOf.m[k] = stage
	itemsPlanned.WithLabelValues(run, axis, stage).Set(float64(planned))
	itemsDone.WithLabelValues(run, axis, stage).Set(float64(done))
}

// CheckpointWrite counts one checkpoint write of kind (predictions, ratings)
// and whether the store took it.
func CheckpointWrite(kind string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	checkpointWrites.WithLabelValues(kind, result).Inc()
}

// CheckpointRetry counts a failed checkpoint write that is tried again.
func CheckpointRetry(kind string) { checkpointRetries.WithLabelValues(kind).Inc() }

// JudgeParseFailures counts n replies of judge that held no valid rating.
func JudgeParseFailures(judge string, n int) {
	if n > 0 {
		judgeParseFailures.WithLabelValues(judge).Add(float64(n))
	}
}

// backendObserver counts what the backends report.
type backendObserver struct{}

func (backendObserver) Request(backend, endpoint, status string, took time.Duration) {
	backendRequests.WithLabelValues(backend, endpoint, status).Inc()
	backendLatency.WithLabelValues(backend, endpoint).Observe(took.Seconds())
}

func (backendObserver) Retry(backend, endpoint string) {
	backendRetries.WithLabelValues(backend, endpoint).Inc()
}

func (backendObserver) Tokens(backend string, in, out int) {
	if in > 0 {
		tokens.WithLabelValues(backend, "in").Add(float64(in))
	}
	if out > 0 {
		tokens.WithLabelValues(backend, "out").Add(float64(out))
	}
}
