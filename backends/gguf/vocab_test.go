package gguf

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// llamaCppSource returns the llama.cpp source tree that the npm package
// node-llama-cpp bundles, unpacked once by .ci/llama-cpp-bundle.sh into the
// user cache. Tests that need it skip, saying why, when it cannot be had.
func llamaCppSource(t testing.TB) string {
	t.Helper()
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	src := filepath.Join(cache, "glossobench", "llama.cpp-3.21.1", "src")
	if _, err := os.Stat(filepath.Join(src, "CMakeLists.txt")); err == nil {
		return src
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("llama.cpp's tokenizer vectors come from the npm package node-llama-cpp@3.21.1, and npm is not installed (.ci/run installs it)")
	}
	out, err := exec.Command("bash", "../../.ci/llama-cpp-bundle.sh").Output()
	if err != nil {
		t.Skipf("cannot unpack llama.cpp from npm package node-llama-cpp@3.21.1 (is the npm registry reachable?): %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// vocabCase is one test of llama.cpp's models/ggml-vocab-*.gguf.inp/.out.
type vocabCase struct {
	text string
	ids  []int
}

// readVocabCases reads a .inp/.out pair the way llama.cpp's
// tests/test-tokenizer-0.cpp does.
func readVocabCases(t *testing.T, gguf string) []vocabCase {
	t.Helper()
	inp, err := os.ReadFile(gguf + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(gguf + ".out")
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	var texts []string
	for s := string(inp); s != ""; {
		i := strings.Index(s, sep)
		if i < 0 {
			texts = append(texts, s)
			break
		}
		texts = append(texts, s[:i])
		s = s[i+len(sep):]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d inputs but %d outputs", gguf, len(texts), len(lines))
	}
	cases := make([]vocabCase, len(texts))
	for i, l := range lines {
		cases[i].text = texts[i]
		for _, f := range strings.Fields(l) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", gguf, i+1, err)
			}
			cases[i].ids = append(cases[i].ids, id)
		}
	}
	return cases
}

// Every vocabulary of llama.cpp's tokenizer test suite that a supported
// family uses gives llama.cpp's ids on every case (test-tokenizer-0 runs them
// with add_special and parse_special off).
func TestLlamaCppVocabVectors(t *testing.T) {
	src := llamaCppSource(t)
	supported := []string{"command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2", "llama-bpe",
		"llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder"}
	found, _ := filepath.Glob(filepath.Join(src, "models", "ggml-vocab-*.gguf.inp"))
	for _, inp := range found {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(inp), "ggml-vocab-"), ".gguf.inp")
		if !slices.Contains(supported, name) && name != "bert-bge" {
			t.Errorf("llama.cpp has vectors for vocabulary %s, which this test does not know", name)
		}
	}
	for _, name := range supported {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(src, "models", "ggml-vocab-"+name+".gguf")
			tk, err := OpenTokenizer(path)
			if err != nil {
				t.Fatal(err)
			}
			fails := 0
			for _, c := range readVocabCases(t, path) {
				if got := tk.Tokenize(c.text, false, false); !slices.Equal(got, c.ids) {
					fails++
					if fails <= 5 {
						t.Errorf("%q: got %v, llama.cpp %v", c.text, got, c.ids)
					}
				}
			}
			if fails > 5 {
				t.Errorf("%d cases differ in all", fails)
			}
		})
	}
}

// llamaTokenize returns the path of llama.cpp's llama-tokenize:
// $GLOSSOBENCH_LLAMA_TOKENIZE, or the build .ci/llama-cpp-bundle.sh
// llama-tokenize leaves in the cache; the test skips without one.
func llamaTokenize(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GLOSSOBENCH_LLAMA_TOKENIZE"); p != "" {
		return p
	}
	p := filepath.Join(llamaCppSource(t), "build", "bin", "llama-tokenize")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no llama-tokenize: set GLOSSOBENCH_LLAMA_TOKENIZE or build it with .ci/llama-cpp-bundle.sh llama-tokenize (.ci/run does)")
	}
	return p
}

// On Malay, Jawi, Thai, Vietnamese, Tamil and Chinese text
// (testdata/gguf/sea_text.jsonl, see make_sea_text.py) every supported
// vocabulary gives the ids llama.cpp's llama-tokenize gives, with BOS as
// the model adds it and special tokens parsed.
func TestTokenizeSEAMatchesLlamaCpp(t *testing.T) {
	bin := llamaTokenize(t)
	src := llamaCppSource(t)
	type seaText struct{ Lang, Source, Text string }
	texts := readJSONL[seaText](t, "sea_text.jsonl")
	langs := map[string]bool{}
	for _, s := range texts {
		langs[s.Lang] = true
	}
	for _, l := range []string{"ms", "jawi", "th", "vi", "ta", "zh"} {
		if !langs[l] {
			t.Fatalf("sea_text.jsonl has no %s text", l)
		}
	}
	dir := t.TempDir()
	for _, name := range []string{"command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2", "llama-bpe",
		"llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(src, "models", "ggml-vocab-"+name+".gguf")
			tk, err := OpenTokenizer(path)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range texts {
				file := filepath.Join(dir, strconv.Itoa(i)+".txt")
				if err := os.WriteFile(file, []byte(s.Text), 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(bin, "-m", path, "-f", file, "--ids", "--no-escape", "--log-disable").Output()
				if err != nil {
					t.Fatalf("llama-tokenize on %s text %d: %v", s.Lang, i, err)
				}
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				var want []int
				for _, f := range strings.FieldsFunc(lines[len(lines)-1], func(r rune) bool { return r == '[' || r == ']' || r == ',' || r == ' ' }) {
					id, err := strconv.Atoi(f)
					if err != nil {
						t.Fatalf("llama-tokenize printed %q", lines[len(lines)-1])
					}
					want = append(want, id)
				}
				if got := tk.Tokenize(s.Text, tk.AddsBOS(), true); !slices.Equal(got, want) {
					t.Errorf("%s text %d (%s): got %v, llama-tokenize %v", s.Lang, i, s.Source, got, want)
				}
			}
		})
	}
}

// Byte-level BPE loses nothing: every SEA text decodes back from its ids
// under every supported vocabulary (SentencePiece ones add the prefix space).
func TestSEATextRoundTrips(t *testing.T) {
	src := llamaCppSource(t)
	type seaText struct{ Lang, Source, Text string }
	texts := readJSONL[seaText](t, "sea_text.jsonl")
	for _, name := range []string{"command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2", "llama-bpe",
		"llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder"} {
		tk, err := OpenTokenizer(filepath.Join(src, "models", "ggml-vocab-"+name+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range texts {
			want := s.Text
			if !tk.bpeModel && tk.addSpacePrefix {
				want = " " + want
			}
			if got := tk.Decode(tk.Tokenize(s.Text, false, false)); got != want {
				t.Errorf("%s: %s text %d decodes to %q", name, s.Lang, i, got)
			}
		}
	}
}

// Every pre-tokenizer cuts any text, valid UTF-8 or not, into non-empty
// pieces that cover it exactly, and GPT-2's byte map round-trips any bytes.
func FuzzPreTokenizers(f *testing.F) {
	for _, s := range []string{"", "Hello world!", "  \n\t 123456 's 'LL", "Selamat pagi \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35 \u4f60\u597d\u3000 x", "\xff\xc3(\xe2\x82", "\r\n\r\n  \u00a0", "a'b'\u0130ll 1\u0661\u0662"} {
		f.Add(s)
	}
	names := []string{"default", "llama3", "qwen2", "qwen35", "gpt-2", "starcoder", "falcon", "deepseek-llm", "deepseek-coder", "gemma4"}
	pres := make([]preTokenizer, len(names))
	for i, n := range names {
		var err error
		if pres[i], err = preTokenizerFor(n); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		cps := cptsFromUTF8(s)
		for i, p := range pres {
			total := 0
			for _, n := range p.split(cps) {
				if n <= 0 {
					t.Fatalf("%s: empty piece in %q", names[i], s)
				}
				total += n
			}
			if total != len(cps) {
				t.Fatalf("%s: pieces cover %d of %d code points of %q", names[i], total, len(cps), s)
			}
		}
		if got := byteDecode(byteEncode([]byte(s))); got != s {
			t.Fatalf("byte map round trip of %q gives %q", s, got)
		}
	})
}
