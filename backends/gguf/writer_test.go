package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// kv is one metadata pair for writeGGUF, kept ordered.
type kv struct {
	key string
	val any
}

// tensorSpec is a tensor for writeGGUF: data already encoded in typ.
type tensorSpec struct {
	name string
	dims []uint64
	typ  TensorType
	data []byte
}

// writeGGUF encodes a GGUF v3 file with 32-byte alignment.
func writeGGUF(meta []kv, tensors []tensorSpec) []byte {
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	str := func(s string) { le(uint64(len(s))); b.WriteString(s) }
	le(uint32(0x46554747))
	le(uint32(3))
	le(uint64(len(tensors)))
	le(uint64(len(meta)))
	for _, p := range meta {
		str(p.key)
		switch v := p.val.(type) {
		case string:
			le(uint32(typeString))
			str(v)
		case uint32:
			le(uint32(typeUint32))
			le(v)
		case int32:
			le(uint32(typeInt32))
			le(v)
		case float32:
			le(uint32(typeFloat32))
			le(v)
		case bool:
			le(uint32(typeBool))
			le(v)
		case []string:
			le(uint32(typeArray))
			le(uint32(typeString))
			le(uint64(len(v)))
			for _, s := range v {
				str(s)
			}
		case []float32:
			le(uint32(typeArray))
			le(uint32(typeFloat32))
			le(uint64(len(v)))
			le(v)
		case []int32:
			le(uint32(typeArray))
			le(uint32(typeInt32))
			le(uint64(len(v)))
			le(v)
		default:
			panic(fmt.Sprintf("writeGGUF: unsupported value %T for %s", v, p.key))
		}
	}
	var off uint64
	for _, t := range tensors {
		str(t.name)
		le(uint32(len(t.dims)))
		for _, d := range t.dims {
			le(d)
		}
		le(uint32(t.typ))
		le(off)
		off += (uint64(len(t.data)) + 31) / 32 * 32
	}
	pad := func() {
		for b.Len()%32 != 0 {
			b.WriteByte(0)
		}
	}
	pad()
	for _, t := range tensors {
		b.Write(t.data)
		pad()
	}
	return b.Bytes()
}

// encode stores float32 values as typ (F32, F16 or Q8_0).
func encode(x []float32, typ TensorType) []byte {
	var b bytes.Buffer
	switch typ {
	case TypeF32:
		binary.Write(&b, binary.LittleEndian, x)
	case TypeF16:
		for _, v := range x {
			binary.Write(&b, binary.LittleEndian, f32ToF16(v))
		}
	case TypeQ8_0:
		for i := 0; i < len(x); i += 32 {
			blk := x[i : i+32]
			var amax float32
			for _, v := range blk {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			d := amax / 127
			id := float32(0)
			if d != 0 {
				id = 1 / d
			}
			binary.Write(&b, binary.LittleEndian, f32ToF16(d))
			for _, v := range blk {
				b.WriteByte(byte(int8(math.Round(float64(v * id)))))
			}
		}
	default:
		panic("encode: unsupported type")
	}
	return b.Bytes()
}

// modelSpec describes a llama model for randomModel.
type modelSpec struct {
	dim, layers, heads, kvHeads, ffn, ctx int
	typ                                   TensorType
	tied                                  bool
	seed                                  uint64
	extraMeta                             []kv
	vocab                                 []string // when set, a tokenizer of these pieces replaces the tiny model's
}

// randomModel writes a llama GGUF with random weights and the tiny model's
// tokenizer, so benchmarks and tests can use models of any shape.
func randomModel(t testing.TB, s modelSpec) []byte {
	t.Helper()
	tiny := readTiny(t)
	f, err := Parse(tiny)
	if err != nil {
		t.Fatal(err)
	}
	vocab := len(f.Metadata["tokenizer.ggml.tokens"].([]string))
	if s.vocab != nil {
		vocab = len(s.vocab)
	}
	hd := s.dim / s.heads
	meta := []kv{
		{"general.architecture", "llama"}, {"general.name", "random"},
		{"llama.context_length", uint32(s.ctx)}, {"llama.embedding_length", uint32(s.dim)},
		{"llama.block_count", uint32(s.layers)}, {"llama.feed_forward_length", uint32(s.ffn)},
		{"llama.attention.head_count", uint32(s.heads)}, {"llama.attention.head_count_kv", uint32(s.kvHeads)},
		{"llama.rope.dimension_count", uint32(hd)}, {"llama.rope.freq_base", float32(10000)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
	}
	if s.vocab != nil {
		scores, types := make([]float32, vocab), make([]int32, vocab)
		for i, p := range s.vocab {
			scores[i], types[i] = -float32(i), tokNormal
			if i < 3 {
				types[i] = []int32{tokUnknown, tokControl, tokControl}[i]
			} else if len(p) == 6 && p[:3] == "<0x" {
				types[i] = tokByte
			}
		}
		meta = append(meta, kv{"tokenizer.ggml.model", "llama"}, kv{"tokenizer.ggml.tokens", s.vocab},
			kv{"tokenizer.ggml.scores", scores}, kv{"tokenizer.ggml.token_type", types})
	} else {
		for _, k := range f.Keys {
			if len(k) > 10 && k[:10] == "tokenizer." {
				meta = append(meta, kv{k, f.Metadata[k]})
			}
		}
	}
	meta = append(meta, s.extraMeta...)
	rng := rand.New(rand.NewPCG(s.seed, 1))
	mat := func(name string, cols, rows int) tensorSpec {
		x := make([]float32, cols*rows)
		sd := float32(1 / math.Sqrt(float64(cols)))
		for i := range x {
			x[i] = float32(rng.NormFloat64()) * sd
		}
		return tensorSpec{name, []uint64{uint64(cols), uint64(rows)}, s.typ, encode(x, s.typ)}
	}
	ones := func(name string, n int) tensorSpec {
		x := make([]float32, n)
		for i := range x {
			x[i] = 1 + 0.1*float32(rng.NormFloat64())
		}
		return tensorSpec{name, []uint64{uint64(n)}, TypeF32, encode(x, TypeF32)}
	}
	ts := []tensorSpec{mat("token_embd.weight", s.dim, vocab), ones("output_norm.weight", s.dim)}
	if !s.tied {
		ts = append(ts, mat("output.weight", s.dim, vocab))
	}
	kvDim := s.kvHeads * hd
	for l := 0; l < s.layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts, ones(p+"attn_norm.weight", s.dim), mat(p+"attn_q.weight", s.dim, s.dim),
			mat(p+"attn_k.weight", s.dim, kvDim), mat(p+"attn_v.weight", s.dim, kvDim),
			mat(p+"attn_output.weight", s.dim, s.dim), ones(p+"ffn_norm.weight", s.dim),
			mat(p+"ffn_gate.weight", s.dim, s.ffn), mat(p+"ffn_up.weight", s.dim, s.ffn),
			mat(p+"ffn_down.weight", s.ffn, s.dim))
	}
	return writeGGUF(meta, ts)
}

const tinyPath = "../../testdata/models/tiny-llama/tiny-llama.gguf"

func readTiny(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(tinyPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rewrite re-encodes a parsed file with metadata changed by edit, keeping
// the tensors; used to add a chat template or break a field.
func rewrite(t testing.TB, data []byte, edit func([]kv) []kv) []byte {
	t.Helper()
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var meta []kv
	for _, k := range f.Keys {
		meta = append(meta, kv{k, f.Metadata[k]})
	}
	meta = edit(meta)
	var ts []tensorSpec
	for _, ti := range f.Tensors {
		ts = append(ts, tensorSpec{ti.Name, ti.Dims, ti.Type, ti.Data})
	}
	return writeGGUF(meta, ts)
}

func TestWriterRoundTrip(t *testing.T) {
	tiny := readTiny(t)
	again := rewrite(t, tiny, func(m []kv) []kv { return m })
	if !bytes.Equal(tiny, again) {
		t.Fatalf("re-encoding the tiny model changed it (%d vs %d bytes)", len(tiny), len(again))
	}
}
