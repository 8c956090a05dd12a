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
	{"unicode", []backends.Message{{Role: "user", Content: "  ڤد هاري اين ‎ไทย 中文\n"}, {Role: "assistant", Content: " Baik. "}, {Role: "user", Content: "Tamil: தமிழ்"}}, true},
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
			path := filepath.Join(dir, name+".gguf")
			data := rewrite(t, base, func(m []kv) []kv { return append(m, kv{"tokenizer.chat_template", string(tmpl)}) })
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
				want, refused := applyTemplate(t, url, c.msgs, c.gen)
				in := m.chatInput(c.msgs)
				in.AddGenerationPrompt = c.gen
				got, err := m.chat.tmpl.Render(in)
				switch {
				case refused != "" && err == nil:
					t.Errorf("%s: llama-server refuses (%s), this renders %q", c.name, refused, got)
				case refused == "" && err != nil:
					t.Errorf("%s: %v; llama-server renders %q", c.name, err, want)
				case got != want:
					t.Errorf("%s:\n got %q\nwant %q", c.name, got, want)
				}
			}
		})
		if ok {
			matched = append(matched, name)
		}
	}
	t.Logf("%d of %d templates render as llama-server does: %s", len(matched), len(files), strings.Join(matched, ", "))
}

// applyTemplate posts msgs to llama-server's /apply-template and returns
// the prompt, or the server's error message when it refuses.
func applyTemplate(t *testing.T, url string, msgs []backends.Message, gen bool) (prompt, refused string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"messages": msgs, "add_generation_prompt": gen})
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
