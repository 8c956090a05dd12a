package gguf

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/glossobench/glossobench/backends/grammar"
)

// Options configure Open.
type Options struct {
	// ChatFormat names the chat format for Messages requests: "qa", "chatml",
	// "llama3" or "gemma". Empty means recognise tokenizer.chat_template.
	ChatFormat string
	// Threads is the number of goroutines for matrix products; 0 = GOMAXPROCS.
	Threads int
	// ContextSize caps the tokens of one sequence; 0 = the model's context_length.
	ContextSize int
	// TruncateLeft drops prompt tokens from the left (after BOS) when a
	// request does not fit the window, as lm-evaluation-harness does, and
	// reports how many; false makes an overlong request an error.
	TruncateLeft bool
}

// Config is the architecture read from GGUF metadata.
type Config struct {
	Dim, Layers, Heads, KVHeads, HeadDim, FFN, Vocab int
	ContextLength                                    int
	RopeDims                                         int
	RopeBase, RopeFreqScale                          float32
	NormEps                                          float32
	// Arch is general.architecture: llama, qwen2, qwen3, phi3, gemma2 or gemma3.
	Arch string
	// NeoxRope rotates the pairs (x[i], x[i+RopeDims/2]) rather than
	// adjacent pairs: ggml's NEOX rope, which llama.cpp uses for Qwen, Phi
	// and Gemma.
	NeoxRope bool
	// QScale, when nonzero, multiplies the queries before attention in place
	// of scaling the scores by 1/sqrt(HeadDim) (llama.cpp's Phi-3 and Gemma
	// graphs), which rounds differently in f16 attention.
	QScale float32
	// RopeExtFactor, RopeAttnFactor and RopeOrigCtx are YaRN's: the share of
	// extrapolation mixed in by ggml's ramp (1 for rope.scaling.type yarn, else
	// 0), the magnitude factor of the rotation, and the original context
	// length the correction dimensions are computed for.
	RopeExtFactor, RopeAttnFactor float32
	RopeOrigCtx                   int
	// Gemma: EmbedScale multiplies the token embeddings (sqrt(Dim)),
	// AttnSoftcap and FinalSoftcap cap attention scores and logits as
	// cap·tanh(x/cap) (0: none), GeGLU uses GELU rather than SiLU for the
	// gate, and PostNorms normalises each block's output before the residual.
	EmbedScale                float32
	AttnSoftcap, FinalSoftcap float32
	GeGLU, PostNorms          bool
	// Window is the sliding window of the layers SWALayers marks: a query at
	// position p sees keys at positions above p-Window. SWARopeBase and
	// SWARopeFreqScale are those layers' rope base and scale.
	Window                        int
	SWALayers                     []bool
	SWARopeBase, SWARopeFreqScale float32
}

type layer struct {
	attnNorm, ffnNorm []float32
	attnPost, ffnPost []float32 // Gemma's post-attention and post-FFN norms
	bq, bk, bv        []float32 // optional attention biases (Qwen 2)
	qNorm, kNorm      []float32 // per-head RMSNorm of queries and keys (Qwen 3)
	wq, wk, wv, wo    *matrix
	wGate, wUp, wDown *matrix
}

// Model is a Llama-architecture GGUF model held in memory (mapped, not
// copied). It implements backends.Backend; calls are serialised because the
// model keeps one KV cache.
type Model struct {
	path    string
	file    *File
	unmap   func() error
	cfg     Config
	tok     *Tokenizer
	chat    chatFormat
	ctxSize int
	// truncateLeft: see Options.TruncateLeft.
	truncateLeft bool
	pool         pool

	embd       *matrix
	outputNorm []float32
	output     *matrix
	layers     []layer
	ropeFreqs  []float32 // optional per-pair frequency divisors (rope_freqs.weight)

	mu     sync.Mutex
	cache  *kvCache
	closed bool
	// vocab and grammars serve requests with a JSONSchema (see constraint).
	vocab    *grammar.Vocab
	grammars map[string]*grammar.Constraint
	// evaluated counts tokens run through the network, so tests can check
	// that shared contexts are not recomputed.
	evaluated int
}

// Open maps the GGUF file at path and prepares the model for inference.
func Open(path string, opt Options) (*Model, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	m, err := newModel(data, opt)
	if err != nil {
		unmap()
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	m.path, m.unmap = path, unmap
	return m, nil
}

// newModel builds a model over a file image; Parse errors and metadata or
// shape mismatches come back as errors naming the field or tensor.
func newModel(data []byte, opt Options) (*Model, error) {
	f, err := Parse(data)
	if err != nil {
		return nil, err
	}
	arch, ok, err := f.metaString("general.architecture")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("metadata general.architecture is missing")
	}
	switch arch {
	case "llama", "qwen2", "qwen3", "phi3", "gemma2", "gemma3":
	default:
		return nil, fmt.Errorf("general.architecture %q is not supported (want llama, qwen2, qwen3, phi3, gemma2 or gemma3)", arch)
	}
	cfg, err := readConfig(f, arch)
	if err != nil {
		return nil, err
	}
	tok, err := newTokenizer(f)
	if err != nil {
		return nil, err
	}
	if cfg.Vocab == 0 {
		cfg.Vocab = tok.VocabSize()
	}
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	m := &Model{file: f, cfg: cfg, tok: tok, pool: pool{threads: threads}, ctxSize: cfg.ContextLength, truncateLeft: opt.TruncateLeft}
	if opt.ContextSize > 0 {
		m.ctxSize = opt.ContextSize
	}
	if m.chat, err = pickChatFormat(f, opt.ChatFormat); err != nil {
		return nil, err
	}
	if err := m.loadWeights(); err != nil {
		return nil, err
	}
	return m, nil
}

func readConfig(f *File, arch string) (Config, error) {
	gemma := arch == "gemma2" || arch == "gemma3"
	c := Config{Arch: arch, NeoxRope: arch != "llama"}
	var err error
	get := func(dst *int, key string, def int, required bool) {
		if err != nil {
			return
		}
		*dst, err = f.metaInt(arch+"."+key, def, required)
	}
	get(&c.Dim, "embedding_length", 0, true)
	get(&c.Layers, "block_count", 0, true)
	get(&c.FFN, "feed_forward_length", 0, true)
	get(&c.Heads, "attention.head_count", 0, true)
	get(&c.ContextLength, "context_length", 2048, false)
	get(&c.Vocab, "vocab_size", 0, false)
	if err != nil {
		return c, err
	}
	if c.Dim == 0 || c.Layers == 0 || c.FFN == 0 || c.Heads == 0 || c.ContextLength == 0 {
		return c, fmt.Errorf(arch+".* metadata: zero dimension in embedding_length=%d block_count=%d feed_forward_length=%d head_count=%d context_length=%d",
			c.Dim, c.Layers, c.FFN, c.Heads, c.ContextLength)
	}
	get(&c.KVHeads, "attention.head_count_kv", c.Heads, false)
	get(&c.HeadDim, "attention.key_length", c.Dim/c.Heads, false)
	if err != nil {
		return c, err
	}
	if v, _ := f.metaInt(arch+".attention.value_length", c.HeadDim, false); v != c.HeadDim {
		return c, fmt.Errorf(arch+".attention.value_length %d differs from key_length %d (not supported)", v, c.HeadDim)
	}
	get(&c.RopeDims, "rope.dimension_count", c.HeadDim, false)
	if err != nil {
		return c, err
	}
	if c.KVHeads == 0 || c.Heads%c.KVHeads != 0 {
		return c, fmt.Errorf(arch+".attention.head_count %d is not a multiple of head_count_kv %d", c.Heads, c.KVHeads)
	}
	if c.HeadDim == 0 || c.HeadDim%2 != 0 || c.RopeDims > c.HeadDim || c.RopeDims%2 != 0 {
		return c, fmt.Errorf(arch+".rope.dimension_count %d / head dim %d: want even and rope <= head", c.RopeDims, c.HeadDim)
	}
	if c.Layers > 1024 || c.ContextLength > 1<<24 {
		return c, fmt.Errorf(arch+".block_count %d or context_length %d is implausibly large", c.Layers, c.ContextLength)
	}
	eps, err := f.metaFloat(arch+".attention.layer_norm_rms_epsilon", 1e-5)
	if err != nil {
		return c, err
	}
	base, err := f.metaFloat(arch+".rope.freq_base", 10000)
	if err != nil {
		return c, err
	}
	c.NormEps, c.RopeBase, c.RopeFreqScale = float32(eps), float32(base), 1
	if err := readRopeScaling(f, &c); err != nil {
		return c, err
	}
	if arch == "phi3" {
		c.QScale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	}
	if gemma {
		if err := readGemma(f, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// readRopeScaling reads rope.scaling.* as llama.cpp's loader and context
// do: the type defaults to linear, the factor to 1 (0 too), and the type
// none turns scaling off; yarn mixes extrapolation into the low frequencies
// and scales the rotation's magnitude. LongRoPE is refused at load.
func readRopeScaling(f *File, c *Config) error {
	k := c.Arch + ".rope.scaling."
	st, _, err := f.metaString(k + "type")
	if err != nil {
		return err
	}
	if st == "" {
		st = "linear"
	}
	if st != "none" && st != "linear" && st != "yarn" {
		return fmt.Errorf("%stype %q is not supported (want none, linear or yarn)", k, st)
	}
	factor, err := f.metaFloat(k+"factor", 0)
	if err != nil {
		return err
	}
	if factor == 0 {
		if factor, err = f.metaFloat(c.Arch+".rope.scale_linear", 0); err != nil {
			return err
		}
	}
	if factor < 0 {
		return fmt.Errorf("%sfactor %g is negative", k, factor)
	}
	if factor != 0 && st != "none" {
		c.RopeFreqScale = 1 / float32(factor)
	}
	attn, err := f.metaFloat(k+"attn_factor", 1)
	if err != nil {
		return err
	}
	if c.RopeOrigCtx, err = f.metaInt(k+"original_context_length", c.ContextLength, false); err != nil {
		return err
	}
	c.RopeAttnFactor = 1
	if st == "yarn" {
		c.RopeExtFactor = 1
		// llama_context's yarn_attn_factor: get_mscale(factor) cancelled by
		// the 1+0.1·ln(factor) that ggml's rope multiplies in again (both
		// contracted by gcc into fused multiply-adds).
		fac := 1 / c.RopeFreqScale
		if fac > 1 {
			c.RopeAttnFactor = fma32(0.1, logf(fac), 1)
		}
		c.RopeAttnFactor *= 1 / fma32(0.1, logf(fac), 1)
	}
	c.RopeAttnFactor *= float32(attn)
	return nil
}

func logf(x float32) float32 { return float32(math.Log(float64(x))) }

// readGemma reads the Gemma 2 and 3 hyper-parameters as llama.cpp's
// llama_model_gemma2/gemma3 do: Gemma 2 always has sliding-window layers
// (window 4096 unless stated, every other layer), Gemma 3 only when
// attention.sliding_window is set (five of every six layers); the window
// layers keep rope scale 1 and have their own rope base (10000 unless
// rope.freq_base_swa says otherwise; Gemma 2's default is the global base).
func readGemma(f *File, c *Config) error {
	a := c.Arch + "."
	c.EmbedScale = float32(math.Sqrt(float64(c.Dim)))
	c.GeGLU, c.PostNorms = true, true
	// gemma_pytorch's query_pre_attn_scalar: the 27B models (46 and 62
	// layers) scale by the model width per head rather than the head size.
	if (c.Arch == "gemma2" && c.Layers == 46) || (c.Arch == "gemma3" && c.Layers == 62) {
		c.QScale = float32(1 / math.Sqrt(float64(c.Dim/c.Heads)))
	} else {
		c.QScale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	}
	window, period, swaBase := 0, 0, float32(10000)
	var err error
	if c.Arch == "gemma2" {
		window, period, swaBase = 4096, 2, c.RopeBase
		if window, err = f.metaInt(a+"attention.sliding_window", window, false); err != nil {
			return err
		}
		attnCap, err := f.metaFloat(a+"attn_logit_softcapping", 50)
		if err != nil {
			return err
		}
		final, err := f.metaFloat(a+"final_logit_softcapping", 30)
		if err != nil {
			return err
		}
		c.AttnSoftcap, c.FinalSoftcap = float32(attnCap), float32(final)
	} else {
		if window, err = f.metaInt(a+"attention.sliding_window", 0, false); err != nil {
			return err
		}
		if window > 0 {
			period = 6
		}
		final, err := f.metaFloat(a+"final_logit_softcapping", 0)
		if err != nil {
			return err
		}
		c.FinalSoftcap = float32(final)
	}
	if window > 0 {
		if period, err = f.metaInt(a+"attention.sliding_window_pattern", period, false); err != nil {
			return err
		}
		b, err := f.metaFloat(a+"rope.freq_base_swa", float64(swaBase))
		if err != nil {
			return err
		}
		c.Window, c.SWARopeBase, c.SWARopeFreqScale = window, float32(b), 1
		if c.Arch == "gemma2" {
			c.SWARopeFreqScale = c.RopeFreqScale
		}
		c.SWALayers = make([]bool, c.Layers)
		for l := range c.SWALayers {
			c.SWALayers[l] = period == 0 || l%period < period-1
		}
	}
	return nil
}

// tensor finds a tensor and checks its ggml shape.
func (m *Model) tensor(name string, dims ...int) (*TensorInfo, error) {
	t := m.file.Tensor(name)
	if t == nil {
		return nil, fmt.Errorf("tensor %s is missing", name)
	}
	ok := len(t.Dims) == len(dims)
	for i := 0; ok && i < len(dims); i++ {
		ok = t.Dims[i] == uint64(dims[i])
	}
	if !ok {
		return nil, fmt.Errorf("tensor %s has shape %v, want %v", name, t.Dims, dims)
	}
	return t, nil
}

func (m *Model) weight(name string, cols, rows int) (*matrix, error) {
	t, err := m.tensor(name, cols, rows)
	if err != nil {
		return nil, err
	}
	return newMatrix(t), nil
}

func (m *Model) vector(name string, n int) ([]float32, error) {
	t, err := m.tensor(name, n)
	if err != nil {
		return nil, err
	}
	if t.Type != TypeF32 {
		return nil, fmt.Errorf("tensor %s has type %s, want F32", name, t.Type)
	}
	return bytesToF32(t.Data), nil
}

// graphTensors are the tensor names (after "blk.N.") the forward pass of
// each architecture reads. A file with any other tensor would be computed
// without it, so it is refused instead.
var graphTensors = map[string]bool{
	"attn_norm.weight": true, "attn_q.weight": true, "attn_k.weight": true, "attn_v.weight": true,
	"attn_qkv.weight": true, "attn_output.weight": true, "ffn_norm.weight": true, "ffn_gate.weight": true,
	"ffn_up.weight": true, "ffn_down.weight": true, "attn_q.bias": true, "attn_k.bias": true, "attn_v.bias": true,
}

// checkTensorsUsed refuses tensors the architecture's graph would ignore.
func (m *Model) checkTensorsUsed() error {
	for _, t := range m.file.Tensors {
		switch t.Name {
		case "token_embd.weight", "output_norm.weight", "output.weight", "rope_freqs.weight":
			continue
		}
		name, ok := strings.CutPrefix(t.Name, "blk.")
		if i := strings.IndexByte(name, '.'); ok && i > 0 {
			if n, err := strconv.Atoi(name[:i]); err == nil && n < m.cfg.Layers {
				part := name[i+1:]
				qk := part == "attn_q_norm.weight" || part == "attn_k_norm.weight"
				post := part == "post_attention_norm.weight" || part == "post_ffw_norm.weight"
				if graphTensors[part] || (qk && (m.cfg.Arch == "qwen3" || m.cfg.Arch == "gemma3")) || (post && m.cfg.PostNorms) {
					continue
				}
			}
		}
		return fmt.Errorf("tensor %s is not part of the %s graph this backend computes (it would be ignored)", t.Name, m.cfg.Arch)
	}
	return nil
}

func (m *Model) loadWeights() error {
	c := m.cfg
	var err error
	if m.embd, err = m.weight("token_embd.weight", c.Dim, c.Vocab); err != nil {
		return err
	}
	if c.Vocab != m.tok.VocabSize() {
		return fmt.Errorf("token_embd.weight has %d rows but the tokenizer has %d tokens", c.Vocab, m.tok.VocabSize())
	}
	if m.outputNorm, err = m.vector("output_norm.weight", c.Dim); err != nil {
		return err
	}
	if c.Arch == "gemma2" && m.file.Tensor("output.weight") != nil {
		// llama.cpp's Gemma 2 graph always projects with token_embd.
		return fmt.Errorf("tensor output.weight is not part of the gemma2 graph (it would be ignored)")
	}
	if m.file.Tensor("output.weight") == nil {
		m.output = m.embd // tied embeddings
	} else if m.output, err = m.weight("output.weight", c.Dim, c.Vocab); err != nil {
		return err
	}
	for _, name := range []string{"rope_factors_long.weight", "rope_factors_short.weight"} {
		if m.file.Tensor(name) != nil || m.file.Tensor("blk.0."+name) != nil {
			return fmt.Errorf("tensor %s: LongRoPE scaling (Phi-3 128k) is not supported", name)
		}
	}
	if m.file.Tensor("rope_freqs.weight") != nil {
		if m.ropeFreqs, err = m.vector("rope_freqs.weight", c.RopeDims/2); err != nil {
			return err
		}
	}
	q, kv := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m.layers = make([]layer, c.Layers)
	for i := range m.layers {
		l := &m.layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		type named struct {
			dst        **matrix
			name       string
			cols, rows int
		}
		ws := []named{{&l.wo, "attn_output", q, c.Dim}, {&l.wDown, "ffn_down", c.FFN, c.Dim}}
		// Phi-3 stores Q, K and V as one attn_qkv and gate and up as one
		// ffn_up of twice the rows; the parts are row ranges of the file.
		if m.file.Tensor(p+"attn_qkv.weight") != nil {
			qkv, err := m.weight(p+"attn_qkv.weight", c.Dim, q+2*kv)
			if err != nil {
				return err
			}
			l.wq, l.wk, l.wv = qkv.rowRange(0, q), qkv.rowRange(q, q+kv), qkv.rowRange(q+kv, q+2*kv)
		} else {
			ws = append(ws, named{&l.wq, "attn_q", c.Dim, q}, named{&l.wk, "attn_k", c.Dim, kv}, named{&l.wv, "attn_v", c.Dim, kv})
		}
		if c.Arch == "phi3" && m.file.Tensor(p+"ffn_gate.weight") == nil {
			up, err := m.weight(p+"ffn_up.weight", c.Dim, 2*c.FFN)
			if err != nil {
				return err
			}
			l.wGate, l.wUp = up.rowRange(0, c.FFN), up.rowRange(c.FFN, 2*c.FFN)
		} else {
			ws = append(ws, named{&l.wGate, "ffn_gate", c.Dim, c.FFN}, named{&l.wUp, "ffn_up", c.Dim, c.FFN})
		}
		for _, w := range ws {
			if *w.dst, err = m.weight(p+w.name+".weight", w.cols, w.rows); err != nil {
				return err
			}
		}
		if l.attnNorm, err = m.vector(p+"attn_norm.weight", c.Dim); err != nil {
			return err
		}
		if l.ffnNorm, err = m.vector(p+"ffn_norm.weight", c.Dim); err != nil {
			return err
		}
		for _, b := range []struct {
			dst  *[]float32
			name string
			n    int
		}{{&l.bq, "attn_q.bias", q}, {&l.bk, "attn_k.bias", kv}, {&l.bv, "attn_v.bias", kv}} {
			if m.file.Tensor(p+b.name) == nil {
				continue
			}
			if *b.dst, err = m.vector(p+b.name, b.n); err != nil {
				return err
			}
		}
		if c.PostNorms {
			if l.attnPost, err = m.vector(p+"post_attention_norm.weight", c.Dim); err != nil {
				return err
			}
			if l.ffnPost, err = m.vector(p+"post_ffw_norm.weight", c.Dim); err != nil {
				return err
			}
		}
		if c.Arch == "qwen3" || c.Arch == "gemma3" {
			if l.qNorm, err = m.vector(p+"attn_q_norm.weight", c.HeadDim); err != nil {
				return err
			}
			if l.kNorm, err = m.vector(p+"attn_k_norm.weight", c.HeadDim); err != nil {
				return err
			}
		}
	}
	return m.checkTensorsUsed()
}

// forEachMatrix calls fn on every weight matrix of the model.
func (m *Model) forEachMatrix(fn func(*matrix)) {
	fn(m.embd)
	if m.output != m.embd {
		fn(m.output)
	}
	for i := range m.layers {
		l := &m.layers[i]
		for _, w := range []*matrix{l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown} {
			fn(w)
		}
	}
}

// Config returns the model's architecture.
func (m *Model) Config() Config { return m.cfg }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// ContextSize is the longest sequence the model accepts.
func (m *Model) ContextSize() int { return m.ctxSize }

// Close releases the file mapping; the model must not be used afterwards.
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cache = nil
	m.closed = true
	if m.unmap == nil {
		return nil
	}
	err := m.unmap()
	m.unmap = nil
	return err
}

// attnMode chooses the attention arithmetic; see attention.
type attnMode int

const (
	// attnPerBatch is llama-server's own rule: f16 for batches of fewer than
	// faTileQ tokens, float32 for larger ones. Generation uses it.
	attnPerBatch attnMode = iota
	// attnF16 and attnF32 fix the arithmetic for a whole sequence, so a
	// scored continuation gets the same numbers however requests are
	// batched or share a cached context.
	attnF16
	attnF32
)

// kvCache holds keys and values of one token sequence, grown on demand.
type kvCache struct {
	mode   attnMode // how the cached states were computed
	tokens []int
	k, v   [][]float32 // per layer, position-major: [pos*kvDim + i]
	kt     []float32   // scratch: one layer's keys as attendTiled reads them
}

// forward runs tokens at positions len(cache.tokens)... and returns the
// logits of the rows from firstLogit on (row-major, vocab per row).
func (m *Model) forward(tokens []int, firstLogit int) ([]float32, error) {
	c := m.cfg
	n := len(tokens)
	p0 := len(m.cache.tokens)
	if p0+n > m.ctxSize {
		return nil, fmt.Errorf("sequence of %d tokens exceeds the context size %d", p0+n, m.ctxSize)
	}
	for _, t := range tokens {
		if t < 0 || t >= c.Vocab {
			return nil, fmt.Errorf("token id %d outside the vocabulary", t)
		}
	}
	qDim, kvDim := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	cache := m.cache
	need := (p0 + n) * kvDim
	for l := range m.layers {
		if cap(cache.k[l]) < need {
			grow := max(need, 2*cap(cache.k[l]))
			grow = min(grow, m.ctxSize*kvDim)
			nk := make([]float32, len(cache.k[l]), grow)
			copy(nk, cache.k[l])
			nv := make([]float32, len(cache.v[l]), grow)
			copy(nv, cache.v[l])
			cache.k[l], cache.v[l] = nk, nv
		}
		cache.k[l] = cache.k[l][:need]
		cache.v[l] = cache.v[l][:need]
	}

	x := make([]float32, n*c.Dim)
	buf := make([]float32, c.Dim)
	for i, t := range tokens {
		copy(x[i*c.Dim:], m.embd.row(t, buf))
	}
	if c.EmbedScale != 0 {
		for i := range x {
			x[i] *= c.EmbedScale
		}
	}
	xb := make([]float32, n*c.Dim)
	q := make([]float32, n*qDim)
	k := make([]float32, n*kvDim)
	v := make([]float32, n*kvDim)
	att := make([]float32, n*qDim)
	tmp := make([]float32, n*c.Dim)
	gate := make([]float32, n*c.FFN)
	up := make([]float32, n*c.FFN)
	cosSin := m.ropeTable(p0, n, c.RopeBase, c.RopeFreqScale)
	var cosSinSWA []float32
	if c.Window > 0 {
		cosSinSWA = m.ropeTable(p0, n, c.SWARopeBase, c.SWARopeFreqScale)
	}

	for li := range m.layers {
		l := &m.layers[li]
		for i := 0; i < n; i++ {
			rmsNorm(xb[i*c.Dim:(i+1)*c.Dim], x[i*c.Dim:(i+1)*c.Dim], l.attnNorm, c.NormEps)
		}
		m.pool.matmuls(xb, n, []*matrix{l.wq, l.wk, l.wv}, [][]float32{q, k, v})
		addBias(q, l.bq)
		addBias(k, l.bk)
		addBias(v, l.bv)
		rot := rope
		if c.NeoxRope {
			rot = ropeNeox
		}
		swa := c.Window > 0 && c.SWALayers[li]
		table := cosSin
		if swa {
			table = cosSinSWA
		}
		for i := 0; i < n; i++ {
			cs := table[i*c.RopeDims : (i+1)*c.RopeDims]
			for h := 0; h < c.Heads; h++ {
				qh := q[i*qDim+h*c.HeadDim : i*qDim+(h+1)*c.HeadDim]
				if l.qNorm != nil {
					rmsNorm(qh, qh, l.qNorm, c.NormEps)
				}
				rot(qh, cs)
				if c.QScale != 0 {
					for d := range qh {
						qh[d] *= c.QScale
					}
				}
			}
			for h := 0; h < c.KVHeads; h++ {
				kh := k[i*kvDim+h*c.HeadDim : i*kvDim+(h+1)*c.HeadDim]
				if l.kNorm != nil {
					rmsNorm(kh, kh, l.kNorm, c.NormEps)
				}
				rot(kh, cs)
			}
		}
		// The cache holds f16 values, as llama.cpp's default KV cache does.
		for j, x := range k {
			cache.k[li][p0*kvDim+j] = roundF16(x)
		}
		for j, x := range v {
			cache.v[li][p0*kvDim+j] = roundF16(x)
		}
		window := 0
		if swa {
			window = c.Window
		}
		m.attention(att, q, cache.k[li], cache.v[li], p0, n, window)
		m.pool.matmul(tmp, l.wo, att, n)
		postNorm(tmp, l.attnPost, c.Dim, c.NormEps)
		for i := range x {
			x[i] += tmp[i]
		}
		for i := 0; i < n; i++ {
			rmsNorm(xb[i*c.Dim:(i+1)*c.Dim], x[i*c.Dim:(i+1)*c.Dim], l.ffnNorm, c.NormEps)
		}
		mm := m.pool.matmul
		if li == len(m.layers)-1 {
			mm = m.pool.matmulOut // see matmulOut
			mm(gate, l.wGate, xb, n)
			mm(up, l.wUp, xb, n)
		} else {
			m.pool.matmuls(xb, n, []*matrix{l.wGate, l.wUp}, [][]float32{gate, up})
		}
		if c.GeGLU {
			for i := range gate {
				gate[i] = geluF16(gate[i]) * up[i]
			}
		} else {
			swiglu(gate, up, c.FFN)
		}
		mm(tmp, l.wDown, gate, n)
		postNorm(tmp, l.ffnPost, c.Dim, c.NormEps)
		for i := range x {
			x[i] += tmp[i]
		}
	}
	cache.tokens = append(cache.tokens, tokens...)
	m.evaluated += n
	if firstLogit >= n {
		return nil, nil
	}
	rows := n - firstLogit
	for i := firstLogit; i < n; i++ {
		rmsNorm(xb[(i-firstLogit)*c.Dim:(i-firstLogit+1)*c.Dim], x[i*c.Dim:(i+1)*c.Dim], m.outputNorm, c.NormEps)
	}
	logits := make([]float32, rows*c.Vocab)
	m.pool.matmulOut(logits, m.output, xb[:rows*c.Dim], rows)
	if fc := c.FinalSoftcap; fc != 0 {
		inv := 1 / fc
		for i, v := range logits {
			logits[i] = fc * tanhf(v*inv)
		}
	}
	return logits, nil
}

// postNorm applies Gemma's RMSNorm to each row of x (rows of dim) in place;
// a nil weight leaves x.
func postNorm(x, w []float32, dim int, eps float32) {
	if w == nil {
		return
	}
	for i := 0; i < len(x)/dim; i++ {
		rmsNorm(x[i*dim:(i+1)*dim], x[i*dim:(i+1)*dim], w, eps)
	}
}

// geluF16 is ggml's GELU on the CPU (GGML_GELU_FP16): the tanh
// approximation looked up at x rounded to f16 (geluTable), and the
// identity and zero beyond ±10.
func geluF16(x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	return geluTable(roundF16(x))
}

// geluTable is ggml_table_gelu_f16's entry for the f16 value x: the tanh
// approximation rounded to f16, 1+a·x·x contracted by gcc into a fused
// multiply-add as it fills the table.
func geluTable(x float32) float32 {
	const sqrt2OverPi, coefA = float32(0.79788456080286535587989211986876), float32(0.044715)
	return roundF16(0.5 * x * (1 + tanhf(sqrt2OverPi*x*fma32(coefA*x, x, 1))))
}

// ropeTable returns cos, sin pairs for n positions from p0 with the given
// base and frequency scale, computed as ggml's rope cache does (theta
// multiplied up in float32, rope_freqs dividing it, YaRN's ramp between
// interpolation and extrapolation and its magnitude factor).
func (m *Model) ropeTable(p0, n int, base, freqScale float32) []float32 {
	c := m.cfg
	out := make([]float32, n*c.RopeDims)
	thetaScale := float32(math.Pow(float64(base), -2/float64(c.RopeDims)))
	var lo, hi float32
	if c.RopeExtFactor != 0 {
		// ggml_rope_yarn_corr_dims with beta_fast 32 and beta_slow 1.
		corr := func(rot float32) float32 {
			return float32(c.RopeDims) * logf(float32(c.RopeOrigCtx)/(rot*2*math.Pi)) / (2 * logf(base))
		}
		lo = max(0, float32(math.Floor(float64(corr(32)))))
		hi = min(float32(c.RopeDims-1), float32(math.Ceil(float64(corr(1)))))
	}
	for i := 0; i < n; i++ {
		theta := float32(p0 + i)
		for j := 0; j < c.RopeDims; j += 2 {
			extrap := theta
			if m.ropeFreqs != nil {
				extrap = theta / m.ropeFreqs[j/2]
			}
			t, mscale := freqScale*extrap, c.RopeAttnFactor
			if c.RopeExtFactor != 0 {
				y := (float32(j/2) - lo) / max(0.001, hi-lo)
				mix := (1 - min(1, max(0, y))) * c.RopeExtFactor
				t = fma32(t, 1-mix, extrap*mix) // as gcc contracts ggml's rope_yarn
				mscale *= fma32(0.1, logf(1/freqScale), 1)
			}
			out[i*c.RopeDims+j] = cosf(t) * mscale // glibc's, as ggml calls
			out[i*c.RopeDims+j+1] = sinf(t) * mscale
			theta *= thetaScale
		}
	}
	return out
}

// rope rotates adjacent pairs (x[2i], x[2i+1]) — ggml's "normal" rope, the
// layout llama.cpp uses for the llama architecture.
func rope(x, cs []float32) {
	for j := 0; j < len(cs); j += 2 {
		c, s := cs[j], cs[j+1]
		x0, x1 := x[j], x[j+1]
		x[j], x[j+1] = rotate(x0, x1, c, s)
	}
}

// ropeNeox rotates the pairs (x[i], x[i+len(cs)/2]) — ggml's NEOX rope,
// which llama.cpp uses for Qwen.
func ropeNeox(x, cs []float32) {
	half := len(cs) / 2
	for j := 0; j < half; j++ {
		c, s := cs[2*j], cs[2*j+1]
		x0, x1 := x[j], x[j+half]
		x[j], x[j+half] = rotate(x0, x1, c, s)
	}
}

// rotate is ggml's rotate_pairs as gcc compiles it (contracting the first
// product of each line into a fused multiply-add).
func rotate(x0, x1, c, s float32) (float32, float32) {
	return fma32(x0, c, -(x1 * s)), fma32(x0, s, x1*c)
}

// addBias adds b to every row of x (rows of len(b)); nil b adds nothing.
func addBias(x, b []float32) {
	if b == nil {
		return
	}
	for i := range x {
		x[i] += b[i%len(b)]
	}
}

// faTileQ is GGML_FA_TILE_Q: from this many query tokens in one batch on,
// llama.cpp's CPU flash attention switches to its tiled float32 kernel.
const faTileQ = 64

// attention computes causal softmax(q·k/sqrt(d))·v for n new tokens at
// positions p0.., (token, head) pairs split across threads. Keys and values
// come from the cache, which holds f16 values like llama.cpp's default KV
// cache.
//
// Numerics follow llama.cpp's CPU flash attention, which llama-server runs:
// batches of fewer than faTileQ tokens (decoding, short prompts) round the
// query to f16 and accumulate the values in an f16 online softmax, rounded
// after every update; larger batches compute in float32. Plain float32
// attention everywhere would differ from llama-server by a few 1e-3 in the
// log-probabilities of unlikely tokens. The cache's mode says which applies.
func (m *Model) attention(out, q, kc, vc []float32, p0, n, window int) {
	c := m.cfg
	qDim, kvDim, hd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.HeadDim
	group := c.Heads / c.KVHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	if c.QScale != 0 {
		scale = 1 // the queries carry it (see Config.QScale)
	}
	// With soft-capping ggml computes cap·tanh(q·k · scale/cap).
	softcap := c.AttnSoftcap
	if softcap != 0 {
		scale /= softcap
	}
	f16 := m.cache.mode == attnF16 || (m.cache.mode == attnPerBatch && n < faTileQ)
	if !f16 {
		m.cache.kt = faTransposeK(m.cache.kt, kc, kvDim, hd, p0+n)
	}
	kt := m.cache.kt
	m.pool.parallel(n*c.Heads, func(lo, hi int) {
		qh := make([]float32, hd)
		acc := make([]float32, hd)
		kq := new([faTileKV]float32)
		for job := lo; job < hi; job++ {
			// Token i attends to p0+i+1 keys: jobs alternate between the
			// batch's ends so the threads' contiguous shares weigh the same.
			i, h := job/c.Heads, job%c.Heads
			if i%2 == 0 {
				i /= 2
			} else {
				i = n - 1 - i/2
			}
			kh := h / group
			last := p0 + i
			first := 0 // llama.cpp's LLAMA_SWA_TYPE_STANDARD: keys with last-p < window
			if window > 0 {
				first = max(0, last-window+1)
			}
			copy(qh, q[i*qDim+h*hd:i*qDim+(h+1)*hd])
			clear(acc)
			o := out[i*qDim+h*hd : i*qDim+(h+1)*hd]
			if !f16 {
				attendTiled(o, qh, kt, vc, kvDim, kh*hd, first, last, scale, softcap, kq, acc)
				continue
			}
			for d, v := range qh {
				qh[d] = roundF16(v)
			}
			from := first*kvDim + kh*hd
			inv := 1 / f16Steps(acc, qh, kc[from:], vc[from:], kvDim, last-first+1, scale, softcap)
			for d := range o {
				o[d] = acc[d] * inv
			}
		}
	})
}

// resetCache empties the cache. A request must not start from a prefix that
// an earlier request left: the kernels group a batch's tokens by fours, so a
// token's keys and values differ in the last bits with the batch it was
// computed in, and an EvalRun's concurrent shards reach the model in a
// different order every run. Computing each request from an empty cache
// makes its numbers a function of the request alone (llama-server, which
// reuses prompts across requests by default, does not promise this).
func (m *Model) resetCache() {
	m.prepare(nil, 0, attnPerBatch)
}

// prepare makes the cache hold a prefix of seq computed in the given mode,
// keeping at most keep tokens of what it already has in common, and returns
// how many tokens it kept.
func (m *Model) prepare(seq []int, keep int, mode attnMode) int {
	if m.cache == nil {
		m.cache = &kvCache{k: make([][]float32, m.cfg.Layers), v: make([][]float32, m.cfg.Layers)}
	}
	if m.cache.mode != mode {
		m.cache.mode = mode
		keep = 0
	}
	common := 0
	for common < len(seq) && common < len(m.cache.tokens) && seq[common] == m.cache.tokens[common] {
		common++
	}
	common = min(common, keep)
	kvDim := m.cfg.KVHeads * m.cfg.HeadDim
	m.cache.tokens = m.cache.tokens[:common]
	for l := range m.cache.k {
		if len(m.cache.k[l]) > common*kvDim {
			m.cache.k[l] = m.cache.k[l][:common*kvDim]
			m.cache.v[l] = m.cache.v[l][:common*kvDim]
		}
	}
	return common
}
