package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// TestQuickStartBackendParity runs the quick start on the tiny GGUF twice,
// through the embedded backend and through llama-server (the same config
// with only model.spec changed), and requires the same n and the same
// headline on every axis: one model file, any backend, the same numbers
// (DESIGN.md; issue 26 item 3). The tiny model is F32 and decodes greedily,
// where llama-server computes the embedded backend's logits bit for bit, so
// the scores must be equal, not close.
//
// It uses the llama-server at GLOSSOBENCH_LLAMA_SERVER_URL, or starts one
// from GLOSSOBENCH_LLAMA_SERVER_BIN (as TestArchQuantMatchesLlamaServer
// does). The embedded model gets the server's window (?ctx= its n_ctx), so
// both fit prompts to the same number of tokens.
//
// Fields that may legitimately differ, and why:
//   - run_id, config_hash, model_identity, store, axes.*.scores_key: they
//     name the run, the spec and where its files are, which differ by design;
//   - log-likelihoods: llama-server takes its softmax in float32, this
//     backend in float64 (about 1e-6 nats apart), so a cloze choice decided
//     by less than that could flip; mcq marks such items low-margin. None
//     does on the quick start, and the test would show it as a score;
//   - a cloze request that reaches the window: llama-server refuses a
//     prompt that fills n_ctx and stops forcing tokens once it is full, so
//     it is fitted to n_ctx-1 and reads one context token fewer (cut from
//     the left) than the embedded backend, which reads the whole window;
//     its log-likelihood differs slightly, the same items are scored, and
//     no choice flips on the quick start (a flip would show in the score);
//   - the judge is the embedded tiny model in both runs (only model.spec
//     changes), so MT and Safety compare the model's answers; that the tiny
//     judge's ratings parse needs JSON-schema sampling in the embedded
//     backend (another branch), and until then both runs report them n/a alike.
func TestQuickStartBackendParity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole quick start twice")
	}
	// Not yet in CI's test command: in .ci/run on 0714cb9 (two test packages
	// beside llama-server on two cores) one knowledge item of 100 was not
	// scored through llama-server while every other axis matched bit for
	// bit; its cause is not found yet (issue 26's note). Run it by hand with
	// GLOSSOBENCH_PARITY=1 and the server variables below.
	if os.Getenv("GLOSSOBENCH_PARITY") == "" {
		t.Skip("GLOSSOBENCH_PARITY unset: the parity run is by hand until its knowledge item is explained")
	}
	abs, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(abs, "models/tiny-llama/tiny-llama.gguf")
	url := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_URL")
	if url == "" {
		bin := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_BIN")
		if bin == "" {
			t.Skip("GLOSSOBENCH_LLAMA_SERVER_URL and GLOSSOBENCH_LLAMA_SERVER_BIN unset")
		}
		url = startTinyServer(t, bin, model)
	}
	nCtx := serverWindow(t, url)
	srv := testCluster(t)
	src, err := os.ReadFile("../../testdata/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := strings.ReplaceAll(string(src), "path: ", "path: "+abs+"/")
	base = strings.ReplaceAll(base, "gguf:models/", "gguf:"+abs+"/models/")
	run := func(name, spec string) runfiles.Result {
		cfg := strings.Replace(base, "  spec: gguf:"+model+"\n", "  spec: "+spec+"\n", 1)
		if !strings.Contains(cfg, "  spec: "+spec+"\n") {
			t.Fatalf("the quick start's model.spec line was not found in testdata/quickstart.yaml")
		}
		cfg += "store:\n  uri: " + t.TempDir() + "\n"
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		code, log := runWithWorker(t, srv, "--config", path, "--run-id", "parity-"+name, "--out", out)
		if code != 0 {
			t.Fatalf("%s run: exit %d\n%s", name, code, log)
		}
		var res runfiles.Result
		readJSON(t, filepath.Join(out, "result.json"), &res)
		return res
	}
	embedded := run("embedded", fmt.Sprintf("gguf:%s?ctx=%d", model, nCtx))
	served := run("server", "openai:"+url)
	if len(embedded.Axes) != 7 {
		t.Errorf("embedded run has %d axes, want the quick start's 7", len(embedded.Axes))
	}
	for name, e := range embedded.Axes {
		s, ok := served.Axes[name]
		if !ok {
			t.Errorf("%s: missing from the llama-server run", name)
			continue
		}
		if e.N != s.N {
			t.Errorf("%s: n %d embedded, %d through llama-server", name, e.N, s.N)
		}
		if !sameScore(e.Score, s.Score) {
			t.Errorf("%s: headline %s embedded, %s through llama-server", name, parityScore(e.Score), parityScore(s.Score))
		}
		if e.TruncationRate != s.TruncationRate {
			t.Errorf("%s: truncation rate %v embedded, %v through llama-server", name, e.TruncationRate, s.TruncationRate)
		}
		eb, _ := json.Marshal(e.ByScoring)
		sb, _ := json.Marshal(s.ByScoring)
		if string(eb) != string(sb) {
			t.Errorf("%s: by_scoring %s embedded, %s through llama-server", name, eb, sb)
		}
	}
	if !sameScore(embedded.Summary.MSPublic, served.Summary.MSPublic) || !sameScore(embedded.Summary.MSRanking, served.Summary.MSRanking) {
		t.Errorf("MS %s / ranking %s embedded, %s / %s through llama-server", parityScore(embedded.Summary.MSPublic), parityScore(embedded.Summary.MSRanking),
			parityScore(served.Summary.MSPublic), parityScore(served.Summary.MSRanking))
	}
	if strings.Join(embedded.Summary.Warnings, "\n") != strings.Join(served.Summary.Warnings, "\n") {
		t.Errorf("warnings differ:\nembedded:\n%s\nllama-server:\n%s", strings.Join(embedded.Summary.Warnings, "\n"), strings.Join(served.Summary.Warnings, "\n"))
	}
}

func sameScore(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func parityScore(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// serverWindow is llama-server's per-slot context size (GET /props).
func serverWindow(t *testing.T, url string) int {
	t.Helper()
	r, err := http.Get(url + "/props")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var props struct {
		DefaultGenerationSettings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := json.NewDecoder(r.Body).Decode(&props); err != nil || props.DefaultGenerationSettings.NCtx <= 0 {
		t.Fatalf("GET %s/props: no n_ctx (%v)", url, err)
	}
	return props.DefaultGenerationSettings.NCtx
}

// startTinyServer runs llama-server on the tiny model with one slot (no
// batching across requests, which rounds differently) and the model's own
// window, and stops it when the test ends.
func startTinyServer(t *testing.T, bin, model string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logPath := filepath.Join(t.TempDir(), "llama-server.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "-t", "2", "-np", "1", "-c", "512",
		"--ctx-checkpoints", "0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); log.Close() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 300 {
		if r, err := http.Get(url + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return url
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(logPath)
	t.Fatalf("llama-server did not start:\n%s", b)
	return ""
}
