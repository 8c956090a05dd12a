package gguf

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/internal/llamatest"
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
	// Gemma: tied embeddings, post-attention and post-FFN norms, a sliding
	// window of 8 (the texts are longer) on every other layer, soft-capping
	// small enough to bend the scores and logits; Gemma 3 adds QK-norm, a
	// global rope base of 1e6 with linear scaling 2 and a local base of 1e4.
	spec.tied, spec.seed = true, 22
	tied := randomModel(t, spec)
	post := func(extra map[string]tensorSpec) map[string]tensorSpec {
		m := map[string]tensorSpec{}
		for k, v := range extra {
			m[k] = v
		}
		for l := 0; l < spec.layers; l++ {
			for _, n := range []string{"post_attention_norm", "post_ffw_norm"} {
				name := fmt.Sprintf("blk.%d.%s.weight", l, n)
				m[name] = vec(name, 256, 1, 0.1)
			}
		}
		return m
	}
	gemma2 := rewrite(t, asArch(t, tied, "gemma2", 64, 1, post(nil)), metas(
		kv{"gemma2.attention.sliding_window", uint32(8)}, kv{"gemma2.attn_logit_softcapping", float32(2)},
		kv{"gemma2.final_logit_softcapping", float32(3)}))
	gemma3 := rewrite(t, asArch(t, tied, "gemma3", 64, 1, post(norms)), metas(
		kv{"gemma3.attention.sliding_window", uint32(8)}, kv{"gemma3.attention.sliding_window_pattern", uint32(2)},
		kv{"gemma3.rope.freq_base", float32(1e6)}, kv{"gemma3.rope.freq_base_swa", float32(1e4)},
		kv{"gemma3.rope.scaling.type", "linear"}, kv{"gemma3.rope.scaling.factor", float32(2)}))
	// Llama 3's RoPE scaling is a rope_freqs tensor (what llama.cpp's
	// converter computes from rope_scaling: 1 for high frequencies, the
	// factor for low ones, a smooth ramp between).
	freqs := make([]float32, 32)
	for i := range freqs {
		freqs[i] = 1 + 7*float32(i)/31
	}
	return map[string][]byte{
		"llama":  base,
		"qwen2":  replaceTensors(t, qwen2, nil, biases),
		"qwen3":  asArch(t, base, "qwen3", 64, 1, norms),
		"phi3":   fusePhi3(t, asArch(t, base, "phi3", 64, 1, nil), spec.layers),
		"gemma2": gemma2,
		"gemma3": gemma3,
		// llama.cpp's llama graph has no sliding window: Mistral 7B v0.1's
		// sliding_window is read by neither, and attention stays full.
		"llama+swa":    rewrite(t, base, metas(kv{"llama.attention.sliding_window", uint32(8)})),
		"llama+linear": rewrite(t, base, metas(kv{"llama.rope.scaling.type", "linear"}, kv{"llama.rope.scaling.factor", float32(4)})),
		"llama+yarn": rewrite(t, base, metas(kv{"llama.rope.scaling.type", "yarn"}, kv{"llama.rope.scaling.factor", float32(4)},
			kv{"llama.rope.scaling.original_context_length", uint32(64)})),
		"llama+llama3": replaceTensors(t, base, nil, map[string]tensorSpec{"rope_freqs.weight": {"rope_freqs.weight", []uint64{32}, TypeF32, encode(freqs, TypeF32)}}),
	}
}

// archOrder lists archModels' models in table order; the variants of llama
// (sliding window, RoPE scaling) run in fewer types, their point being the
// positions rather than the weights.
var archOrder = []string{"llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3", "llama+swa", "llama+linear", "llama+yarn", "llama+llama3"}

// metas sets several metadata keys.
func metas(pairs ...kv) func([]kv) []kv {
	return func(m []kv) []kv {
		for _, p := range pairs {
			m = setMeta(p.key, p.val)(m)
		}
		return m
	}
}

// liveGreedy returns llama-server's greedy continuation of prompt, n
// tokens or up to an end-of-generation token, one token per request (the
// argmax of liveNext; its own generation endpoint refuses text that ends in
// a partial UTF-8 character), and at each step the log-probability margin of
// the best token over the second and all log-probabilities.
func liveGreedy(t *testing.T, url string, prompt []int, n, vocab int, eog func(int) bool) (tokens []int, margins []float64, steps []map[int]float64) {
	for len(tokens) < n {
		lps, best := liveNext(t, url, append(slices.Clone(prompt), tokens...), vocab)
		second := math.Inf(-1)
		for id, lp := range lps {
			if id != best {
				second = max(second, lp)
			}
		}
		margins = append(margins, lps[best]-second)
		steps = append(steps, lps)
		if eog(best) {
			break
		}
		tokens = append(tokens, best)
	}
	return tokens, margins, steps
}

// maxLP is the largest log-probability of a liveNext answer.
func maxLP(lps map[int]float64) float64 {
	m := math.Inf(-1)
	for _, lp := range lps {
		m = max(m, lp)
	}
	return m
}

// startServer runs llama-server on model (a 256-token window, its log
// beside the model) and returns its URL and a stop function.
func startServer(t *testing.T, bin, model string) (string, func()) {
	t.Helper()
	return llamatest.Start(t, bin, model, 256, model+".log")
}

// quantTolerance bounds the per-token log-probability difference from
// llama-server per weight type. F32, F16 and BF16 compute llama.cpp's
// hidden states bit for bit on an AVX-512 machine (ggmldot.go, ggmlmath.go):
// what is left is llama-server's float32 softmax of the logits, about 1e-6.
// The quantised types round the activations as ggml does (roundActs) but
// add their block products in another order, so a value within float32
// rounding of a step of those coarse formats can fall on either side of it:
// moving every activation by one float32 ulp before its rounding moves this
// backend's own log-probabilities by up to 3.9e-2 (Q8_0), 7.6e-2 (Q4_K) on
// these models (testdata/gguf/ARCH_QUANT.md).
//
// llama-server is built with -march=native on the machine that runs the
// test (.ci/build-llama-server.sh); only with AVX-512F (and AVX512_BF16 for
// BF16) does it add in the orders ggmldot.go reproduces. Elsewhere the float
// types get the summation-order bounds measured before those orders were
// reproduced: 1e-3 (F32), 5e-3 (F16), 3e-2 (BF16).
var quantTolerance = map[string]float64{"F32": exactOr(hasAVX512, 1e-3), "F16": exactOr(hasAVX512, 5e-3),
	"BF16": exactOr(hasAVX512BF16, 3e-2), "Q8_0": 0.1,
	"Q6_K": 0.1, "Q5_K": 0.1, "Q5_1": 0.1, "Q5_0": 0.1, "Q4_K": 0.1, "Q4_1": 0.1, "Q4_0": 0.1, "Q3_K": 0.1, "Q2_K": 0.1}

// exactOr is the tolerance of a float type: 1e-5 (llama-server's float32
// softmax, about 1e-6 measured) when llama.cpp's order is this backend's,
// else the order bound.
func exactOr(exact bool, bound float64) float64 {
	if exact {
		return 1e-5
	}
	return bound
}

// archTable names the file TestArchQuantMatchesLlamaServer writes its table
// to (go test -run TestArchQuantMatchesLlamaServer -args -arch-table=...).
var archTable = flag.String("arch-table", "", "write the architecture x quant type table of TestArchQuantMatchesLlamaServer to this file")

// Every architecture in every weight type, quantised by llama.cpp's own
// llama-quantize from the F32 model, gives llama-server's per-token
// log-probabilities (within quantTolerance) and its greedy text. The log
// holds the table of max differences for testdata/gguf/ARCHQUANT.md.
func TestArchQuantMatchesLlamaServer(t *testing.T) {
	server := llamaTool(t, "GLOSSOBENCH_LLAMA_SERVER_BIN", "llama-server")
	quantize := llamaTool(t, "GLOSSOBENCH_LLAMA_QUANTIZE", "llama-quantize")
	dir := t.TempDir()
	types := []string{"F32", "F16", "BF16", "Q8_0", "Q6_K", "Q5_K", "Q5_1", "Q5_0", "Q4_K", "Q4_1", "Q4_0", "Q3_K", "Q2_K"}
	// GLOSSOBENCH_ARCH_QUANT_TYPES narrows the types (CI's short run).
	if env := os.Getenv("GLOSSOBENCH_ARCH_QUANT_TYPES"); env != "" {
		var some []string
		for _, typ := range strings.Split(env, ",") {
			if _, ok := quantTolerance[typ]; !ok {
				t.Fatalf("GLOSSOBENCH_ARCH_QUANT_TYPES: unknown type %q (want some of %s)", typ, strings.Join(types, ","))
			}
			some = append(some, typ)
		}
		types = some
	}
	var table strings.Builder
	table.WriteString("| architecture | " + strings.Join(types, " | ") + " |\n|---" + strings.Repeat("|---", len(types)) + "|\n")
	// The third text is long enough (187 tokens) for llama.cpp's tiled flash
	// attention, which batches of GGML_FA_TILE_Q tokens or more take.
	texts := []backends.LLRequest{{ID: "a", Context: france, Continuation: " Paris"},
		{ID: "b", Context: "Selamat pagi, apa khabar? Saya", Continuation: " suka makan nasi lemak."},
		{ID: "c", Context: "Pada suatu hari, seorang budak bernama Ali pergi ke pasar bersama ibunya. Mereka membeli ikan, sayur dan " +
			"buah-buahan. Once upon a time, Tom had a red cat. The cat sat on the mat and looked at the dog. Selepas itu, mereka " +
			"pulang ke rumah dan memasak nasi lemak untuk makan malam. The capital of Egypt is", Continuation: " Cairo."}}
	models := archModels(t)
	for _, arch := range archOrder {
		data := models[arch]
		f32 := filepath.Join(dir, arch+"-F32.gguf")
		if err := os.WriteFile(f32, data, 0o644); err != nil {
			t.Fatal(err)
		}
		table.WriteString("| " + arch)
		for _, typ := range types {
			if strings.Contains(arch, "+") && !slices.Contains([]string{"F32", "F16", "Q8_0", "Q4_K"}, typ) {
				table.WriteString(" | ")
				continue
			}
			path := f32
			if typ != "F32" {
				path = filepath.Join(dir, arch+"-"+typ+".gguf")
				if out, err := exec.Command(quantize, "--pure", f32, path, typ).CombinedOutput(); err != nil {
					t.Fatalf("llama-quantize %s %s: %v\n%s", arch, typ, err, out)
				}
			}
			greedy := 0
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
				// Greedy decoding is compared up to the first step where
				// llama-server's two best tokens are within twice the
				// tolerance: there either is a correct argmax.
				prompt := liveTokenize(t, url, france, true)
				want, margins, lps := liveGreedy(t, url, prompt, 8, m.cfg.Vocab, m.tok.IsEOG)
				// At every step of llama-server's greedy path, this backend's
				// argmax is a token llama-server rates within twice the
				// tolerance of its best.
				for i := range lps {
					m.resetCache()
					l, err := m.eval(bg, append(slices.Clone(prompt), want[:i]...), len(prompt)+i-1)
					if err != nil {
						t.Fatal(err)
					}
					ours := slices.Index(l, slices.Max(l))
					if best := maxLP(lps[i]); lps[i][ours] < best-2*quantTolerance[typ] {
						t.Errorf("%s %s: greedy step %d: argmax %d, which llama-server rates %.4f against its best %.4f", arch, typ, i, ours, lps[i][ours], best)
					}
				}
				gen, err := m.Generate(bg, []backends.GenRequest{{Prompt: france, MaxTokens: 8}})
				if err != nil {
					t.Fatal(err)
				}
				clear := len(want)
				for i, g := range margins[:len(want)] {
					if g < 2*quantTolerance[typ] {
						clear = i
						break
					}
				}
				text := m.tok.Decode(want[:clear])
				if clear == len(want) && (gen[0].Text != text || gen[0].Tokens != len(want)) || !strings.HasPrefix(gen[0].Text, text) {
					t.Errorf("%s %s: greedy text %q, llama-server's tokens %v (%q, clear margins for %d)", arch, typ, gen[0].Text, want, m.tok.Decode(want), clear)
				}
				greedy = clear
				if worst > quantTolerance[typ] {
					t.Errorf("%s %s: log-probabilities differ from llama-server's by up to %.2g (tolerance %g)", arch, typ, worst, quantTolerance[typ])
				}
				return worst
			}()
			fmt.Fprintf(&table, " | %.1e (%d)", worst, greedy)
		}
		table.WriteString(" |\n")
	}
	t.Logf("max |log-prob difference| against llama-server (greedy tokens compared):\n%s", table.String())
	if *archTable != "" {
		if err := os.WriteFile(*archTable, []byte(archTableHeader+table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// archTableHeader heads the file -arch-table writes.
const archTableHeader = `# The embedded runtime against llama-server, per architecture and weight type

Written by ` + "`go test ./backends/gguf/ -run TestArchQuantMatchesLlamaServer -args -arch-table=$PWD/testdata/gguf/ARCH_QUANT.md`" + `
(with GLOSSOBENCH_LLAMA_SERVER_BIN and GLOSSOBENCH_LLAMA_QUANTIZE set, as .ci/run sets them). Each model has
random weights (dim 256, 2 layers, 4 query and 2 key-value heads of 64, the tiny model's SentencePiece vocabulary
of 512), written F32 by the test and quantised by llama.cpp's own ` + "`llama-quantize --pure`" + ` to each type;
llama-server runs with ` + "`--ctx-checkpoints 0`" + `, so that it evaluates each prompt in one batch as this backend does. A cell is
the largest |difference| between this backend's per-token log-probability and llama-server's over the scored tokens
of three texts (English, Malay, and a 187-token mix long enough for ggml's tiled flash attention), then in brackets for how many of llama-server's 8 greedy tokens after the prompt
this backend's generated text is identical: the comparison stops at the first step where llama-server's two best
tokens are closer than twice the type's tolerance, since either is then a correct argmax (random-weight models have
many such near-ties). At every one of the 8 steps of llama-server's greedy path the test also checks that this
backend's argmax is a token llama-server rates within twice the tolerance of its best.

The variants of llama: llama+swa carries attention.sliding_window = 8 (llama.cpp's llama graph ignores it, as
this backend does, hence the same numbers as llama), llama+linear linear RoPE scaling x4, llama+yarn YaRN x4 from an
original context of 64, llama+llama3 a Llama 3 rope_freqs tensor; they run in F32, F16, Q8_0 and Q4_K only. gemma2
and gemma3 have a sliding window of 8 on every other layer (the texts are longer), gemma2 attention and final
soft-caps of 2 and 3, gemma3 QK-norm and a global rope base of 1e6 with linear x2 beside a local base of 1e4.

F32, F16 and BF16 compute llama.cpp's hidden states bit for bit: every operation rounds as llama-server's CPU
build does here (x86-64 with AVX-512F and AVX512_BF16, gcc 12 -march=native, glibc 2.36). The matmuls sum in
llamafile tinyBLAS's 16-lane order for batches and in ggml_vec_dot's for single rows (the last layer's feed-forward
block and the output projection, which llama.cpp computes only for the token whose logits it returns), BF16 pairs
as VDPBF16PS adds them; rope, softmax, SiLU, GELU and soft-capping use glibc's cosf/sinf/expf/tanhf and ggml's
vectorised expf with gcc's fused multiply-adds, and attention follows ggml's one-query kernel for batches under
64 tokens and its tiled kernel (64-position key tiles) from 64 on (backends/gguf/ggmldot.go, ggmlmath.go,
ggmlattn.go). What is left, about 1e-6,
is llama-server's float32 softmax of the logits against this backend's float64 one. On a CPU without AVX-512,
llama.cpp adds in another order (8 lanes; BF16 without VDPBF16PS) and the differences return to the floor of
summation order: moving every activation by one float32 ulp before its rounding moved this backend's own
log-probabilities by up to 3.1e-3 (F16), 1.7e-2 (BF16), 3.9e-2 (Q8_0), 7.5e-2 (Q4_1) and 7.6e-2 (Q4_K) on the
llama model. The quantised types round the activations to their ggml vec_dot_type (Q8_0, Q8_1 or Q8_K) as ggml
does but still add their block products in this backend's own order, so they sit at that floor. Tolerances
(quantTolerance in backends/gguf/live_arch_test.go): F32, F16 and BF16 1e-5 where the CPU has AVX-512F (and
AVX512_BF16 for BF16), else 1e-3, 5e-3 and 3e-2; every quantised type 0.1.

`
