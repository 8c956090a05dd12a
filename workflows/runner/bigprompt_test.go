package runner_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// The workers' stated bounds for a long dataset field (issue 28 item 3):
// what a worker holds at its peak grows by at most this many bytes per byte
// of the field. The CPU worker holds the row's line, its decoded record and
// the rendered item at once (cmd/glossobench's rowMemoryBound for check;
// 13.1-14.4 measured). The inference worker holds the shard's line, the
// item, the prompt rendered from it and the request: 10.2 measured with an
// OpenAI-compatible server. With the embedded GGUF backend it also holds
// the prompt's tokens and the tokenizer's work (tokenize alone: 10 per
// byte) before the prompt is cut to the model's window: 28.4 measured, so
// its bound is 32 until the backend tokenizes only what the window keeps.
const (
	cpuFieldBound     = 16
	infFieldBound     = 16
	infGGUFFieldBound = 32
)

// A dataset row whose question is 10 MB goes through a whole run on
// subprocess workers, to an OpenAI-compatible server and to the embedded
// GGUF backend: the run completes (nothing of the field travels in a
// Temporal payload, which the server caps at 4 MB; items go by store key),
// and each worker's peak RSS grows over a run of short rows by at most its
// bound per byte of the field.
func TestLongFieldThroughTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs four EvalRuns on subprocess workers")
	}
	srv, c := runnertest.StartServer(t)
	bin := buildBinary(t)
	model := &quickModel{seen: map[[16]byte]int32{}}
	hs := httptest.NewServer(model)
	defer hs.Close()
	tiny, err := filepath.Abs(filepath.Join(repoRoot(t), "testdata", "models", "tiny-llama", "tiny-llama.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	const long = 10 << 20
	dataset := func(question string) string {
		p := filepath.Join(t.TempDir(), "d.jsonl")
		var b strings.Builder
		for i := 0; i < 4; i++ {
			q := fmt.Sprintf("Soalan nombor %d?", i)
			if i == 2 {
				q = question
			}
			row, _ := json.Marshal(map[string]string{"sample_id": fmt.Sprintf("s/%d", i), "subject": "s", "question": q,
				"A": "satu", "B": "dua", "C": "tiga", "D": "empat", "answer": "B"})
			b.Write(append(row, '\n'))
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sentence := "Kerajaan negeri telah mengumumkan bahawa jalan raya utama di pantai timur akan ditutup sementara kerana hujan lebat. "
	longText := strings.Repeat(sentence, long/len(sentence)+1)[:long]
	short, big := dataset("Soalan pendek?"), dataset(longText)

	for _, m := range []struct {
		name, model string
		infBound    int64
	}{
		{"openai", fmt.Sprintf("{spec: %q, id: m, flavor: vllm}", hs.URL), infFieldBound},
		{"gguf", fmt.Sprintf("{spec: %q, id: m}", "gguf:"+tiny), infGGUFFieldBound},
	} {
		run := func(data, id string) loadRun {
			cpu := startQueueWorker(t, bin, srv.Address, "cpu")
			inf := startQueueWorker(t, bin, srv.Address, "inference")
			cfg := fmt.Sprintf(`model: %s
store: {uri: %s}
run: {bootstrap_resamples: 200}
axes:
  knowledge:
    scoring_mode: generate
    datasets: [{name: d, path: %s, format: global_mmlu}]
`, m.model, t.TempDir(), data)
			res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: m.name + "-" + id})
			r := loadRun{cpuPeak: peakRSS(t, cpu.Process.Pid), infPeak: peakRSS(t, inf.Process.Pid)}
			cpu.Process.Kill()
			inf.Process.Kill()
			got := readResult(t, res.Summary.ResultPath)
			r.scored = got.Axes["knowledge"].N
			t.Logf("%s, %s row: %d of 4 items scored; notes %q", m.name, id, r.scored, got.Summary.Notes)
			return r
		}
		base, grown := run(short, "short"), run(big, "long")
		if over := func(r loadRun) bool {
			return r.cpuPeak-base.cpuPeak > cpuFieldBound*long || r.infPeak-base.infPeak > m.infBound*long
		}; over(grown) {
			// A peak is what the worker held plus the garbage its collector
			// had not reached yet; on a starved CPU the collector lags (CI
			// measured 17.7 once against 13-14.4 on a second try). What a
			// worker holds shows in the lower of two runs.
			again := run(big, "long-again")
			grown.cpuPeak, grown.infPeak = min(grown.cpuPeak, again.cpuPeak), min(grown.infPeak, again.infPeak)
		}
		for _, w := range []struct {
			name       string
			peak, base int64
			bound      int64
		}{{"cpu worker", grown.cpuPeak, base.cpuPeak, cpuFieldBound}, {"inference worker", grown.infPeak, base.infPeak, m.infBound}} {
			perByte := float64(w.peak-w.base) / long
			t.Logf("%s: %s peak RSS %d MiB with a 10 MiB field, %d MiB without: %.2f bytes per byte of the field (bound %d)",
				m.name, w.name, w.peak>>20, w.base>>20, perByte, w.bound)
			if perByte > float64(w.bound) {
				t.Errorf("%s: %s grew %.2f bytes per byte of the field, more than %d", m.name, w.name, perByte, w.bound)
			}
		}
	}
}
