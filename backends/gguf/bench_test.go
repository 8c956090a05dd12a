package gguf

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchThreads is 2 (the comparison point) unless
// GLOSSOBENCH_BENCH_THREADS says otherwise.
func benchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("GLOSSOBENCH_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 2
}

// benchModel returns the path of a benchmark model: the tiny model, or a
// random-weight llama of dim 768 and 12 layers written (once) under the temp
// directory, where testdata/gguf/bench_llama_server.py finds it too.
func benchModel(b *testing.B, name string) string {
	b.Helper()
	var typ TensorType
	switch name {
	case "tiny":
		return tinyPath
	case "random768-f32":
		typ = TypeF32
	case "random768-q8_0":
		typ = TypeQ8_0
	default:
		b.Fatalf("unknown bench model %s", name)
	}
	path := filepath.Join(os.TempDir(), "glossobench-gguf-bench", name+".gguf")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	data := randomModel(b, modelSpec{dim: 768, layers: 12, heads: 12, kvHeads: 4, ffn: 2048, ctx: 1024, typ: typ, seed: 768})
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
	return path
}

var defaultBenchModels = []string{"tiny", "random768-f32", "random768-q8_0"}

// benchModels are the models the benchmarks run on: GLOSSOBENCH_BENCH_MODELS
// (comma-separated GGUF paths, as testdata/gguf/bench_compare.py passes them)
// or the default three.
func benchModels() []string {
	if s := os.Getenv("GLOSSOBENCH_BENCH_MODELS"); s != "" {
		return strings.Split(s, ",")
	}
	return defaultBenchModels
}

// benchModelPath resolves a benchModels entry: a path, or a default name.
func benchModelPath(b *testing.B, name string) string {
	if strings.HasSuffix(name, ".gguf") {
		return name
	}
	return benchModel(b, name)
}

// benchName is the sub-benchmark name of a benchModels entry.
func benchName(name string) string {
	return strings.TrimSuffix(filepath.Base(name), ".gguf")
}

// TestWriteBenchModel writes the dim-1024 random F32 llama that
// testdata/gguf/bench_compare.py quantises with llama-quantize, to the path
// GLOSSOBENCH_WRITE_BENCH_MODEL names; without it the test skips.
func TestWriteBenchModel(t *testing.T) {
	path := os.Getenv("GLOSSOBENCH_WRITE_BENCH_MODEL")
	if path == "" {
		t.Skip("GLOSSOBENCH_WRITE_BENCH_MODEL not set")
	}
	data := randomModel(t, modelSpec{dim: 1024, layers: 12, heads: 16, kvHeads: 4, ffn: 2816, ctx: 1024, typ: TypeF32, seed: 1024})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchPrompt is 128 tokens of ordinary text.
func benchPrompt(m *Model) []int {
	toks := m.tok.Encode("Once upon a time, Tom had a red cat. The cat sat on the mat. One day the cat saw a dog. Selamat pagi, apa khabar? Saya suka makan nasi lemak. "+
		"Question: What is the capital of France?\nAnswer: Paris\nQuestion: What is 12 plus 7?\nAnswer: 19\nCount: 2, 4, 6, 8, 10, 12\n"+
		"The opposite of hot is cold. The capital of Egypt is Cairo. Anna and the fox went home and they were happy.", true)
	for len(toks) < 128 {
		toks = append(toks, toks[1:]...)
	}
	return toks[:128]
}

// BenchmarkPromptProcessing measures a 128-token prompt from an empty cache
// (llama-bench's pp128), reported as tokens/s.
func BenchmarkPromptProcessing(b *testing.B) {
	for _, name := range benchModels() {
		b.Run(benchName(name), func(b *testing.B) {
			m, err := Open(benchModelPath(b, name), Options{Threads: benchThreads()})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			prompt := benchPrompt(m)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.prepare(nil, 0, attnPerBatch)
				if _, err := m.eval(bg, prompt, len(prompt)-1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(prompt)*b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkGeneration measures one decoding step at a time after a 16-token
// prompt, up to 128 tokens in the cache (llama-bench's tg), as tokens/s.
func BenchmarkGeneration(b *testing.B) {
	for _, name := range benchModels() {
		b.Run(benchName(name), func(b *testing.B) {
			m, err := Open(benchModelPath(b, name), Options{Threads: benchThreads()})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			prompt := benchPrompt(m)
			m.prepare(nil, 0, attnPerBatch)
			if _, err := m.eval(bg, prompt[:16], 15); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if len(m.cache.tokens) >= 128 {
					b.StopTimer()
					m.prepare(prompt, 16, attnPerBatch)
					b.StartTimer()
				}
				if _, err := m.eval(bg, []int{prompt[len(m.cache.tokens)%128]}, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
