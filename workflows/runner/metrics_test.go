package runner_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/glossobench/glossobench/infra/devserver"
	"github.com/glossobench/glossobench/infra/metrics/metricstest"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// `glossobench worker --metrics-addr` serves the Temporal SDK's worker
// metrics and GlossoBench's: scraped after a real run on the embedded server
// against a model server that fails every fifth request, the SDK's activity
// and workflow counters and GlossoBench's item, request, retry, token and
// checkpoint counters are all above zero.
func TestWorkerMetricsScrape(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs an EvalRun")
	}
	srv, c := runnertest.StartServer(t)
	bin := buildBinary(t)
	addr := freeAddr(t)
	w := exec.Command(bin, "worker", "--queues", "all", "--metrics-addr", addr)
	w.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+srv.Address, "TEMPORAL_NAMESPACE="+srv.Namespace)
	w.Stderr = os.Stderr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Process.Kill(); w.Wait() })

	backend := newFlakyBackend(t, 5)
	res := runEval(t, c, workflows.EvalRunInput{Config: backendConfig(t, backend.URL(), t.TempDir()), RunID: "metrics"})
	if got := scoredItems(readResult(t, res.Summary.ResultPath)); got != mcqItems {
		t.Fatalf("%d items scored, want %d", got, mcqItems)
	}
	// The worker counts a completed workflow after it reports the workflow
	// task that completes it, so the client can see the result first: scrape
	// until that counter shows, for a few seconds at most.
	fams := scrape(t, "http://"+addr+"/metrics")
	for deadline := time.Now().Add(10 * time.Second); metricstest.Sum(fams["temporal_workflow_completed"], nil) <= 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		fams = scrape(t, "http://"+addr+"/metrics")
	}
	logScrape(t, "http://"+addr+"/metrics")

	for _, m := range []struct {
		name   string
		labels map[string]string
	}{
		// The Temporal SDK's own worker metrics.
		{"temporal_workflow_completed", nil},
		{"temporal_activity_execution_latency_seconds", map[string]string{"activity_type": "Infer", "task_queue": workflows.InferenceTaskQueue}},
		{"temporal_activity_schedule_to_start_latency_seconds", nil},
		{"temporal_workflow_task_execution_latency_seconds", nil},
		{"temporal_request", nil},
		// GlossoBench's.
		{"glossobench_items_inferred_total", map[string]string{"axis": "knowledge"}},
		{"glossobench_items_scored_total", map[string]string{"axis": "nlu"}},
		{"glossobench_backend_requests_total", map[string]string{"backend": "openai", "endpoint": "/v1/completions", "status": "200"}},
		{"glossobench_backend_requests_total", map[string]string{"status": "429"}},
		{"glossobench_backend_requests_total", map[string]string{"status": "500"}},
		{"glossobench_backend_request_duration_seconds", map[string]string{"backend": "openai", "endpoint": "/v1/completions"}},
		{"glossobench_backend_retries_total", map[string]string{"backend": "openai"}},
		{"glossobench_backend_tokens_total", map[string]string{"backend": "openai", "direction": "out"}},
		{"glossobench_checkpoint_writes_total", map[string]string{"kind": "predictions", "result": "ok"}},
	} {
		if v := metricstest.Sum(fams[m.name], m.labels); v <= 0 {
			t.Errorf("%s%v = %v, want > 0", m.name, m.labels, v)
		}
	}
	// Every item answered once is one inferred item; the scorer saw them all.
	var inferred, scored float64
	for _, axis := range []string{"knowledge", "nlu", "cultural"} {
		inferred += metricstest.Sum(fams["glossobench_items_inferred_total"], map[string]string{"axis": axis})
		scored += metricstest.Sum(fams["glossobench_items_scored_total"], map[string]string{"axis": axis})
	}
	if inferred != mcqItems || scored != mcqItems {
		t.Errorf("items inferred %v, scored %v; want %d each", inferred, scored, mcqItems)
	}
}

// freeAddr is a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	port, err := devserver.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// scrape reads a Prometheus text endpoint, waiting for it to come up.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(url)
		if err != nil {
			last = err
			continue
		}
		var p expfmt.TextParser
		fams, err := p.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: not the Prometheus text format: %v", url, err)
		}
		return fams
	}
	t.Fatalf("%s: %v", url, last)
	return nil
}

// logScrape logs GlossoBench's series and a few of the SDK's (go test -v).
func logScrape(t *testing.T, url string) {
	resp, err := http.Get(url)
	if err != nil {
		t.Log(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "glossobench_") && !strings.Contains(line, "_bucket{") ||
			strings.HasPrefix(line, "temporal_activity_execution_latency_seconds_count") || strings.HasPrefix(line, "temporal_workflow_completed") ||
			strings.HasPrefix(line, "temporal_request{") {
			t.Log(strings.TrimSpace(line))
		}
	}
}
