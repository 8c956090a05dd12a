package gguf

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// llamaTool returns the path of a llama.cpp tool named by env (the
// binaries .ci/build-llama-server.sh builds); the test skips without it.
func llamaTool(t *testing.T, env, name string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Skipf("%s not set (the path of llama.cpp's %s, built by .ci/build-llama-server.sh)", env, name)
	}
	return p
}

// archModels are random-weight models of every supported architecture,
// F32, with head size 64 and rows of 256 so every K-quant fits.
func archModels(t *testing.T) map[string][]byte {
	spec := modelSpec{dim: 256, layers: 2, heads: 4, kvHeads: 2, ffn: 512, ctx: 256, typ: TypeF32, seed: 21}
	base := randomModel(t, spec)
	rng := rand.New(rand.NewPCG(21, 2))
	vec := func(name string, n int, mean, sd float64) tensorSpec {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(mean + sd*rng.NormFloat64())
		}
		return tensorSpec{name, []uint64{uint64(n)}, TypeF32, encode(x, TypeF32)}
	}
	biases, norms := map[string]tensorSpec{}, map[string]tensorSpec{}
	for l := 0; l < spec.layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		biases[p+"attn_q.bias"] = vec(p+"attn_q.bias", 256, 0, 0.1)
		biases[p+"attn_k.bias"] = vec(p+"attn_k.bias", 128, 0, 0.1)
		biases[p+"attn_v.bias"] = vec(p+"attn_v.bias", 128, 0, 0.1)
		norms[p+"attn_q_norm.weight"] = vec(p+"attn_q_norm.weight", 64, 1, 0.1)
		norms[p+"attn_k_norm.weight"] = vec(p+"attn_k_norm.weight", 64, 1, 0.1)
	}
	qwen2 := asArch(t, base, "qwen2", 64, 1, nil)
	return map[string][]byte{
		"llama": base,
		"qwen2": replaceTensors(t, qwen2, nil, biases),
		"qwen3": asArch(t, base, "qwen3", 64, 1, norms),
		"phi3":  fusePhi3(t, asArch(t, base, "phi3", 64, 1, nil), spec.layers),
	}
}

// startServer runs llama-server on model and returns its URL and a stop
// function.
func startServer(t *testing.T, bin, model string) (string, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-m", model, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "-t", "2", "-np", "1", "-c", "256")
	log, _ := os.Create(model + ".log")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait(); log.Close() }
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; i < 300; i++ {
		if r, err := http.Get(url + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return url, stop
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	b, _ := os.ReadFile(model + ".log")
	t.Fatalf("llama-server did not start on %s:\n%s", model, b)
	return "", nil
}

// quantTolerance bounds the per-token log-probability difference from
// llama-server per weight type: float types are computed as llama.cpp does;
// quantised ones differ because llama.cpp also quantises the activations
// (to Q8_0/Q8_K) for its integer dot products, which this backend does not.
var quantTolerance = map[string]float64{"F32": 1e-3, "F16": 1e-3, "BF16": 1e-3, "Q8_0": 2e-2,
	"Q6_K": 5e-2, "Q5_K": 5e-2, "Q5_1": 5e-2, "Q5_0": 5e-2, "Q4_K": 0.1, "Q4_1": 0.1, "Q4_0": 0.1, "Q3_K": 0.2, "Q2_K": 0.3}

// Every architecture in every weight type, quantised by llama.cpp's own
// llama-quantize from the F32 model, gives llama-server's per-token
// log-probabilities (within quantTolerance) and its greedy text. The log
// holds the table of max differences for testdata/gguf/ARCHQUANT.md.
func TestArchQuantMatchesLlamaServer(t *testing.T) {
	server := llamaTool(t, "GLOSSOBENCH_LLAMA_SERVER_BIN", "llama-server")
	quantize := llamaTool(t, "GLOSSOBENCH_LLAMA_QUANTIZE", "llama-quantize")
	dir := t.TempDir()
	types := []string{"F32", "F16", "BF16", "Q8_0", "Q6_K", "Q5_K", "Q5_1", "Q5_0", "Q4_K", "Q4_1", "Q4_0", "Q3_K", "Q2_K"}
	var table strings.Builder
	table.WriteString("| architecture | " + strings.Join(types, " | ") + " |\n|---" + strings.Repeat("|---", len(types)) + "|\n")
	texts := []backends.LLRequest{{ID: "a", Context: france, Continuation: " Paris"},
		{ID: "b", Context: "Selamat pagi, apa khabar? Saya", Continuation: " suka makan nasi lemak."}}
	models := archModels(t)
	for _, arch := range []string{"llama", "qwen2", "qwen3", "phi3"} {
		data := models[arch]
		f32 := filepath.Join(dir, arch+"-F32.gguf")
		if err := os.WriteFile(f32, data, 0o644); err != nil {
			t.Fatal(err)
		}
		table.WriteString("| " + arch)
		for _, typ := range types {
			path := f32
			if typ != "F32" {
				path = filepath.Join(dir, arch+"-"+typ+".gguf")
				if out, err := exec.Command(quantize, "--pure", f32, path, typ).CombinedOutput(); err != nil {
					t.Fatalf("llama-quantize %s %s: %v\n%s", arch, typ, err, out)
				}
			}
			worst := func() float64 {
				url, stop := startServer(t, server, path)
				defer stop() // Fatalf runs it too
				m, err := Open(path, Options{Threads: 2})
				if err != nil {
					t.Fatalf("%s %s: %v", arch, typ, err)
				}
				defer m.Close()
				worst := 0.0
				for _, r := range texts {
					whole := liveTokenize(t, url, r.Context+r.Continuation, true)
					n := len(liveTokenize(t, url, r.Context, true))
					res, err := m.LogLikelihood(bg, []backends.LLRequest{r})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(res[0].Tokens, whole[n:]) {
						t.Fatalf("%s %s: tokens %v, llama-server %v", arch, typ, res[0].Tokens, whole[n:])
					}
					for i := n; i < len(whole); i++ {
						lps, _ := liveNext(t, url, whole[:i], m.cfg.Vocab)
						worst = max(worst, math.Abs(res[0].TokenLogProbs[i-n]-lps[whole[i]]))
					}
				}
				var g struct {
					Content string `json:"content"`
				}
				postJSON(t, url+"/completion", map[string]any{"prompt": france, "n_predict": 8, "temperature": 0,
					"samplers": []string{"top_k"}, "top_k": 1}, &g)
				gen, err := m.Generate(bg, []backends.GenRequest{{Prompt: france, MaxTokens: 8}})
				if err != nil {
					t.Fatal(err)
				}
				if gen[0].Text != g.Content {
					t.Errorf("%s %s: greedy text %q, llama-server %q", arch, typ, gen[0].Text, g.Content)
				}
				if worst > quantTolerance[typ] {
					t.Errorf("%s %s: log-probabilities differ from llama-server's by up to %.2g (tolerance %g)", arch, typ, worst, quantTolerance[typ])
				}
				return worst
			}()
			fmt.Fprintf(&table, " | %.1e", worst)
		}
		table.WriteString(" |\n")
	}
	t.Logf("max |log-prob difference| against llama-server:\n%s", table.String())
}
