package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// Backend parity: a chat format named in the config is rendered here for a
// server as the embedded backend renders it, and a server's requests are
// fitted to the window it reports by the policy the embedded backend uses
// (backends.FitGeneration, FitScore). The fake is fakeLlama with a window
// of nCtx tokens and a /v1/completions that records what it was sent.

type llamaWindow struct {
	*fakeLlama
	nCtx int

	mu        sync.Mutex
	tokenize  []string         // bodies of /tokenize requests
	completes []map[string]any // bodies of /v1/completions requests
	chats     int              // /v1/chat/completions requests
	applied   []string         // user contents sent to /apply-template
}

func newLlamaWindow(t *testing.T, nCtx int) (*llamaWindow, *httptest.Server) {
	f := &llamaWindow{fakeLlama: &fakeLlama{t: t, nCtx: nCtx}, nCtx: nCtx}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *llamaWindow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/props":
		writeJSON(w, map[string]any{"default_generation_settings": map[string]any{"n_ctx": f.nCtx}})
		return
	case "/tokenize":
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.tokenize = append(f.tokenize, string(body))
		f.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	case "/v1/completions":
		var req map[string]any
		decodeBody(f.t, r, &req)
		f.mu.Lock()
		f.completes = append(f.completes, req)
		f.mu.Unlock()
		writeJSON(w, map[string]any{"choices": []any{map[string]any{"text": " Paris", "finish_reason": "stop"}},
			"usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 2}})
		return
	case "/apply-template":
		var req struct {
			Messages []backends.Message `json:"messages"`
		}
		decodeBody(f.t, r, &req)
		var b strings.Builder
		f.mu.Lock()
		for _, m := range req.Messages {
			b.WriteString("<|" + m.Role + "|>" + m.Content)
			f.applied = append(f.applied, m.Content)
		}
		f.mu.Unlock()
		writeJSON(w, map[string]any{"prompt": b.String() + "<|assistant|>"})
		return
	case "/v1/chat/completions":
		f.mu.Lock()
		f.chats++
		f.mu.Unlock()
		writeJSON(w, map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": "x"}, "finish_reason": "stop"}}})
		return
	}
	f.fakeLlama.ServeHTTP(w, r)
}

// A chat format in the config is applied for an HTTP model: the messages
// are rendered locally (the embedded backend's renderer) and the text goes
// to /v1/completions with the format's stops; the server's own template is
// not used.
func TestChatFormatRenderedForServer(t *testing.T) {
	f, srv := newLlamaWindow(t, 512)
	c := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer, ChatFormat: "qa"})
	g, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "q", MaxTokens: 8, Stop: []string{"###"},
		Messages: []backends.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "What is the capital of France?"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if f.chats != 0 || len(f.completes) != 1 {
		t.Fatalf("%d chat and %d completion requests, want 0 and 1", f.chats, len(f.completes))
	}
	got := f.completes[0]
	if got["prompt"] != "Question: What is the capital of France?\nAnswer:" {
		t.Errorf("prompt %q, want the qa format's rendering", got["prompt"])
	}
	var stops []string
	for _, s := range got["stop"].([]any) {
		stops = append(stops, s.(string))
	}
	if !slices.Equal(stops, []string{"###", "\n"}) {
		t.Errorf("stops %q, want the request's and the format's", stops)
	}
	if g[0].Text != " Paris" {
		t.Errorf("text %q", g[0].Text)
	}
}

// Without a chat format llama-server's own template renders the messages
// (POST /apply-template, what /v1/chat/completions applies), and the text
// takes the completion route, fitted to the window like any prompt.
func TestServerTemplateRenderedThenFitted(t *testing.T) {
	const nCtx = 64
	f, srv := newLlamaWindow(t, nCtx)
	c := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer})
	long := strings.Repeat("z", 100)
	g, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "q", MaxTokens: 16, Messages: []backends.Message{{Role: "user", Content: long}}}})
	if err != nil {
		t.Fatal(err)
	}
	rendered := "<|user|>" + long + "<|assistant|>"
	cut, _, _ := backends.FitGeneration(len(fakeTokenize(rendered, true)), nCtx, 16, false)
	if f.chats != 0 || len(f.completes) != 1 || g[0].PromptTruncated != cut || cut == 0 {
		t.Fatalf("%d chat, %d completion requests, %d truncated; want 0, 1, %d", f.chats, len(f.completes), g[0].PromptTruncated, cut)
	}
	if !slices.Equal(f.applied, []string{long}) {
		t.Errorf("/apply-template got %q", f.applied)
	}
}

// A chat format the client cannot honour is refused with a sentence, never ignored.
func TestChatFormatRefusedWhereItCannotApply(t *testing.T) {
	_, err := New(Config{BaseURL: "http://127.0.0.1:1", Flavor: FlavorChatOnly, ChatFormat: "qa"})
	if err == nil || !strings.Contains(err.Error(), "chat_format") || !strings.Contains(err.Error(), "chat-only") {
		t.Errorf("chat-only with chat_format: err = %v", err)
	}
	_, err = New(Config{BaseURL: "http://127.0.0.1:1", ChatFormat: "vicuna"})
	if err == nil || !strings.Contains(err.Error(), "qa, chatml, llama3, gemma") {
		t.Errorf("unknown chat_format: err = %v", err)
	}
}

// A prompt longer than the server's window is left-truncated by the same
// policy as the embedded backend, counted, and max_tokens is capped to what
// the window leaves; strict_context fails the request before it is sent.
// Before, the text went as it was and llama-server answered HTTP 400.
func TestServerGenerationFitsTheWindow(t *testing.T) {
	const nCtx = 64
	f, srv := newLlamaWindow(t, nCtx)
	prompt := strings.Repeat("abcdefghij", 10) // 100 bytes: BOS + 100 tokens
	c := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer})
	g, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "long", Prompt: prompt, MaxTokens: 16}})
	if err != nil {
		t.Fatal(err)
	}
	toks := fakeTokenize(prompt, true)
	cut, maxGen, err := backends.FitGeneration(len(toks), nCtx, 16, false)
	if err != nil || cut != len(toks)-(nCtx-16) || maxGen != 16 {
		t.Fatalf("FitGeneration = %d, %d, %v", cut, maxGen, err)
	}
	if g[0].PromptTruncated != cut {
		t.Errorf("PromptTruncated %d, want %d", g[0].PromptTruncated, cut)
	}
	sent := f.completes[0]
	var ids []int
	for _, v := range sent["prompt"].([]any) {
		ids = append(ids, int(v.(float64)))
	}
	if !slices.Equal(ids, backends.CutLeft(toks, cut)) {
		t.Errorf("prompt sent %v, want BOS and the last %d tokens", ids, nCtx-16-1)
	}
	if sent["max_tokens"] != float64(16) || sent["cache_prompt"] != false {
		t.Errorf("max_tokens %v cache_prompt %v, want 16 and false", sent["max_tokens"], sent["cache_prompt"])
	}
	// A short prompt goes as text; max_tokens is capped to the window's rest.
	short := strings.Repeat("x", 20) // 21 tokens of 64; the answer keeps half the window
	if _, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "short", Prompt: short, MaxTokens: 50}}); err != nil {
		t.Fatal(err)
	}
	if sent := f.completes[1]; sent["prompt"] != short || sent["max_tokens"] != float64(nCtx-21) {
		t.Errorf("short prompt sent as %v with max_tokens %v, want the text and %d", sent["prompt"], sent["max_tokens"], nCtx-21)
	}
	strict := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer, StrictContext: true})
	_, err = strict.Generate(context.Background(), []backends.GenRequest{{ID: "long", Prompt: prompt, MaxTokens: 16}})
	if err == nil || !strings.Contains(err.Error(), "context size 64") || len(f.completes) != 2 {
		t.Errorf("strict: err = %v after %d completions, want a context error and no request", err, len(f.completes))
	}
}

// A log-likelihood request longer than the window loses context tokens
// from the left (after BOS) by the embedded backend's policy, counted.
// llama-server refuses a prompt that fills its n_ctx and stops forcing
// tokens once prompt and forced tokens fill it, so it can read one token
// fewer than the embedded backend: its requests are fitted to n_ctx-1.
// Before, every request that reached the window failed ("generation
// stopped early"): 59 of the quick start's 150 NLU items.
func TestServerLogLikelihoodFitsTheWindow(t *testing.T) {
	const nCtx = 32
	f, srv := newLlamaWindow(t, nCtx)
	c := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer})
	cx := strings.Repeat("abcd", 10) // BOS + 40
	res, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "r", Context: cx, Continuation: "xyz"}})
	if err != nil {
		t.Fatal(err)
	}
	all := fakeTokenize(cx+"xyz", true)
	cut, err := backends.FitScore(len(all), 41, nCtx-1, false)
	if err != nil || cut != len(all)-nCtx {
		t.Fatalf("FitScore = %d, %v", cut, err)
	}
	if res[0].ContextTruncated != cut {
		t.Errorf("ContextTruncated %d, want %d", res[0].ContextTruncated, cut)
	}
	if p := f.prompts[0]; !slices.Equal(p, backends.CutLeft(all, cut)[:41-cut]) || len(p)+3 != nCtx {
		t.Errorf("prompt %v (%d tokens), want BOS and the context's last %d", p, len(p), 41-cut-1)
	}
	// Every length up to and past the window is scored, cut only when the
	// server could not read it whole.
	for n := nCtx - 6; n <= nCtx+2; n++ {
		cx := strings.Repeat("a", n-1) // BOS + n-1
		res, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "r", Context: cx, Continuation: "xyz"}})
		if err != nil {
			t.Errorf("context of %d tokens: %v", n, err)
			continue
		}
		if want := max(0, n+3-nCtx); res[0].ContextTruncated != want {
			t.Errorf("context of %d tokens: cut %d, want %d", n, res[0].ContextTruncated, want)
		}
	}
	strict := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer, StrictContext: true})
	if _, err := strict.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "r", Context: cx, Continuation: "xyz"}}); err == nil || !strings.Contains(err.Error(), "context size 31") {
		t.Errorf("strict: err = %v", err)
	}
}

// No text is tokenized twice by one client: an item's four choices share
// its context, and the second pass of a run repeats every body.
func TestTokenizeOncePerText(t *testing.T) {
	f, srv := newLlamaWindow(t, 512)
	c := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer})
	var reqs []backends.LLRequest
	for _, ch := range []string{" A", " B", " C", " D"} {
		reqs = append(reqs, backends.LLRequest{ID: ch, Context: "Question: 2+2?\nAnswer:", Continuation: ch})
	}
	for range 2 {
		if _, err := c.LogLikelihood(context.Background(), reqs); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for _, b := range f.tokenize {
		seen[b]++
	}
	for b, n := range seen {
		if n > 1 {
			var v any
			json.Unmarshal([]byte(b), &v)
			t.Errorf("%v tokenized %d times", v, n)
		}
	}
	if len(f.tokenize) != 5 {
		t.Errorf("%d /tokenize requests, want 5 (the context once, each choice once)", len(f.tokenize))
	}
}
