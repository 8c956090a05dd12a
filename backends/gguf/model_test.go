package gguf

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// logitsOf evaluates tokens from an empty cache with llama-server's own
// attention rule (attnPerBatch).
func logitsOf(t *testing.T, data []byte, tokens []int) []float32 {
	t.Helper()
	return logitsIn(t, data, tokens, attnPerBatch)
}

// logitsIn is logitsOf with the attention in the given mode.
func logitsIn(t *testing.T, data []byte, tokens []int, mode attnMode) []float32 {
	t.Helper()
	m, err := newModel(data, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	m.prepare(nil, 0, mode)
	l, err := m.eval(bg, tokens, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

var probe = []int{1, 352, 452, 349, 299, 262, 361, 320, 426, 484, 438, 428, 432, 287, 460, 13}

// replaceTensors re-encodes data with some tensors (and metadata) replaced.
func replaceTensors(t *testing.T, data []byte, meta func([]kv) []kv, repl map[string]tensorSpec) []byte {
	t.Helper()
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var m []kv
	for _, k := range f.Keys {
		m = append(m, kv{k, f.Metadata[k]})
	}
	if meta != nil {
		m = meta(m)
	}
	var ts []tensorSpec
	for _, ti := range f.Tensors {
		if r, ok := repl[ti.Name]; ok {
			ts = append(ts, r)
			delete(repl, ti.Name)
			continue
		}
		ts = append(ts, tensorSpec{ti.Name, ti.Dims, ti.Type, ti.Data})
	}
	for _, r := range repl {
		ts = append(ts, r)
	}
	return writeGGUF(m, ts)
}

func setMeta(key string, val any) func([]kv) []kv {
	return func(m []kv) []kv {
		for i := range m {
			if m[i].key == key {
				m[i].val = val
				return m
			}
		}
		return append(m, kv{key, val})
	}
}

// Grouped-query attention equals full attention with each K/V head repeated
// for its group of query heads.
func TestGQAEqualsRepeatedHeads(t *testing.T) {
	spec := modelSpec{dim: 64, layers: 2, heads: 4, kvHeads: 2, ffn: 96, ctx: 64, typ: TypeF32, seed: 3}
	gqa := randomModel(t, spec)
	f, _ := Parse(gqa)
	hd, group := spec.dim/spec.heads, spec.heads/spec.kvHeads
	repl := map[string]tensorSpec{}
	for l := 0; l < spec.layers; l++ {
		for _, w := range []string{"attn_k", "attn_v"} {
			name := "blk." + string(rune('0'+l)) + "." + w + ".weight"
			src := f.Tensor(name).Data
			rowBytes := spec.dim * 4
			var out []byte
			for h := 0; h < spec.heads; h++ {
				kh := h / group
				out = append(out, src[kh*hd*rowBytes:(kh+1)*hd*rowBytes]...)
			}
			repl[name] = tensorSpec{name, []uint64{uint64(spec.dim), uint64(spec.heads * hd)}, TypeF32, out}
		}
	}
	full := replaceTensors(t, gqa, setMeta("llama.attention.head_count_kv", uint32(spec.heads)), repl)
	if d := maxDiff(logitsOf(t, gqa, probe), logitsOf(t, full, probe)); d > 1e-4 {
		t.Errorf("GQA and repeated-head logits differ by %g", d)
	}
}

// A model without output.weight uses token_embd.weight as its output.
func TestTiedOutput(t *testing.T) {
	spec := modelSpec{dim: 32, layers: 1, heads: 2, kvHeads: 1, ffn: 64, ctx: 64, typ: TypeF32, seed: 5, tied: true}
	tied := randomModel(t, spec)
	f, _ := Parse(tied)
	e := f.Tensor("token_embd.weight")
	untied := replaceTensors(t, tied, nil, map[string]tensorSpec{"output.weight": {"output.weight", e.Dims, TypeF32, e.Data}})
	if d := maxDiff(logitsOf(t, tied, probe), logitsOf(t, untied, probe)); d != 0 {
		t.Errorf("tied and explicit output differ by %g", d)
	}
}

// F16 and Q8_0 weights decode to within their rounding of the originals,
// and a quantised model runs.
func TestQuantisedWeights(t *testing.T) {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(math.Sin(float64(i))) * float32(i%7)
	}
	for _, typ := range []TensorType{TypeF16, TypeQ8_0} {
		m := newMatrix(&TensorInfo{Name: "w", Dims: []uint64{32, 2}, Type: typ, Data: encode(x, typ)})
		buf := make([]float32, 32)
		for r := 0; r < 2; r++ {
			row := m.row(r, buf)
			var amax float64
			for _, v := range x[r*32 : r*32+32] {
				amax = max(amax, math.Abs(float64(v)))
			}
			tol := amax / 127 // Q8_0 step; F16 is far finer
			for i, v := range row {
				if math.Abs(float64(v-x[r*32+i])) > tol {
					t.Fatalf("%s row %d col %d: decoded %v, want %v", typ, r, i, v, x[r*32+i])
				}
			}
		}
	}
	// Q4_0: one block with scale 1: low nibbles are elements 0..15, high nibbles 16..31, both offset by 8.
	blk := make([]byte, 18)
	binary.LittleEndian.PutUint16(blk, 0x3c00)
	for j := 0; j < 16; j++ {
		blk[2+j] = byte(j) | byte(15-j)<<4
	}
	row := newMatrix(&TensorInfo{Name: "q4", Dims: []uint64{32, 1}, Type: TypeQ4_0, Data: blk}).row(0, make([]float32, 32))
	for j := 0; j < 16; j++ {
		if row[j] != float32(j-8) || row[j+16] != float32(7-j) {
			t.Fatalf("Q4_0 decode: %v", row)
		}
	}
	for _, typ := range []TensorType{TypeF16, TypeQ8_0} {
		spec := modelSpec{dim: 64, layers: 1, heads: 2, kvHeads: 2, ffn: 64, ctx: 64, typ: typ, seed: 9}
		qdata := randomModel(t, spec)
		q := logitsOf(t, qdata, probe)
		// Decoding one token at a time takes the matrix-vector path.
		qm, _ := newModel(qdata, Options{Threads: 2})
		qm.prepare(nil, 0, attnPerBatch)
		for i, tk := range probe {
			l, err := qm.eval(bg, []int{tk}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxDiff(l, q[i*qm.cfg.Vocab:(i+1)*qm.cfg.Vocab]); d > oneTokenTolerance(typ) {
				t.Fatalf("%s position %d: one-token logits differ from the batch by %g", typ, i, d)
			}
		}
		spec.typ = TypeF32
		f := logitsOf(t, randomModel(t, spec), probe)
		if d := maxDiff(q, f); d > 0.5 || d == 0 {
			t.Errorf("%s model logits differ from F32 by %g", typ, d)
		}
	}
	for _, v := range []float32{0, 1, -2.5, 65504, 6.1e-5, 1e-7, -0.33325195} {
		if got := f16ToF32(f32ToF16(v)); math.Abs(float64(got-v)) > math.Abs(float64(v))/1024+6e-8 {
			t.Errorf("f16 round trip of %v = %v", v, got)
		}
	}
}

// Bad files give errors that name the problem, never a panic.
func TestBadFiles(t *testing.T) {
	tiny := readTiny(t)
	f, _ := Parse(tiny)
	q := f.Tensor("blk.0.attn_q.weight")
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"not gguf", []byte("GGML0000000000000000000000000000"), "not a GGUF file"},
		{"header only", tiny[:20], "truncated"},
		{"cut in metadata", tiny[:3000], "truncated"},
		{"cut in tensor data", tiny[:len(tiny)-100], "beyond the end of the file"},
		{"version 1", append([]byte("GGUF\x01\x00\x00\x00"), tiny[8:]...), "version 1"},
		{"unknown architecture", rewrite(t, tiny, setMeta("general.architecture", "mamba")), "mamba"},
		{"unknown tokenizer", rewrite(t, tiny, setMeta("tokenizer.ggml.model", "gpt2")), "gpt2"},
		{"missing field", rewrite(t, tiny, func(m []kv) []kv {
			out := m[:0]
			for _, p := range m {
				if p.key != "llama.embedding_length" {
					out = append(out, p)
				}
			}
			return out
		}), "llama.embedding_length"},
		{"wrong field type", rewrite(t, tiny, setMeta("llama.block_count", "two")), "llama.block_count"},
		{"bad head count", rewrite(t, tiny, setMeta("llama.attention.head_count_kv", uint32(3))), "head_count_kv"},
		{"shape mismatch", replaceTensors(t, tiny, nil, map[string]tensorSpec{q.Name: {q.Name, []uint64{32, 128}, TypeF32, q.Data}}), "blk.0.attn_q.weight"},
		{"unknown tensor type", replaceTensors(t, tiny, nil, map[string]tensorSpec{q.Name: {q.Name, q.Dims, TensorType(99), q.Data}}), "blk.0.attn_q.weight"},
		{"missing tensor", replaceTensors(t, tiny, nil, map[string]tensorSpec{q.Name: {"blk.0.attn_qq.weight", q.Dims, q.Type, q.Data}}), "blk.0.attn_q.weight is missing"},
		{"vocab mismatch", rewrite(t, tiny, setMeta("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>"})), "tokenizer.ggml.scores"},
	}
	for _, c := range cases {
		_, err := newModel(c.data, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	if _, err := Open("no/such/file.gguf", Options{}); err == nil || !strings.Contains(err.Error(), "no/such/file.gguf") {
		t.Errorf("missing file: err = %v", err)
	}
	// Every truncation is an error, and none panics.
	for n := 0; n < len(tiny); n += 997 {
		if _, err := newModel(tiny[:n], Options{}); err == nil {
			t.Fatalf("file cut at %d bytes loaded", n)
		}
	}
}

// FuzzOpen feeds arbitrary bytes to the loader; it must return an error or a
// model that can tokenize and score, never panic.
func FuzzOpen(f *testing.F) {
	// A small vocabulary keeps the input small enough to mutate quickly.
	small := randomModel(f, modelSpec{dim: 32, layers: 1, heads: 2, kvHeads: 1, ffn: 32, ctx: 16, typ: TypeQ8_0, seed: 1,
		vocab: []string{"<unk>", "<s>", "</s>", "<0x41>", "<0x20>", "\u2581a", "a", "\u2581", "b", "\u2581b", "ab", "Apa"}})
	f.Add(small)
	f.Add(small[:200])
	f.Add(small[:len(small)/2])
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := newModel(data, Options{Threads: 1})
		if err != nil {
			return
		}
		m.Tokenizer().Encode("Apa khabar? <s> 123", true)
		m.LogLikelihood(bg, []backends.LLRequest{{Context: "a", Continuation: " b"}})
	})
}

// FuzzParse feeds arbitrary bytes to the GGUF parser alone.
func FuzzParse(f *testing.F) {
	meta := []kv{{"general.architecture", "llama"}, {"a.u32", uint32(7)}, {"a.f32", float32(1.5)}, {"a.bool", true},
		{"a.strs", []string{"x", "", "yz"}}, {"a.f32s", []float32{1, 2}}, {"a.i32s", []int32{-1, 3}}}
	f.Add(writeGGUF(meta, []tensorSpec{{"t", []uint64{32, 2}, TypeQ8_0, make([]byte, 68)}, {"u", []uint64{4}, TypeF32, make([]byte, 16)}}))
	f.Add(writeGGUF(meta, nil))
	f.Add([]byte("GGUF\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		for _, ti := range file.Tensors {
			if n, _ := tensorBytes(&ti); uint64(len(ti.Data)) != n {
				t.Fatalf("tensor %s: %d data bytes for a %d-byte shape", ti.Name, len(ti.Data), n)
			}
		}
	})
}

// oneTokenTolerance bounds how far one-token logits may differ from the
// batch's. The two paths add their float32 products in different orders;
// where an activation lies within that rounding of a step of the Q8
// formats the activations are rounded to (roundActs), the two paths round
// it to neighbouring steps, ~1% of the block's largest value, and the
// logits move by up to a few 1e-2. llama.cpp's batch and one-token paths
// differ in the same way.
func oneTokenTolerance(typ TensorType) float64 {
	switch actKindOf(typ) {
	case actQ8_0, actQ8_1, actQ8_K:
		return 0.05
	}
	return 1e-3
}
