package gguf

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
	// Arch is general.architecture: llama, qwen2 or qwen3.
	Arch string
	// NeoxRope rotates the pairs (x[i], x[i+RopeDims/2]) rather than
	// adjacent pairs: ggml's NEOX rope, which llama.cpp uses for Qwen.
	NeoxRope bool
	// PreScaleQ multiplies the queries by 1/sqrt(HeadDim) before attention
	// (llama.cpp's Phi-3 graph), which rounds differently in f16 attention.
	PreScaleQ bool
}

type layer struct {
	attnNorm, ffnNorm []float32
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
	if arch != "llama" && arch != "qwen2" && arch != "qwen3" && arch != "phi3" {
		return nil, fmt.Errorf("general.architecture %q is not supported (want llama, qwen2, qwen3 or phi3)", arch)
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
	c := Config{Arch: arch, NeoxRope: arch == "qwen2" || arch == "qwen3" || arch == "phi3", PreScaleQ: arch == "phi3"}
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
	if st, ok, err := f.metaString(arch + ".rope.scaling.type"); err != nil {
		return c, err
	} else if ok && st != "none" {
		if st != "linear" {
			return c, fmt.Errorf(arch+".rope.scaling.type %q is not supported (only none and linear)", st)
		}
		factor, err := f.metaFloat(arch+".rope.scaling.factor", 1)
		if err != nil {
			return c, err
		}
		if factor > 0 {
			c.RopeFreqScale = float32(1 / factor)
		}
	}
	return c, nil
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
				if graphTensors[part] || (m.cfg.Arch == "qwen3" && (part == "attn_q_norm.weight" || part == "attn_k_norm.weight")) {
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
		if c.Arch == "qwen3" {
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
	xb := make([]float32, n*c.Dim)
	q := make([]float32, n*qDim)
	k := make([]float32, n*kvDim)
	v := make([]float32, n*kvDim)
	att := make([]float32, n*qDim)
	tmp := make([]float32, n*c.Dim)
	gate := make([]float32, n*c.FFN)
	up := make([]float32, n*c.FFN)
	cosSin := m.ropeTable(p0, n)

	for li := range m.layers {
		l := &m.layers[li]
		for i := 0; i < n; i++ {
			rmsNorm(xb[i*c.Dim:(i+1)*c.Dim], x[i*c.Dim:(i+1)*c.Dim], l.attnNorm, c.NormEps)
		}
		m.pool.matmul(q, l.wq, xb, n)
		m.pool.matmul(k, l.wk, xb, n)
		m.pool.matmul(v, l.wv, xb, n)
		addBias(q, l.bq)
		addBias(k, l.bk)
		addBias(v, l.bv)
		rot := rope
		if c.NeoxRope {
			rot = ropeNeox
		}
		for i := 0; i < n; i++ {
			cs := cosSin[i*c.RopeDims : (i+1)*c.RopeDims]
			for h := 0; h < c.Heads; h++ {
				qh := q[i*qDim+h*c.HeadDim : i*qDim+(h+1)*c.HeadDim]
				if l.qNorm != nil {
					rmsNorm(qh, qh, l.qNorm, c.NormEps)
				}
				rot(qh, cs)
				if c.PreScaleQ {
					scale := float32(1 / math.Sqrt(float64(c.HeadDim)))
					for d := range qh {
						qh[d] *= scale
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
		m.attention(att, q, cache.k[li], cache.v[li], p0, n)
		m.pool.matmul(tmp, l.wo, att, n)
		for i := range x {
			x[i] += tmp[i]
		}
		for i := 0; i < n; i++ {
			rmsNorm(xb[i*c.Dim:(i+1)*c.Dim], x[i*c.Dim:(i+1)*c.Dim], l.ffnNorm, c.NormEps)
		}
		m.pool.matmul(gate, l.wGate, xb, n)
		m.pool.matmul(up, l.wUp, xb, n)
		for i := range gate {
			gate[i] = silu(gate[i]) * up[i]
		}
		m.pool.matmul(tmp, l.wDown, gate, n)
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
	m.pool.matmul(logits, m.output, xb[:rows*c.Dim], rows)
	return logits, nil
}

// ropeTable returns cos, sin pairs for n positions from p0, computed as
// ggml's rope cache does (theta multiplied up in float32).
func (m *Model) ropeTable(p0, n int) []float32 {
	c := m.cfg
	out := make([]float32, n*c.RopeDims)
	thetaScale := float32(math.Pow(float64(c.RopeBase), -2/float64(c.RopeDims)))
	for i := 0; i < n; i++ {
		theta := float32(p0 + i)
		for j := 0; j < c.RopeDims; j += 2 {
			t := theta * c.RopeFreqScale
			if m.ropeFreqs != nil {
				t = theta / m.ropeFreqs[j/2] * c.RopeFreqScale
			}
			out[i*c.RopeDims+j] = float32(math.Cos(float64(t)))
			out[i*c.RopeDims+j+1] = float32(math.Sin(float64(t)))
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
		x[j] = x0*c - x1*s
		x[j+1] = x0*s + x1*c
	}
}

// ropeNeox rotates the pairs (x[i], x[i+len(cs)/2]) — ggml's NEOX rope,
// which llama.cpp uses for Qwen.
func ropeNeox(x, cs []float32) {
	half := len(cs) / 2
	for j := 0; j < half; j++ {
		c, s := cs[2*j], cs[2*j+1]
		x0, x1 := x[j], x[j+half]
		x[j] = x0*c - x1*s
		x[j+half] = x0*s + x1*c
	}
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
func (m *Model) attention(out, q, kc, vc []float32, p0, n int) {
	c := m.cfg
	qDim, kvDim, hd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.HeadDim
	group := c.Heads / c.KVHeads
	scale := float32(1 / math.Sqrt(float64(hd)))
	if c.PreScaleQ {
		scale = 1 // the queries carry it (see Config.PreScaleQ)
	}
	f16 := m.cache.mode == attnF16 || (m.cache.mode == attnPerBatch && n < faTileQ)
	m.pool.parallel(n*c.Heads, func(lo, hi int) {
		qh := make([]float32, hd)
		acc := make([]float32, hd)
		scores := make([]float32, p0+n)
		for job := lo; job < hi; job++ {
			i, h := job/c.Heads, job%c.Heads
			kh := h / group
			last := p0 + i
			copy(qh, q[i*qDim+h*hd:i*qDim+(h+1)*hd])
			clear(acc)
			o := out[i*qDim+h*hd : i*qDim+(h+1)*hd]
			if !f16 {
				maxS := float32(math.Inf(-1))
				for p := 0; p <= last; p++ {
					s := dot(qh, kc[p*kvDim+kh*hd:p*kvDim+(kh+1)*hd]) * scale
					scores[p] = s
					maxS = max(maxS, s)
				}
				var sum float32
				for p := 0; p <= last; p++ {
					e := float32(math.Exp(float64(scores[p] - maxS)))
					sum += e
					vv := vc[p*kvDim+kh*hd : p*kvDim+(kh+1)*hd]
					for d := range acc {
						acc[d] += e * vv[d]
					}
				}
				for d := range o {
					o[d] = acc[d] / sum
				}
				continue
			}
			for d, v := range qh {
				qh[d] = roundF16(v)
			}
			maxS, sum := float32(math.Inf(-1)), float32(0)
			for p := 0; p <= last; p++ {
				s := dot(qh, kc[p*kvDim+kh*hd:p*kvDim+(kh+1)*hd]) * scale
				ms, vs := float32(1), float32(1)
				if s > maxS {
					ms = float32(math.Exp(float64(maxS - s)))
					maxS = s
					for d := range acc {
						acc[d] = roundF16(acc[d] * ms)
					}
				} else {
					vs = float32(math.Exp(float64(s - maxS)))
				}
				vv := vc[p*kvDim+kh*hd : p*kvDim+(kh+1)*hd]
				for d := range acc {
					// One rounding to float32 as ggml's fused multiply-add, then to f16.
					acc[d] = roundF16(float32(float64(acc[d]) + float64(vv[d])*float64(vs)))
				}
				sum = sum*ms + vs
			}
			inv := 1 / sum
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
