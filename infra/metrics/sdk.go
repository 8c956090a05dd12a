package metrics

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// SDKHandler is the Temporal SDK's metrics (temporal_request,
// temporal_activity_execution_latency, temporal_worker_task_slots_available,
// ...) as Prometheus metrics in Registry; pass it as
// client.Options.MetricsHandler. It stands in for the SDK's tally contrib
// with tally's Prometheus reporter, and names metrics as that pair does:
// counters and gauges by their SDK name, timers as histograms of seconds
// named <name>_seconds.
func SDKHandler() client.MetricsHandler { return sdkHandler{vecs: sdkVecs} }

var sdkVecs = &sdkRegistry{reg: Registry, vecs: map[string]*sdkVec{}}

// Buckets of the SDK's timers (poll, schedule-to-start, execution and
// end-to-end latencies), in seconds.
var sdkBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900}

type sdkHandler struct {
	vecs *sdkRegistry
	tags map[string]string
}

func (h sdkHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := maps.Clone(h.tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	return sdkHandler{vecs: h.vecs, tags: merged}
}

func (h sdkHandler) Counter(name string) client.MetricsCounter {
	v := h.vecs.get(name, counterKind, h.tags)
	if v == nil {
		return client.MetricsNopHandler.Counter(name)
	}
	c, err := v.counter.GetMetricWithLabelValues(v.values(h.tags)...)
	if err != nil { // a tag value that is not UTF-8: not recorded, no panic
		return client.MetricsNopHandler.Counter(name)
	}
	return counterFunc(func(d int64) {
		if d > 0 { // a Prometheus counter only goes up
			c.Add(float64(d))
		}
	})
}

func (h sdkHandler) Gauge(name string) client.MetricsGauge {
	v := h.vecs.get(name, gaugeKind, h.tags)
	if v == nil {
		return client.MetricsNopHandler.Gauge(name)
	}
	g, err := v.gauge.GetMetricWithLabelValues(v.values(h.tags)...)
	if err != nil {
		return client.MetricsNopHandler.Gauge(name)
	}
	return gaugeFunc(g.Set)
}

func (h sdkHandler) Timer(name string) client.MetricsTimer {
	v := h.vecs.get(name, timerKind, h.tags)
	if v == nil {
		return client.MetricsNopHandler.Timer(name)
	}
	o, err := v.timer.GetMetricWithLabelValues(v.values(h.tags)...)
	if err != nil {
		return client.MetricsNopHandler.Timer(name)
	}
	return timerFunc(func(d time.Duration) { o.Observe(d.Seconds()) })
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }

type kind int

const (
	counterKind kind = iota
	gaugeKind
	timerKind
)

// sdkRegistry makes one Prometheus vector per SDK metric name, on first use.
type sdkRegistry struct {
	reg  prometheus.Registerer
	mu   sync.Mutex
	vecs map[string]*sdkVec
}

// sdkVec is one SDK metric. Prometheus fixes a metric's label names, while
// the SDK may tag one name differently in different places: the names are
// those of the first use, a tag missing later is empty and an extra tag is
// left off.
type sdkVec struct {
	kind    kind
	keys    []string // the SDK's tag keys, in label order
	counter *prometheus.CounterVec
	gauge   *prometheus.GaugeVec
	timer   *prometheus.HistogramVec
}

func (v *sdkVec) values(tags map[string]string) []string {
	out := make([]string, len(v.keys))
	for i, k := range v.keys {
		out[i] = tags[k]
	}
	return out
}

// get returns the vector of name, making it with tags' keys as its labels;
// nil when the name is taken by another kind or metric (the SDK's metric is
// then not recorded rather than the worker failing).
func (r *sdkRegistry) get(name string, k kind, tags map[string]string) *sdkVec {
	name = sanitize(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.vecs[name]; ok {
		if v == nil || v.kind != k {
			return nil
		}
		return v
	}
	v := &sdkVec{kind: k, keys: slices.Sorted(maps.Keys(tags))}
	labels := make([]string, len(v.keys))
	for i, key := range v.keys {
		labels[i] = sanitize(key)
	}
	help := "Temporal SDK metric " + name + "."
	var c prometheus.Collector
	switch k {
	case counterKind:
		v.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		c = v.counter
	case gaugeKind:
		v.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		c = v.gauge
	case timerKind:
		v.timer = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name + "_seconds", Help: help + " (seconds)", Buckets: sdkBuckets}, labels)
		c = v.timer
	}
	if err := r.reg.Register(c); err != nil {
		v = nil
	}
	r.vecs[name] = v
	return v
}

// sanitize makes an SDK name or tag key a valid Prometheus name.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == ':' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
