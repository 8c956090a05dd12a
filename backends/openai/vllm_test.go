package openai

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// fakeVLLM answers in the shapes of vLLM's OpenAI-compatible server (see
// testdata/openai/vllm/SOURCE.txt for the files and commits they were read
// from): GET /v1/models with several served names and a LoRA adapter, POST
// /tokenize, /v1/completions with echo + logprobs and prompt_logprobs, chat
// with logprobs, and the flat ErrorResponse for an unknown model and for a
// prompt + max_tokens over max_model_len. Its tokenizer is fakeTokenize's
// (BOS 1, one token per byte); token i of a sequence gets fakeTokLogprob.
type fakeVLLM struct {
	t           *testing.T
	maxModelLen int
	noTokenize  bool // an older server without /tokenize

	mu       sync.Mutex
	requests []map[string]any // bodies of completion and chat requests
	paths    []string
}

var vllmServed = []string{"malaysia-7b", "malaysia-7b-instruct"}

func (f *fakeVLLM) error(w http.ResponseWriter, status int, typ, msg string) {
	w.WriteHeader(status)
	writeJSON(w, map[string]any{"object": "error", "message": msg, "type": typ, "param": nil, "code": status})
}

func (f *fakeVLLM) checkModel(w http.ResponseWriter, req map[string]any) bool {
	name, _ := req["model"].(string)
	for _, s := range append(vllmServed, "sql-lora") {
		if name == s {
			return true
		}
	}
	f.error(w, 404, "NotFoundError", fmt.Sprintf("The model `%v` does not exist.", req["model"]))
	return false
}

// promptTokens reads a prompt given as text (tokenized with BOS, as
// add_special_tokens defaults to) or as token ids (taken as they are).
func promptTokens(p any) ([]int, bool) {
	switch v := p.(type) {
	case string:
		return fakeTokenize(v, true), true
	case []any:
		var ids []int
		for _, x := range v {
			f, ok := x.(float64)
			if !ok {
				return nil, false
			}
			ids = append(ids, int(f))
		}
		return ids, true
	}
	return nil, false
}

func tokText(id int) string {
	if id == 1 {
		return "<s>"
	}
	return string(rune(id - 10))
}

func (f *fakeVLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
		var data []any
		for _, name := range vllmServed {
			data = append(data, map[string]any{"id": name, "object": "model", "created": 1700000000, "owned_by": "vllm",
				"root": "/models/" + vllmServed[0], "parent": nil, "max_model_len": f.maxModelLen,
				"permission": []any{map[string]any{"id": "modelperm-1", "object": "model_permission", "allow_sampling": true}}})
		}
		data = append(data, map[string]any{"id": "sql-lora", "object": "model", "owned_by": "vllm", "root": "/adapters/sql-lora",
			"parent": vllmServed[0], "max_model_len": nil})
		writeJSON(w, map[string]any{"object": "list", "data": data})
		return
	}
	var req map[string]any
	if r.Method == http.MethodPost {
		decodeBody(f.t, r, &req)
	}
	switch r.URL.Path {
	case "/tokenize":
		if f.noTokenize {
			w.WriteHeader(404)
			writeJSON(w, map[string]any{"detail": "Not Found"})
			return
		}
		if !f.checkModel(w, req) {
			return
		}
		var ids []int
		if msgs, ok := req["messages"].([]any); ok {
			// TokenizeChatRequest: the template renders, adding its own BOS.
			text := ""
			for _, m := range msgs {
				mm := m.(map[string]any)
				text += "<|" + mm["role"].(string) + "|>" + mm["content"].(string)
			}
			if req["add_generation_prompt"] == true {
				text += "<|assistant|>"
			}
			ids = append([]int{1}, fakeTokenize(text, req["add_special_tokens"] == true)...)
		} else {
			ids = fakeTokenize(req["prompt"].(string), req["add_special_tokens"] != false)
		}
		writeJSON(w, map[string]any{"count": len(ids), "max_model_len": f.maxModelLen, "tokens": ids})
	case "/v1/completions":
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.mu.Unlock()
		if !f.checkModel(w, req) {
			return
		}
		ids, ok := promptTokens(req["prompt"])
		if !ok {
			f.error(w, 400, "BadRequestError", "prompt must be a string or a list of token ids")
			return
		}
		maxTokens := 16
		if v, ok := req["max_tokens"].(float64); ok {
			maxTokens = int(v)
		}
		if len(ids)+maxTokens > f.maxModelLen {
			f.error(w, 400, "BadRequestError", fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				f.maxModelLen, len(ids)+maxTokens, len(ids), maxTokens))
			return
		}
		gen := []int{int('!') + 10}
		if maxTokens > 1 {
			gen = append(gen, int('?')+10)
		}
		choice := map[string]any{"index": 0, "finish_reason": "length", "stop_reason": nil}
		var text strings.Builder
		seq := gen
		echo := req["echo"] == true
		if echo {
			seq = append(append([]int(nil), ids...), gen...)
			for _, id := range ids {
				if id != 1 {
					text.WriteString(tokText(id))
				}
			}
		}
		for _, id := range gen {
			text.WriteString(tokText(id))
		}
		choice["text"] = text.String()
		if n, ok := req["logprobs"].(float64); ok && n >= 0 {
			var toks []string
			var lps []any
			var tops []any
			var offs []int
			off := 0
			for i, id := range seq {
				toks = append(toks, tokText(id))
				offs = append(offs, off)
				if id != 1 {
					off += len(tokText(id))
				}
				if echo && i == 0 {
					lps, tops = append(lps, nil), append(tops, nil)
					continue
				}
				lp := fakeTokLogprob(id)
				lps = append(lps, lp)
				tops = append(tops, map[string]float64{tokText(id): lp})
			}
			choice["logprobs"] = map[string]any{"text_offset": offs, "token_logprobs": lps, "tokens": toks, "top_logprobs": tops}
		}
		if _, ok := req["prompt_logprobs"].(float64); ok {
			pl := []any{nil}
			for _, id := range ids[1:] {
				pl = append(pl, map[string]any{fmt.Sprint(id): map[string]any{"logprob": fakeTokLogprob(id), "rank": 1, "decoded_token": tokText(id)}})
			}
			choice["prompt_logprobs"] = pl
		}
		writeJSON(w, map[string]any{"id": "cmpl-1", "object": "text_completion", "created": 1700000000, "model": req["model"],
			"choices": []any{choice}, "usage": map[string]any{"prompt_tokens": len(ids), "completion_tokens": len(gen), "total_tokens": len(ids) + len(gen)}})
	case "/v1/chat/completions":
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.mu.Unlock()
		if !f.checkModel(w, req) {
			return
		}
		writeJSON(w, map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": req["model"],
			"choices": []any{map[string]any{"index": 0,
				"message":       map[string]any{"role": "assistant", "content": "Kuala Lumpur", "reasoning_content": nil, "tool_calls": []any{}},
				"logprobs":      map[string]any{"content": []any{map[string]any{"token": "Kuala", "logprob": -0.5, "bytes": []int{75, 117, 97, 108, 97}, "top_logprobs": []any{}}}},
				"finish_reason": "length", "stop_reason": nil}},
			"usage": map[string]any{"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}})
	default:
		f.error(w, 404, "NotFoundError", "Not Found")
	}
}

func newFakeVLLM(t *testing.T, maxModelLen int) (*fakeVLLM, *httptest.Server) {
	f := &fakeVLLM{t: t, maxModelLen: maxModelLen}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// A vLLM serving several model names needs model.name: without it every
// request fails with a sentence naming the served models (vLLM itself would
// answer 404 "The model `None` does not exist."), and a name it does not
// serve is refused the same way.
func TestVLLMSeveralModelsNeedAName(t *testing.T) {
	f, srv := newFakeVLLM(t, 512)
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM})
	_, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "g", Prompt: "x"}})
	if err == nil || !strings.Contains(err.Error(), "model.name") || !strings.Contains(err.Error(), "malaysia-7b, malaysia-7b-instruct, sql-lora") {
		t.Errorf("no model name: err = %v", err)
	}
	if _, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "l", Context: "a", Continuation: "b"}}); err == nil || !strings.Contains(err.Error(), "model.name") {
		t.Errorf("no model name, loglik: err = %v", err)
	}
	if len(f.requests) != 0 {
		t.Errorf("%d requests sent without a model name", len(f.requests))
	}
	bad := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Model: "llama"})
	if _, err := bad.Generate(context.Background(), []backends.GenRequest{{ID: "g", Prompt: "x"}}); err == nil || !strings.Contains(err.Error(), `"llama" is not served`) {
		t.Errorf("unknown model name: err = %v", err)
	}
	ok := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Model: "malaysia-7b-instruct"})
	g, err := ok.Generate(context.Background(), []backends.GenRequest{{ID: "g", Prompt: "x", MaxTokens: 2}})
	if err != nil || g[0].Text != "!?" || !g[0].Truncated() || g[0].Tokens != 2 {
		t.Fatalf("named model: %+v, %v", g, err)
	}
	if m := f.requests[len(f.requests)-1]["model"]; m != "malaysia-7b-instruct" {
		t.Errorf("request model %v", m)
	}
}

// Log-likelihoods through echo + logprobs: the continuation's tokens are
// those after the context's /tokenize count, with vLLM's null first
// logprob; an over-long request is left-truncated by the one context
// policy (FitScore, two tokens short of max_model_len for the echo's
// generated token) and counted, where vLLM would answer 400.
func TestVLLMEchoLogLikelihood(t *testing.T) {
	const window = 48
	f, srv := newFakeVLLM(t, window)
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Model: "malaysia-7b"})
	want := func(cont string) float64 {
		var s float64
		for _, id := range fakeTokenize(cont, false) {
			s += fakeTokLogprob(id)
		}
		return s
	}
	short := "Soalan: 2+2?\nJawapan:"
	long := strings.Repeat("Ibu negara Malaysia ialah Kuala Lumpur. ", 3) // 120 bytes
	res, err := c.LogLikelihood(context.Background(), []backends.LLRequest{
		{ID: "s", Context: short, Continuation: " 4"},
		{ID: "l", Context: long, Continuation: " KL"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res[0].LogProb-want(" 4")) > 1e-12 || len(res[0].TokenLogProbs) != 2 || res[0].ContextTruncated != 0 {
		t.Errorf("short: %+v, want logprob %v over 2 tokens", res[0], want(" 4"))
	}
	nAll := 1 + len(long) + 3
	wantCut := nAll - 1 - (window - 2)
	if math.Abs(res[1].LogProb-want(" KL")) > 1e-12 || res[1].ContextTruncated != wantCut {
		t.Errorf("long: logprob %v truncated %d, want %v and %d", res[1].LogProb, res[1].ContextTruncated, want(" KL"), wantCut)
	}
	for _, req := range f.requests {
		if req["echo"] != true || req["logprobs"] != float64(1) || req["model"] != "malaysia-7b" {
			t.Errorf("echo request %v", req)
		}
	}
	// The two requests ran concurrently: the fitted one is sent as token ids.
	var fitted []int
	for _, req := range f.requests {
		if _, text := req["prompt"].(string); !text {
			fitted, _ = promptTokens(req["prompt"])
		}
	}
	if len(fitted)+1 != window || fitted[0] != 1 {
		t.Errorf("long prompt sent as %v, want BOS and %d more tokens", fitted, window-2)
	}
	strict := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Model: "malaysia-7b", StrictContext: true})
	if _, err := strict.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "l", Context: long, Continuation: " KL"}}); err == nil || !strings.Contains(err.Error(), "strict_context") {
		t.Errorf("strict: err = %v", err)
	}
}

// Without /tokenize nothing can be fitted: vLLM's own 400 for the
// over-long prompt comes back as an ordinary error with its message (not
// "unsupported", which would silence the whole axis), and a short one is
// split by text offsets.
func TestVLLMContextErrorWithoutTokenize(t *testing.T) {
	f, srv := newFakeVLLM(t, 32)
	f.noTokenize = true
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Model: "malaysia-7b"})
	res, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "s", Context: "a b", Continuation: " c"}})
	if err != nil || len(res[0].TokenLogProbs) != 2 {
		t.Fatalf("short without /tokenize: %+v, %v", res, err)
	}
	_, err = c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "l", Context: strings.Repeat("x", 40), Continuation: " c"}})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 400 || !strings.Contains(err.Error(), "maximum context length is 32 tokens") || errors.Is(err, backends.ErrUnsupported) {
		t.Errorf("over-long without /tokenize: err = %v", err)
	}
}

// Generation: a completion prompt is fitted by FitGeneration against
// max_model_len (max_tokens capped so prompt + max_tokens fits, as vLLM
// requires), and chat goes to /v1/chat/completions, whose message content
// is read past the logprobs vLLM adds.
func TestVLLMGenerate(t *testing.T) {
	const window = 40
	f, srv := newFakeVLLM(t, window)
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Model: "malaysia-7b"})
	long := strings.Repeat("y", 60)
	g, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "long", Prompt: long, MaxTokens: 8}})
	if err != nil {
		t.Fatal(err)
	}
	cut, maxGen, _ := backends.FitGeneration(61, window, 8, false)
	if g[0].PromptTruncated != cut || cut == 0 {
		t.Errorf("PromptTruncated %d, want %d", g[0].PromptTruncated, cut)
	}
	last := f.requests[len(f.requests)-1]
	if ids, _ := promptTokens(last["prompt"]); len(ids) != 61-cut || last["max_tokens"] != float64(maxGen) {
		t.Errorf("sent %d prompt tokens with max_tokens %v, want %d and %d", len(ids), last["max_tokens"], 61-cut, maxGen)
	}
	g, err = c.Generate(context.Background(), []backends.GenRequest{{ID: "chat", MaxTokens: 2, Messages: []backends.Message{{Role: "user", Content: "Ibu negara?"}}}})
	if err != nil || g[0].Text != "Kuala Lumpur" || !g[0].Truncated() || g[0].Tokens != 2 {
		t.Errorf("chat: %+v, %v", g, err)
	}
	if p := f.paths[len(f.paths)-1]; p != "POST /v1/chat/completions" {
		t.Errorf("chat went to %s", p)
	}
	// The chat prompt as vLLM's template renders it (/tokenize with
	// messages) is fitted too: max_tokens capped to the window's rest, and a
	// prompt over it cut and sent as token ids to /v1/completions.
	f100, srv100 := newFakeVLLM(t, 100)
	c100 := newTestClient(t, srv100, Config{Flavor: FlavorVLLM, Model: "malaysia-7b"})
	msgs := []backends.Message{{Role: "user", Content: strings.Repeat("k", 10)}}
	n := len("<|user|>"+strings.Repeat("k", 10)+"<|assistant|>") + 1 // 32 of 100
	if _, err := c100.Generate(context.Background(), []backends.GenRequest{{ID: "c1", MaxTokens: 80, Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	if last := f100.requests[len(f100.requests)-1]; last["max_tokens"] != float64(100-n) || last["messages"] == nil {
		t.Errorf("short chat sent max_tokens %v (messages %v), want %d", last["max_tokens"], last["messages"] != nil, 100-n)
	}
	msgs[0].Content = strings.Repeat("k", 50)
	g, err = c.Generate(context.Background(), []backends.GenRequest{{ID: "c2", MaxTokens: 8, Messages: msgs}})
	if err != nil {
		t.Fatal(err)
	}
	n = len("<|user|>"+msgs[0].Content+"<|assistant|>") + 1
	cut, _, _ = backends.FitGeneration(n, window, 8, false)
	last = f.requests[len(f.requests)-1]
	if ids, _ := promptTokens(last["prompt"]); g[0].PromptTruncated != cut || len(ids) != n-cut || ids[0] != 1 || f.paths[len(f.paths)-1] != "POST /v1/completions" {
		t.Errorf("long chat: truncated %d (want %d), %d tokens sent to %s", g[0].PromptTruncated, cut, len(ids), f.paths[len(f.paths)-1])
	}
}

// A hosted API's model list (no max_model_len) is a catalogue, not vLLM's
// served names: a name missing from it, or several names, refuse nothing.
func TestModelListWithoutWindowsRefusesNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "gpt-a"}, map[string]any{"id": "gpt-b"}}})
			return
		}
		okCompletion(w)
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Model: "deployment-1"})
	if g, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "g", Prompt: "x"}}); err != nil || g[0].Text != "ok" {
		t.Fatalf("%+v, %v", g, err)
	}
}
