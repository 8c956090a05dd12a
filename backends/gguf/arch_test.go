package gguf

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// logits32 is logitsOf with float32 attention, so equivalences hold to
// float32 rounding rather than the f16 steps of short batches.
func logits32(t *testing.T, data []byte, tokens []int) []float32 {
	t.Helper()
	return logitsIn(t, data, tokens, attnF32)
}

// asArch rewrites a random llama model as architecture arch: metadata keys
// renamed, each head's query and key rows reordered from llama's adjacent
// rope pairs to the NEOX halves (what llama.cpp's converter undoes for
// llama), zero attention biases added, and scale applied to the query rows
// of head 0 and the key rows of kv head 1 (1 leaves them).
func asArch(t *testing.T, data []byte, arch string, headDim int, scale float32, extra map[string]tensorSpec) []byte {
	t.Helper()
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	meta := func(m []kv) []kv {
		for i := range m {
			if k, ok := strings.CutPrefix(m[i].key, "llama."); ok {
				m[i].key = arch + "." + k
			}
			if m[i].key == "general.architecture" {
				m[i].val = arch
			}
		}
		return m
	}
	repl := map[string]tensorSpec{}
	for name, s := range extra {
		repl[name] = s
	}
	for _, ti := range f.Tensors {
		isQ, isK := strings.HasSuffix(ti.Name, ".attn_q.weight"), strings.HasSuffix(ti.Name, ".attn_k.weight")
		if !isQ && !isK {
			continue
		}
		cols, rows := int(ti.Dims[0]), int(ti.Dims[1])
		w := bytesToF32(ti.Data)
		out := make([]float32, len(w))
		for r := 0; r < rows; r++ {
			h, p := r/headDim, r%headDim
			src := h*headDim + 2*p
			if p >= headDim/2 {
				src = h*headDim + 2*(p-headDim/2) + 1
			}
			k := float32(1)
			if (isQ && h == 0) || (isK && h == 1) {
				k = scale
			}
			for c := 0; c < cols; c++ {
				out[r*cols+c] = k * w[src*cols+c]
			}
		}
		repl[ti.Name] = tensorSpec{ti.Name, ti.Dims, TypeF32, encode(out, TypeF32)}
		bias := strings.TrimSuffix(ti.Name, ".weight") + ".bias"
		if arch == "qwen2" {
			repl[bias] = tensorSpec{bias, []uint64{uint64(rows)}, TypeF32, encode(make([]float32, rows), TypeF32)}
		}
	}
	return replaceTensors(t, data, meta, repl)
}

// Qwen 2 (NEOX rope, attention biases) computes what llama computes when the
// query and key rows are reordered the way llama.cpp's converter reorders
// them, and zero biases change nothing.
func TestQwen2EqualsReorderedLlama(t *testing.T) {
	spec := modelSpec{dim: 64, layers: 2, heads: 4, kvHeads: 2, ffn: 96, ctx: 64, typ: TypeF32, seed: 11}
	base := randomModel(t, spec)
	want := logits32(t, base, probe)
	got := logits32(t, asArch(t, base, "qwen2", 16, 1, nil), probe)
	if d := maxDiff(got, want); d > 1e-4 {
		t.Errorf("qwen2 logits differ from llama's by %g (max logit %g)", d, maxDiff(want, make([]float32, len(want))))
	}
	if d := maxDiff(logits32(t, asArch(t, base, "qwen2", 16, 3, nil), probe), want); d < 0.1 {
		t.Errorf("scaling a head's queries changes qwen2 logits by only %g", d)
	}
}

// Qwen 3 normalises each head's queries and keys (RMSNorm with
// attn_q_norm/attn_k_norm), so scaling one head's query or key rows changes
// nothing; with unit norm weights and unscaled rows it still differs from
// Qwen 2, which does not normalise.
func TestQwen3NormalisesEachHead(t *testing.T) {
	spec := modelSpec{dim: 64, layers: 2, heads: 4, kvHeads: 2, ffn: 96, ctx: 64, typ: TypeF32, seed: 12}
	base := randomModel(t, spec)
	ones := make([]float32, 16)
	for i := range ones {
		ones[i] = 1.5
	}
	norms := func() map[string]tensorSpec {
		m := map[string]tensorSpec{}
		for l := 0; l < spec.layers; l++ {
			for _, n := range []string{"attn_q_norm", "attn_k_norm"} {
				name := "blk." + string(rune('0'+l)) + "." + n + ".weight"
				m[name] = tensorSpec{name, []uint64{16}, TypeF32, encode(ones, TypeF32)}
			}
		}
		return m
	}
	// A negligible epsilon makes RMSNorm exactly scale-invariant.
	tinyEps := setMeta("qwen3.attention.layer_norm_rms_epsilon", float32(1e-20))
	plain := logits32(t, rewrite(t, asArch(t, base, "qwen3", 16, 1, norms()), tinyEps), probe)
	scaled := logits32(t, rewrite(t, asArch(t, base, "qwen3", 16, 4, norms()), tinyEps), probe)
	if d := maxDiff(plain, scaled); d > 1e-4 {
		t.Errorf("scaling one head's queries and keys changes qwen3 logits by %g", d)
	}
	tinyEps2 := setMeta("qwen2.attention.layer_norm_rms_epsilon", float32(1e-20))
	if d := maxDiff(plain, logits32(t, rewrite(t, asArch(t, base, "qwen2", 16, 1, nil), tinyEps2), probe)); d < 1e-2 {
		t.Errorf("qwen3 logits equal qwen2's (difference %g): the norms are not applied", d)
	}
	if _, err := newModel(asArch(t, base, "qwen3", 16, 1, nil), Options{}); err == nil || !strings.Contains(err.Error(), "attn_q_norm") {
		t.Errorf("qwen3 without attn_q_norm: error %v", err)
	}
}

// fusePhi3 stores a model's attn_q/k/v as one attn_qkv and ffn_gate/ffn_up
// as one ffn_up (gate rows first), as Phi-3 files do.
func fusePhi3(t *testing.T, data []byte, layers int) []byte {
	t.Helper()
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var m []kv
	for _, k := range f.Keys {
		m = append(m, kv{k, f.Metadata[k]})
	}
	var ts []tensorSpec
	cat := func(name string, parts ...string) tensorSpec {
		var raw []byte
		rows := uint64(0)
		for _, p := range parts {
			ti := f.Tensor(p)
			raw = append(raw, ti.Data...)
			rows += ti.Dims[1]
		}
		first := f.Tensor(parts[0])
		return tensorSpec{name, []uint64{first.Dims[0], rows}, first.Type, raw}
	}
	fused := map[string]bool{}
	for l := 0; l < layers; l++ {
		p := "blk." + string(rune('0'+l)) + "."
		ts = append(ts, cat(p+"attn_qkv.weight", p+"attn_q.weight", p+"attn_k.weight", p+"attn_v.weight"),
			cat(p+"ffn_up.weight", p+"ffn_gate.weight", p+"ffn_up.weight"))
		for _, n := range []string{"attn_q", "attn_k", "attn_v", "ffn_gate", "ffn_up"} {
			fused[p+n+".weight"] = true
		}
	}
	for _, ti := range f.Tensors {
		if !fused[ti.Name] && !strings.HasSuffix(ti.Name, ".bias") {
			ts = append(ts, tensorSpec{ti.Name, ti.Dims, ti.Type, ti.Data})
		}
	}
	return writeGGUF(m, ts)
}

// Phi-3 (fused attn_qkv and gate-up, NEOX rope, queries scaled before
// attention) computes what Qwen 2 computes with the parts stored apart, also
// with partial rotary embeddings (rope.dimension_count < head size).
func TestPhi3EqualsUnfused(t *testing.T) {
	for _, ropeDims := range []uint32{16, 8} {
		spec := modelSpec{dim: 64, layers: 2, heads: 4, kvHeads: 2, ffn: 96, ctx: 64, typ: TypeF32, seed: 13}
		base := rewrite(t, randomModel(t, spec), setMeta("llama.rope.dimension_count", ropeDims))
		want := logits32(t, asArch(t, base, "qwen2", 16, 1, nil), probe)
		phi := fusePhi3(t, asArch(t, base, "phi3", 16, 1, nil), spec.layers)
		if d := maxDiff(logits32(t, phi, probe), want); d > 1e-4 {
			t.Errorf("rope dims %d: phi3 logits differ from the unfused model's by %g", ropeDims, d)
		}
		if d := maxDiff(logitsOf(t, phi, probe), logitsOf(t, asArch(t, base, "qwen2", 16, 1, nil), probe)); d > 5e-3 {
			t.Errorf("rope dims %d: with f16 attention, phi3 logits differ by %g", ropeDims, d)
		}
	}
}

// A tensor the architecture's graph does not read (here Qwen 3's query norm
// in a llama file, and an output bias) is refused rather than ignored.
func TestUnusedTensorsRefused(t *testing.T) {
	base := randomModel(t, modelSpec{dim: 64, layers: 1, heads: 4, kvHeads: 2, ffn: 96, ctx: 64, typ: TypeF32, seed: 14})
	for _, name := range []string{"blk.0.attn_q_norm.weight", "blk.0.attn_output.bias", "blk.1.attn_q.weight"} {
		data := replaceTensors(t, base, nil, map[string]tensorSpec{name: {name, []uint64{16}, TypeF32, encode(make([]float32, 16), TypeF32)}})
		if _, err := newModel(data, Options{}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want one naming it", name, err)
		}
	}
}

// Models with the vocabularies of the families they come with (Llama 3's
// byte-level BPE on llama, Qwen 2's on qwen2 and qwen3, Phi-3's SentencePiece
// on phi3, Gemma 4's on llama and gemma3, Llama 2's SentencePiece on gemma2)
// score and generate through the backend: the
// scored tokens are the tokenizer's, log-probabilities are finite, and
// generation decodes to text.
func TestArchitecturesWithTheirVocabularies(t *testing.T) {
	src := llamaCppSource(t)
	for _, c := range []struct{ arch, vocab string }{{"llama", "llama-bpe"}, {"qwen2", "qwen2"}, {"qwen3", "qwen35"}, {"phi3", "phi-3"}, {"llama", "gemma-4"},
		{"gemma2", "llama-spm"}, {"gemma3", "gemma-4"}} {
		m, err := newModel(archModel(t, src, c.arch, c.vocab), Options{Threads: 2})
		if err != nil {
			t.Fatalf("%s with %s: %v", c.arch, c.vocab, err)
		}
		ctx, cont := "Soalan: Apakah ibu negara Malaysia?\nJawapan:", " Kuala Lumpur"
		res, err := m.LogLikelihood(bg, []backends.LLRequest{{ID: "x", Context: ctx, Continuation: cont}})
		if err != nil {
			t.Fatalf("%s with %s: %v", c.arch, c.vocab, err)
		}
		whole, n := m.tok.Encode(ctx+cont, true), len(m.tok.Encode(ctx, true))
		if !slices.Equal(res[0].Tokens, whole[n:]) || math.IsNaN(res[0].LogProb) || res[0].LogProb >= 0 {
			t.Errorf("%s with %s: tokens %v (tokenizer %v), logprob %v", c.arch, c.vocab, res[0].Tokens, whole[n:], res[0].LogProb)
		}
		g, err := m.Generate(bg, []backends.GenRequest{{Prompt: ctx, MaxTokens: 4}})
		if err != nil || g[0].Tokens == 0 && g[0].FinishReason != "stop" {
			t.Errorf("%s with %s: generation %+v, %v", c.arch, c.vocab, g, err)
		}
	}
}

// archModel is a one-layer random model of architecture arch with
// llama.cpp's vocabulary vocab (ggml-vocab-VOCAB.gguf in src/models).
func archModel(t *testing.T, src, arch, vocab string) []byte {
	t.Helper()
	data := modelWithVocab(t, src, vocab, modelSpec{dim: 64, layers: 1, heads: 4, kvHeads: 2, ffn: 64, ctx: 128, typ: TypeF32, seed: 15, tied: true})
	if arch == "llama" {
		return data
	}
	extra := map[string]tensorSpec{}
	if arch == "qwen3" || arch == "gemma3" {
		for _, n := range []string{"blk.0.attn_q_norm.weight", "blk.0.attn_k_norm.weight"} {
			extra[n] = tensorSpec{n, []uint64{16}, TypeF32, encode(make([]float32, 16), TypeF32)}
		}
	}
	if strings.HasPrefix(arch, "gemma") {
		for _, n := range []string{"blk.0.post_attention_norm.weight", "blk.0.post_ffw_norm.weight"} {
			extra[n] = tensorSpec{n, []uint64{64}, TypeF32, encode(slices.Repeat([]float32{1}, 64), TypeF32)}
		}
	}
	data = asArch(t, data, arch, 16, 1, extra)
	if arch == "phi3" {
		data = fusePhi3(t, data, 1)
	}
	return data
}

// TestWriteArchModels writes a Llama 3 (llama + llama-bpe), Qwen 2, Gemma 3
// (with Gemma 4's vocabulary) and Phi-3 model to the folder
// GLOSSOBENCH_WRITE_ARCH_MODELS names, as ARCH-VOCAB.gguf, for the
// commands' test on every architecture (cmd/glossobench); without it the
// test skips.
func TestWriteArchModels(t *testing.T) {
	dir := os.Getenv("GLOSSOBENCH_WRITE_ARCH_MODELS")
	if dir == "" {
		t.Skip("GLOSSOBENCH_WRITE_ARCH_MODELS not set")
	}
	src := llamaCppSource(t)
	for _, c := range [][2]string{{"llama", "llama-bpe"}, {"qwen2", "qwen2"}, {"gemma3", "gemma-4"}, {"phi3", "phi-3"}} {
		if err := os.WriteFile(filepath.Join(dir, c[0]+"-"+c[1]+".gguf"), archModel(t, src, c[0], c[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gemmaModel is a one-layer random Gemma 2 model whose only layer has a
// sliding window of window tokens (sliding_window_pattern 0 makes every
// layer a window layer) and final logits capped at finalCap.
func gemmaModel(t *testing.T, window uint32, finalCap float32) []byte {
	t.Helper()
	spec := modelSpec{dim: 64, layers: 1, heads: 4, kvHeads: 2, ffn: 96, ctx: 64, typ: TypeF32, seed: 16, tied: true}
	post := map[string]tensorSpec{}
	for _, n := range []string{"blk.0.post_attention_norm.weight", "blk.0.post_ffw_norm.weight"} {
		post[n] = tensorSpec{n, []uint64{64}, TypeF32, encode(slices.Repeat([]float32{1}, 64), TypeF32)}
	}
	return rewrite(t, asArch(t, randomModel(t, spec), "gemma2", 16, 1, post), metas(
		kv{"gemma2.attention.sliding_window", window}, kv{"gemma2.attention.sliding_window_pattern", uint32(0)},
		kv{"gemma2.final_logit_softcapping", finalCap}))
}

// In a sliding-window layer a position sees only the window's last tokens:
// with one such layer, the logits from position window on do not depend on
// the first token, and before it they do. Final soft-capping bounds every
// logit by the cap.
func TestGemmaSlidingWindowAndSoftcap(t *testing.T) {
	const window = 4
	data := gemmaModel(t, window, 1.5)
	other := slices.Clone(probe)
	other[1] = probe[1] + 1 // probe[0] is BOS; change the first text token
	a, b := logits32(t, data, probe), logits32(t, data, other)
	m, err := newModel(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	V := m.cfg.Vocab
	for i := range probe {
		d := maxDiff(a[i*V:(i+1)*V], b[i*V:(i+1)*V])
		if i >= 1+window && d != 0 {
			t.Errorf("position %d (window %d) depends on token 1: logits move by %g", i, window, d)
		}
		if i >= 1 && i < 1+window && d == 0 {
			t.Errorf("position %d does not see token 1 inside the window", i)
		}
	}
	for _, v := range a {
		if math.Abs(float64(v)) >= 1.5 {
			t.Fatalf("logit %g beyond the final soft-cap 1.5", v)
		}
	}
	if _, err := newModel(rewrite(t, data, setMeta("gemma2.rope.scaling.type", "longrope")), Options{}); err == nil || !strings.Contains(err.Error(), "longrope") {
		t.Errorf("rope.scaling.type longrope: error %v", err)
	}
}

// rope.scaling.factor without rope.scaling.type scales linearly, as
// llama.cpp's loader defaults the type to linear; type none turns it off.
func TestRopeScalingDefaultsToLinear(t *testing.T) {
	base := randomModel(t, modelSpec{dim: 64, layers: 1, heads: 4, kvHeads: 2, ffn: 96, ctx: 64, typ: TypeF32, seed: 17})
	factor := kv{"llama.rope.scaling.factor", float32(4)}
	untyped := logits32(t, rewrite(t, base, metas(factor)), probe)
	linear := logits32(t, rewrite(t, base, metas(factor, kv{"llama.rope.scaling.type", "linear"})), probe)
	none := logits32(t, rewrite(t, base, metas(factor, kv{"llama.rope.scaling.type", "none"})), probe)
	plain := logits32(t, base, probe)
	if d := maxDiff(untyped, linear); d != 0 {
		t.Errorf("factor without a type differs from linear by %g", d)
	}
	if d := maxDiff(linear, plain); d < 1e-3 {
		t.Errorf("linear scaling x4 changes the logits by only %g", d)
	}
	if d := maxDiff(none, plain); d != 0 {
		t.Errorf("type none with a factor differs from no scaling by %g", d)
	}
}
