package gguf

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// templateConversations are the cases each template is rendered for: system
// and user, several turns, no generation prompt, and text the templates'
// trim filters and slicing must keep whole.
var templateConversations = []struct {
	name string
	msgs []backends.Message
	gen  bool
}{
	{"system+user", []backends.Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: "Apa khabar?"}}, true},
	{"multi-turn", []backends.Message{{Role: "system", Content: "Jawab dalam Bahasa Melayu."}, {Role: "user", Content: "Siapa nama awak?"},
		{Role: "assistant", Content: "Saya pembantu."}, {Role: "user", Content: "Terima kasih!"}}, true},
	{"no generation prompt", []backends.Message{{Role: "user", Content: "Hello"}}, false},
	{"unicode", []backends.Message{{Role: "user", Content: "  ڤد هاري اين \u200eไทย 中文\n"}, {Role: "assistant", Content: " Baik. "}, {Role: "user", Content: "Tamil: தமிழ்"}}, true},
}

// Every chat template in the llama.cpp source that node-llama-cpp bundles
// (models/templates/*.jinja: Llama 3.x, Qwen 2.5/3/3.5, Gemma 2/4, Mistral,
// Phi-3.5, SmolLM3, DeepSeek, Granite, GLM, Kimi, gpt-oss and the rest), and
// the small ones in backends/chattemplate/testdata, stored as the tiny
// model's tokenizer.chat_template, renders byte for byte what llama-server's
// /apply-template renders for the same file (started with --reasoning off,
// the thinking mode this backend uses); a case llama-server refuses must be
// refused here too.
func TestChatTemplatesMatchLlamaServer(t *testing.T) {
	server := llamaTool(t, "GLOSSOBENCH_LLAMA_SERVER_BIN", "llama-server")
	src := llamaCppSource(t)
	files, _ := filepath.Glob(filepath.Join(src, "models", "templates", "*.jinja"))
	if len(files) == 0 {
		t.Fatalf("no models/templates/*.jinja in %s", src)
	}
	own, _ := filepath.Glob("../chattemplate/testdata/*.jinja")
	files = append(files, own...)
	t.Setenv("LLAMA_ARG_REASONING", "off")
	dir := t.TempDir()
	base := readTiny(t)
	var matched []string
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".jinja")
		ok := t.Run(name, func(t *testing.T) {
			tmpl, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			checkTemplateAgainstServer(t, server, filepath.Join(dir, name+".gguf"), base, string(tmpl))
		})
		if ok {
			matched = append(matched, name)
		}
	}
	t.Logf("%d of %d templates render as llama-server does: %s", len(matched), len(files), strings.Join(matched, ", "))
}

// The templates of the families whose vocabularies llama.cpp ships, on a
// random model with that vocabulary (models/ggml-vocab-*.gguf): bos_token
// and eos_token are then the family's own control tokens (Llama 3's
// <|begin_of_text|>, Gemma's <bos>, Qwen's none), and the BOS cut follows
// the vocabulary's add_bos_token, as in llama-server.
func TestChatTemplatesWithTheirVocabularies(t *testing.T) {
	server := llamaTool(t, "GLOSSOBENCH_LLAMA_SERVER_BIN", "llama-server")
	src := llamaCppSource(t)
	t.Setenv("LLAMA_ARG_REASONING", "off")
	dir := t.TempDir()
	for _, c := range []struct {
		vocab     string
		templates []string
	}{
		{"llama-bpe", []string{"meta-llama-Llama-3.1-8B-Instruct", "meta-llama-Llama-3.2-3B-Instruct", "meta-llama-Llama-3.3-70B-Instruct", "deepseek-ai-DeepSeek-R1-Distill-Llama-8B", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use"}},
		{"qwen2", []string{"Qwen-Qwen2.5-7B-Instruct", "Qwen-Qwen3-0.6B", "Qwen-QwQ-32B", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "Qwen3-Coder"}},
		{"qwen35", []string{"Qwen3.5-4B"}},
		{"gemma-4", []string{"google-gemma-4-31B-it", "google-gemma-4-31B-it-interleaved", "google-gemma-2-2b-it"}},
		{"phi-3", []string{"microsoft-Phi-3.5-mini-instruct"}},
		{"command-r", []string{"CohereForAI-c4ai-command-r-plus-tool_use", "CohereForAI-c4ai-command-r7b-12-2024-tool_use"}},
		{"deepseek-llm", []string{"deepseek-ai-DeepSeek-V3.1"}},
	} {
		base := modelWithVocab(t, src, c.vocab, modelSpec{dim: 64, layers: 1, heads: 4, kvHeads: 2, ffn: 64, ctx: 256, typ: TypeF32, seed: 17, tied: true})
		for _, name := range c.templates {
			t.Run(c.vocab+"/"+name, func(t *testing.T) {
				tmpl, err := os.ReadFile(filepath.Join(src, "models", "templates", name+".jinja"))
				if err != nil {
					t.Fatal(err)
				}
				checkTemplateAgainstServer(t, server, filepath.Join(dir, c.vocab+"-"+name+".gguf"), base, string(tmpl))
			})
		}
	}
}

// modelWithVocab is spec's random llama model carrying the tokenizer of
// llama.cpp's models/ggml-vocab-NAME.gguf (spec.vocab is set from it).
func modelWithVocab(t *testing.T, src, name string, spec modelSpec) []byte {
	t.Helper()
	vf, err := os.ReadFile(filepath.Join(src, "models", "ggml-vocab-"+name+".gguf"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := Parse(vf)
	if err != nil {
		t.Fatal(err)
	}
	spec.vocab = v.Metadata["tokenizer.ggml.tokens"].([]string)
	return rewrite(t, randomModel(t, spec), func(m []kv) []kv {
		var out []kv
		for _, e := range m {
			if !strings.HasPrefix(e.key, "tokenizer.") {
				out = append(out, e)
			}
		}
		for _, k := range v.Keys {
			if strings.HasPrefix(k, "tokenizer.") && k != "tokenizer.chat_template" {
				out = append(out, kv{k, v.Metadata[k]})
			}
		}
		return out
	})
}

// checkTemplateAgainstServer writes base with tmpl as its
// tokenizer.chat_template to path, and compares the backend's rendering of
// each of templateConversations with llama-server's /apply-template on that
// file.
func checkTemplateAgainstServer(t *testing.T, server, path string, base []byte, tmpl string) {
	t.Helper()
	data := rewrite(t, base, func(m []kv) []kv { return append(m, kv{"tokenizer.chat_template", tmpl}) })
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.chat.tmpl == nil {
		t.Fatalf("template not compiled: %s", m.chat.why)
	}
	url, stop := startServer(t, server, path)
	defer stop()
	for _, c := range templateConversations {
		for _, thinking := range []bool{false, true} {
			want, refused := applyTemplate(t, url, c.msgs, c.gen, thinking)
			in := m.chatInput(c.msgs)
			in.AddGenerationPrompt, in.EnableThinking = c.gen, thinking
			got, err := m.chat.tmpl.Render(in)
			switch {
			case refused != "" && err == nil:
				t.Errorf("%s, thinking %v: llama-server refuses (%s), this renders %q", c.name, thinking, refused, got)
			case refused == "" && err != nil:
				t.Errorf("%s, thinking %v: %v; llama-server renders %q", c.name, thinking, err, want)
			case got != want:
				t.Errorf("%s, thinking %v (bos %q, eos %q):\n got %q\nwant %q", c.name, thinking, in.BOS, in.EOS, got, want)
			}
		}
	}
}

// applyTemplate posts msgs to llama-server's /apply-template and returns
// the prompt, or the server's error message when it refuses.
func applyTemplate(t *testing.T, url string, msgs []backends.Message, gen, thinking bool) (prompt, refused string) {
	t.Helper()
	req := map[string]any{"messages": msgs, "add_generation_prompt": gen}
	if thinking {
		// The request's kwarg overrides the server's --reasoning off.
		req["chat_template_kwargs"] = map[string]any{"enable_thinking": true}
	}
	b, _ := json.Marshal(req)
	resp, err := http.Post(url+"/apply-template", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", strings.TrimSpace(string(body))
	}
	var r struct {
		Prompt *string `json:"prompt"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Prompt == nil {
		t.Fatalf("/apply-template: %s: %v", body, err)
	}
	return *r.Prompt, ""
}

// End to end: a chat request to the tiny model, whose file carries a chat
// template, gives llama-server's /v1/chat/completions answer (greedy) from a
// prompt of the same number of tokens, so the template is what formats the
// request and the rendered prompt is tokenized as llama-server tokenizes it.
func TestChatGenerationMatchesLlamaServer(t *testing.T) {
	server := llamaTool(t, "GLOSSOBENCH_LLAMA_SERVER_BIN", "llama-server")
	t.Setenv("LLAMA_ARG_REASONING", "off")
	dir := t.TempDir()
	for _, file := range []string{"../../testdata/models/tiny-llama/qa.jinja", "../chattemplate/testdata/turns.jinja"} {
		tmpl, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".jinja")
		path := filepath.Join(dir, name+".gguf")
		data := rewrite(t, readTiny(t), func(m []kv) []kv { return append(m, kv{"tokenizer.chat_template", string(tmpl)}) })
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		func() {
			m, err := Open(path, Options{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			url, stop := startServer(t, server, path)
			defer stop()
			for _, c := range templateConversations {
				if !c.gen {
					continue
				}
				var r struct {
					Choices []struct {
						Message struct {
							Content string `json:"content"`
						} `json:"message"`
					} `json:"choices"`
					Usage struct {
						PromptTokens int `json:"prompt_tokens"`
					} `json:"usage"`
				}
				postJSON(t, url+"/v1/chat/completions", map[string]any{"messages": c.msgs, "max_tokens": 12,
					"temperature": 0, "samplers": []string{"top_k"}, "top_k": 1}, &r)
				gen, err := m.Generate(bg, []backends.GenRequest{{Messages: c.msgs, MaxTokens: 12}})
				if err != nil {
					t.Fatal(err)
				}
				prompt, err := m.renderChat(c.msgs)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(m.tok.Encode(prompt, true)); n != r.Usage.PromptTokens {
					t.Errorf("%s %s: prompt of %d tokens, llama-server %d", name, c.name, n, r.Usage.PromptTokens)
				}
				if len(r.Choices) != 1 || gen[0].Text != r.Choices[0].Message.Content {
					t.Errorf("%s %s: answer %q, llama-server %+v", name, c.name, gen[0].Text, r.Choices)
				}
			}
		}()
	}
}
