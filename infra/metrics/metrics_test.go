package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/glossobench/glossobench/backends"
)

// The SDK tags one metric name differently in different places; every
// variant is recorded under the first use's labels and the registry still
// gathers (Prometheus refuses a family whose series differ in label names).
func TestSDKHandlerKeepsOneLabelSetPerName(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := sdkHandler{vecs: &sdkRegistry{reg: reg, vecs: map[string]*sdkVec{}}}
	base := h.WithTags(map[string]string{"namespace": "default", "task_queue": "q"})
	base.Counter("temporal_request").Inc(2)
	base.WithTags(map[string]string{"operation": "Poll"}).Counter("temporal_request").Inc(3) // an extra tag
	h.WithTags(map[string]string{"namespace": "default"}).Counter("temporal_request").Inc(5) // a missing one
	base.Counter("temporal_request").Inc(-7)                                                 // counters only go up
	base.Timer("temporal_activity_execution_latency").Record(1500 * time.Millisecond)
	base.Gauge("temporal_num_pollers").Update(4)
	base.Timer("temporal_request").Record(time.Second) // same name, other kind: dropped, no panic
	base.WithTags(map[string]string{"bad-key": "x"}).Counter("temporal.odd-name").Inc(1)
	base.WithTags(map[string]string{"task_queue": "\xff"}).Counter("temporal_request").Inc(1) // not UTF-8: left out, no panic

	if _, err := reg.Gather(); err != nil {
		t.Fatalf("gather: %v", err)
	}
	want := `# HELP temporal_request Temporal SDK metric temporal_request.
# TYPE temporal_request counter
temporal_request{namespace="default",task_queue=""} 5
temporal_request{namespace="default",task_queue="q"} 5
# HELP temporal_num_pollers Temporal SDK metric temporal_num_pollers.
# TYPE temporal_num_pollers gauge
temporal_num_pollers{namespace="default",task_queue="q"} 4
# HELP temporal_odd_name Temporal SDK metric temporal_odd_name.
# TYPE temporal_odd_name counter
temporal_odd_name{bad_key="x",namespace="default",task_queue="q"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "temporal_request", "temporal_num_pollers", "temporal_odd_name"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "temporal_activity_execution_latency_seconds"); n != 1 {
		t.Errorf("timer series: %d, want 1", n)
	}
}

// What the backends report reaches the served registry.
func TestServeListsBackendCounts(t *testing.T) {
	before := testutil.ToFloat64(backendRequests.WithLabelValues("test", "/v1/x", "503"))
	backends.Observe().Request("test", "/v1/x", "503", 20*time.Millisecond)
	backends.Observe().Retry("test", "/v1/x")
	backends.Observe().Tokens("test", 7, 3)
	ItemsInferred("knowledge", 4)
	CheckpointWrite("predictions", nil)
	JudgeParseFailures("j1", 2)
	if got := testutil.ToFloat64(backendRequests.WithLabelValues("test", "/v1/x", "503")); got != before+1 {
		t.Fatalf("requests %v, want %v", got, before+1)
	}

	s, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{
		`glossobench_backend_requests_total{backend="test",endpoint="/v1/x",status="503"} 1`,
		`glossobench_backend_retries_total{backend="test",endpoint="/v1/x"} 1`,
		`glossobench_backend_tokens_total{backend="test",direction="in"} 7`,
		`glossobench_backend_tokens_total{backend="test",direction="out"} 3`,
		`glossobench_backend_request_duration_seconds_count{backend="test",endpoint="/v1/x"} 1`,
		`glossobench_items_inferred_total{axis="knowledge"} 4`,
		`glossobench_checkpoint_writes_total{kind="predictions",result="ok"} 1`,
		`glossobench_judge_parse_failures_total{judge="j1"} 2`,
		`go_goroutines `,
	} {
		if !strings.Contains(string(body), line) {
			t.Errorf("scrape lacks %q", line)
		}
	}
	if _, err := Serve(s.Addr()); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("a taken address: %v", err)
	}
}
