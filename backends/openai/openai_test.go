package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "base_url"},
		{Config{BaseURL: "localhost:8080"}, "base_url"},
		{Config{BaseURL: "http://x", Flavor: "tgi"}, "flavor"},
		{Config{BaseURL: "http://x", APIKeyEnv: "GLOSSOBENCH_TEST_UNSET_KEY_VAR"}, "GLOSSOBENCH_TEST_UNSET_KEY_VAR"},
		{Config{BaseURL: "http://x", Concurrency: -1}, "concurrency"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want error naming %q", tc.cfg, err, tc.want)
		}
	}
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if c.root != "http://127.0.0.1:1" || c.cfg.Concurrency != DefaultConcurrency || c.cfg.Timeout != DefaultTimeout || c.api.MaxRetries != DefaultMaxRetries {
		t.Errorf("defaults: root %q, %+v, retries %d", c.root, c.cfg, c.api.MaxRetries)
	}
}

func TestLogLikelihoodVLLMEcho(t *testing.T) {
	for _, tokenize := range []bool{true, false} {
		t.Run(fmt.Sprintf("tokenize=%v", tokenize), func(t *testing.T) {
			srv := httptest.NewServer(vllmEcho(t, map[string]bool{" Rome": true}, tokenize))
			defer srv.Close()
			c := newTestClient(t, srv, Config{Flavor: FlavorVLLM})
			reqs := []backends.LLRequest{
				{ID: "paris", Context: "Question: What is the capital of France?\nAnswer:", Continuation: " Paris"},
				{ID: "rome", Context: "Question: What is the capital of France?\nAnswer:", Continuation: " Rome is"},
				// Offsets count characters, not bytes.
				{ID: "utf8", Context: "Soalan: ibu négara Perú? Jawapan:", Continuation: " Kuala Lumpur"},
			}
			got, err := c.LogLikelihood(context.Background(), reqs)
			if err != nil {
				t.Fatal(err)
			}
			if c.hasTokenize != tokenize {
				t.Errorf("hasTokenize = %v", c.hasTokenize)
			}
			want := []struct {
				toks   []string
				greedy bool
			}{
				{[]string{" Paris"}, true},
				{[]string{" Rome", " is"}, false},
				{[]string{" Kuala", " Lumpur"}, true},
			}
			for i, w := range want {
				g := got[i]
				if g.ID != reqs[i].ID {
					t.Errorf("result %d has ID %q, want %q", i, g.ID, reqs[i].ID)
				}
				sum := 0.0
				for j, tok := range w.toks {
					sum += fakeLogprob(tok)
					if j >= len(g.TokenLogProbs) || !near(g.TokenLogProbs[j], fakeLogprob(tok)) {
						t.Errorf("%s: token logprobs %v, want token %q = %v", g.ID, g.TokenLogProbs, tok, fakeLogprob(tok))
					}
				}
				if len(g.TokenLogProbs) != len(w.toks) || !near(g.LogProb, sum) || g.IsGreedy != w.greedy {
					t.Errorf("%s: got %+v, want %d tokens, sum %v, greedy %v", g.ID, g, len(w.toks), sum, w.greedy)
				}
			}
		})
	}
}

func TestParseEchoSplits(t *testing.T) {
	for _, tc := range []struct {
		name          string
		raw           string
		nCtx, contLen int
		want          float64
		greedy        bool
	}{
		// Context "ab", continuation "cd"; the server merged "bc".
		{"straddling token", `{"choices":[{"logprobs":{"tokens":["a","bc","d","!"],"token_logprobs":[null,-1,-2,-3],
			"top_logprobs":[null,{"bc":-1},{"d":-2},{"!":-3}],"text_offset":[0,1,3,4]}}],"usage":{"prompt_tokens":3}}`, -1, 2, -3, true},
		// No text_offset: rebuilt from token texts; no top_logprobs: greedy unknown.
		{"no offsets", `{"choices":[{"logprobs":{"tokens":["a","b","cd","!"],"token_logprobs":[null,-1,-2,-3]}}]}`, -1, 2, -2, false},
		// A BOS whose text "<s>" is not in the prompt shifts the offsets.
		{"bos offsets", `{"choices":[{"logprobs":{"tokens":["<s>","a","b","c","!"],"token_logprobs":[null,-1,-2,-4,-8],
			"text_offset":[0,3,4,5,6]}}],"usage":{"prompt_tokens":4}}`, -1, 1, -4, false},
		{"bos count", `{"choices":[{"logprobs":{"tokens":["<s>","a","b","c","!"],"token_logprobs":[null,-1,-2,-4,-8],
			"text_offset":[0,3,4,5,6]}}],"usage":{"prompt_tokens":4}}`, 2, 1, -6, false},
	} {
		got, err := parseEcho([]byte(tc.raw), tc.nCtx, tc.contLen)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !near(got.LogProb, tc.want) || got.IsGreedy != tc.greedy {
			t.Errorf("%s: got %+v, want logprob %v greedy %v", tc.name, got, tc.want, tc.greedy)
		}
	}
}

func TestLogLikelihoodLlamaServer(t *testing.T) {
	fake := &fakeLlama{t: t}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := newTestClient(t, srv, Config{}) // auto: finds llama-server by /props
	reqs := []backends.LLRequest{
		{ID: "a", Context: "Answer:", Continuation: " B"},
		{ID: "b", Context: "Answer: ", Continuation: "AD"},
		// Multi-byte characters as byte tokens: the grammar cannot force
		// them, so they come from the top-k probe.
		{ID: "utf8", Context: "Jawapan:", Continuation: " né ภาษา"},
	}
	got, err := c.LogLikelihood(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if c.flavor != FlavorLlamaServer {
		t.Fatalf("auto probe chose %q", c.flavor)
	}
	for i, r := range reqs {
		cx, cont := r.Context, r.Continuation
		want := fakeTokenize(cont, false)
		sum, greedy := 0.0, true
		for _, id := range want {
			sum += fakeTokLogprob(id)
			greedy = greedy && id%17 == 0
		}
		g := got[i]
		if g.ID != r.ID || !near(g.LogProb, sum) || g.IsGreedy != greedy || len(g.Tokens) != len(want) {
			t.Errorf("%s: got %+v, want logprob %v greedy %v tokens %v", r.ID, g, sum, greedy, want)
		}
		// The prompt is the context's tokens with BOS.
		found := false
		for _, p := range fake.prompts {
			found = found || equalInts(p, fakeTokenize(cx, true))
		}
		if !found {
			t.Errorf("%s: no /completion prompt equal to BOS + tokens of %q; got %v", r.ID, cx, fake.prompts)
		}
	}
	if !c.Capabilities().LogLikelihood {
		t.Error("Capabilities().LogLikelihood = false for llama-server")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestForcingGrammar(t *testing.T) {
	if g := forcingGrammar([]int{426, 478, 386, 288}); g != "root ::= <[426]> <[478]> <[386]> <[288]>" {
		t.Errorf("forcingGrammar = %q", g)
	}
}

func TestLlamaServerRejectsPostSamplingProbs(t *testing.T) {
	srv := httptest.NewServer(&fakeLlama{t: t, postProb: true})
	defer srv.Close()
	c := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer})
	_, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "x", Context: "a", Continuation: "b"}})
	if err == nil || !strings.Contains(err.Error(), "post-sampling") {
		t.Errorf("err = %v, want a post-sampling complaint", err)
	}
}

func TestLlamaServerGrammarNotHonoured(t *testing.T) {
	srv := httptest.NewServer(&fakeLlama{t: t, ignoreGr: true})
	defer srv.Close()
	c := newTestClient(t, srv, Config{Flavor: FlavorLlamaServer})
	_, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "x", Context: "a", Continuation: "b"}})
	if err == nil || !strings.Contains(err.Error(), "grammar did not force") {
		t.Errorf("err = %v, want a grammar complaint", err)
	}
}

func TestLogLikelihoodUnsupported(t *testing.T) {
	req := []backends.LLRequest{{ID: "x", Context: "Question: 1+1?\nAnswer:", Continuation: " 2"}}
	cases := map[string]struct {
		flavor  string
		handler http.HandlerFunc
	}{
		"chat-only": {FlavorChatOnly, func(w http.ResponseWriter, r *http.Request) {
			t.Errorf("chat-only sent %s", r.URL.Path)
		}},
		"no /v1/completions": {FlavorAuto, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			writeJSON(w, map[string]any{"error": map[string]any{"message": "not found"}})
		}},
		"echo ignored": {FlavorVLLM, func(w http.ResponseWriter, r *http.Request) {
			lp := -0.5
			writeJSON(w, map[string]any{
				"choices": []any{map[string]any{"text": " 2", "logprobs": map[string]any{
					"tokens": []string{" 2"}, "token_logprobs": []*float64{&lp}, "text_offset": []int{21}}}},
				"usage": map[string]any{"prompt_tokens": 9, "completion_tokens": 1},
			})
		}},
		"no logprobs": {FlavorVLLM, func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, map[string]any{"choices": []any{map[string]any{"text": " 2", "logprobs": nil}}})
		}},
		"echo rejected": {FlavorVLLM, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			writeJSON(w, map[string]any{"error": map[string]any{"message": "echo is not supported"}})
		}},
		"llama no probs": {FlavorLlamaServer, (&fakeLlama{t: t, noProbs: true}).ServeHTTP},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c := newTestClient(t, srv, Config{Flavor: tc.flavor})
			got, err := c.LogLikelihood(context.Background(), req)
			if !errors.Is(err, backends.ErrUnsupported) {
				t.Fatalf("got %v, %v; want ErrUnsupported", got, err)
			}
			if got != nil {
				t.Errorf("results %v alongside ErrUnsupported", got)
			}
			if c.Capabilities().LogLikelihood {
				t.Error("Capabilities().LogLikelihood still true")
			}
		})
	}
}

func TestEchoContextTooLongIsNotUnsupported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		writeJSON(w, map[string]any{"error": map[string]any{"message": "This model's maximum context length is 4096 tokens."}})
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM})
	_, err := c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "long", Context: "a", Continuation: "b"}})
	if err == nil || errors.Is(err, backends.ErrUnsupported) || !strings.Contains(err.Error(), "maximum context length") {
		t.Errorf("err = %v, want a plain error naming the cause", err)
	}
	if !c.Capabilities().LogLikelihood {
		t.Error("one bad request marked the server unsupported")
	}
}

func TestGenerateChatAndCompletions(t *testing.T) {
	var chatReq, cmplReq map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/chat/completions":
			decodeBody(t, r, &chatReq)
			writeJSON(w, map[string]any{
				"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "B"}, "finish_reason": "stop"}},
				"usage":   map[string]any{"completion_tokens": 1},
			})
		case "/v1/completions":
			decodeBody(t, r, &cmplReq)
			writeJSON(w, map[string]any{
				"choices": []any{map[string]any{"text": " Paris is", "finish_reason": "length"}},
				"usage":   map[string]any{"completion_tokens": 3},
			})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Model: "m1", Flavor: FlavorVLLM})
	schema := map[string]any{"type": "object"}
	got, err := c.Generate(context.Background(), []backends.GenRequest{
		{ID: "chat", Messages: []backends.Message{{Role: "user", Content: "Pick A-D"}}, MaxTokens: 4, Temperature: 0, Seed: 7, Stop: []string{"\n"}, JSONSchema: schema},
		{ID: "raw", Prompt: "Capital of France:", MaxTokens: 3, Temperature: 0.5, Seed: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != (backends.Generation{ID: "chat", Text: "B", FinishReason: "stop", Tokens: 1}) {
		t.Errorf("chat: %+v", got[0])
	}
	if got[1] != (backends.Generation{ID: "raw", Text: " Paris is", FinishReason: "length", Tokens: 3}) || !got[1].Truncated() {
		t.Errorf("raw: %+v", got[1])
	}
	if chatReq["model"] != "m1" || chatReq["max_tokens"] != 4.0 || chatReq["temperature"] != 0.0 || chatReq["seed"] != 7.0 {
		t.Errorf("chat request %v", chatReq)
	}
	rf, _ := chatReq["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["schema"] == nil {
		t.Errorf("chat response_format = %v", chatReq["response_format"])
	}
	if stop, _ := chatReq["stop"].([]any); len(stop) != 1 || stop[0] != "\n" {
		t.Errorf("chat stop = %v", chatReq["stop"])
	}
	if cmplReq["prompt"] != "Capital of France:" || cmplReq["temperature"] != 0.5 || cmplReq["max_tokens"] != 3.0 {
		t.Errorf("completions request %v", cmplReq)
	}
}

func TestGenerateJSONSchemaLlamaServer(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/props" {
			writeJSON(w, map[string]any{"default_generation_settings": map[string]any{}})
			return
		}
		decodeBody(t, r, &got)
		writeJSON(w, map[string]any{"choices": []any{map[string]any{"text": "{}", "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{})
	if _, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "j", Prompt: "x", JSONSchema: map[string]any{"type": "object"}}}); err != nil {
		t.Fatal(err)
	}
	if got["json_schema"] == nil || got["response_format"] != nil {
		t.Errorf("llama-server /v1/completions request %v, want json_schema field", got)
	}
}

func TestChatOnlyRefusesRawPrompt(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1", Flavor: FlavorChatOnly})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), []backends.GenRequest{{ID: "p", Prompt: "hi"}})
	if err == nil || !strings.Contains(err.Error(), "messages") {
		t.Errorf("err = %v", err)
	}
}

func TestBatchOrderAndConcurrencyLimit(t *testing.T) {
	var inFlight, peak atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			http.NotFound(w, r) // no model list: requests go unfitted
			return
		}
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		var req struct {
			Prompt string `json:"prompt"`
		}
		decodeBody(t, r, &req)
		// Later requests finish sooner, so order must come from the client.
		time.Sleep(time.Duration(100-len(req.Prompt)) * 100 * time.Microsecond)
		writeJSON(w, map[string]any{"choices": []any{map[string]any{"text": req.Prompt, "finish_reason": "stop"}}})
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Concurrency: 3})
	var reqs []backends.GenRequest
	for i := range 40 {
		reqs = append(reqs, backends.GenRequest{ID: strings.Repeat("x", i), Prompt: strings.Repeat("p", i)})
	}
	got, err := c.Generate(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g.ID != reqs[i].ID || g.Text != reqs[i].Prompt {
			t.Fatalf("result %d = %+v, out of order", i, g)
		}
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak in-flight requests %d, want 2..3", p)
	}
}

// okCompletion answers any completions request.
func okCompletion(w http.ResponseWriter) {
	writeJSON(w, map[string]any{"choices": []any{map[string]any{"text": "ok", "finish_reason": "stop"}}})
}

func TestRetries(t *testing.T) {
	cases := map[string]func(n int64, w http.ResponseWriter) bool{ // returns true when it answered with a failure
		"429 with Retry-After": func(n int64, w http.ResponseWriter) bool {
			if n < 3 {
				w.Header().Set("Retry-After", "0.01")
				w.WriteHeader(429)
				return true
			}
			return false
		},
		"500 and 503": func(n int64, w http.ResponseWriter) bool {
			if n < 3 {
				w.WriteHeader(500 + 3*int(n-1))
				w.Write([]byte("overloaded"))
				return true
			}
			return false
		},
		"timeout": func(n int64, w http.ResponseWriter) bool {
			if n < 2 {
				time.Sleep(300 * time.Millisecond)
			}
			return false
		},
		"connection reset": func(n int64, w http.ResponseWriter) bool {
			if n < 2 {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return true
			}
			return false
		},
	}
	for name, fail := range cases {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !fail(calls.Add(1), w) {
					okCompletion(w)
				}
			}))
			defer srv.Close()
			c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Timeout: 100 * time.Millisecond})
			got, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Text != "ok" || calls.Load() < 2 {
				t.Errorf("got %+v after %d calls", got, calls.Load())
			}
		})
	}
}

func TestRetriesGiveUp(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(502)
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, MaxRetries: 2})
	_, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}})
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "502") || calls.Load() != 3 {
		t.Errorf("err = %v after %d calls", err, calls.Load())
	}
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	c, err := New(Config{BaseURL: url, Flavor: FlavorVLLM, MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	c.api.BackoffBase, c.api.BackoffMax = time.Millisecond, time.Millisecond
	_, err = c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}})
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("err = %v, want retried refusal", err)
	}
}

func TestClientErrorFailsFast(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		w.WriteHeader(422)
		writeJSON(w, map[string]any{"error": map[string]any{"message": "max_tokens must be positive"}})
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM})
	_, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 422 || he.Endpoint != "/v1/completions" || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
	for _, want := range []string{"/v1/completions", "422", "max_tokens must be positive", `"r"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestGarbageJSON(t *testing.T) {
	for _, body := range []string{"<html>502 Bad Gateway</html>", `{"choices": "no"}`, `{"choices": []}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(body))
		}))
		c := newTestClient(t, srv, Config{Flavor: FlavorVLLM})
		_, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}})
		if err == nil || !strings.Contains(err.Error(), "/v1/completions") || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("body %q: err = %v", body, err)
		}
		_, err = c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "r", Context: "a", Continuation: "b"}})
		if err == nil || errors.Is(err, backends.ErrUnsupported) && body != `{"choices": []}` && !strings.Contains(err.Error(), "malformed") {
			t.Errorf("body %q: loglik err = %v", body, err)
		}
		srv.Close()
	}
}

// A response longer than the client's cap is an error naming the cap, asked
// once (a retry would be as long), and the client stops reading near the cap.
func TestResponseOverCap(t *testing.T) {
	var calls, sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		w.Write([]byte(`{"choices":[{"text":"`))
		chunk := bytes.Repeat([]byte("x"), 16<<10)
		for range 1024 { // 16 MiB unless the client hangs up
			if _, err := w.Write(chunk); err != nil {
				return
			}
			sent.Add(int64(len(chunk)))
		}
		w.Write([]byte(`"}]}`))
	}))
	defer srv.Close()
	const limit = 1 << 20
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, MaxResponseBytes: limit})
	_, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}})
	if err == nil || !strings.Contains(err.Error(), "1048576 bytes") || !strings.Contains(err.Error(), "/v1/completions") {
		t.Fatalf("err = %v, want one naming the endpoint and the 1 MiB cap", err)
	}
	if calls.Load() != 1 || sent.Load() > 8<<20 {
		t.Errorf("%d calls, %d MiB sent; want 1 call cut off near the cap", calls.Load(), sent.Load()>>20)
	}
	// Under the cap the same client reads a normal answer.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"choices":[{"index":0,"text":"ok","finish_reason":"stop"}]}`))
	}))
	defer srv2.Close()
	c2 := newTestClient(t, srv2, Config{Flavor: FlavorVLLM, MaxResponseBytes: limit})
	if g, err := c2.Generate(context.Background(), []backends.GenRequest{{ID: "r", Prompt: "x"}}); err != nil || g[0].Text != "ok" {
		t.Fatalf("small answer: %+v, %v", g, err)
	}
}

func TestContextCancellation(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := newTestClient(t, srv, Config{Flavor: FlavorVLLM, Concurrency: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	reqs := make([]backends.GenRequest, 10)
	_, err := c.Generate(ctx, reqs)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancellation took %v", d)
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	const env = "GLOSSOBENCH_TEST_OPENAI_KEY"
	const key = "sk-planted-7f3a9c1e5b2d4068"
	t.Setenv(env, key)
	var sawKey atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		sawKey.Store(auth == "Bearer "+key)
		// Servers sometimes quote the credential back.
		switch r.URL.Path {
		case "/v1/completions", "/v1/chat/completions":
			w.WriteHeader(map[string]int{"/v1/completions": 401, "/v1/chat/completions": 500}[r.URL.Path])
			writeJSON(w, map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + auth}})
		default:
			w.Write([]byte("garbage " + auth))
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{APIKeyEnv: env, Flavor: FlavorVLLM, MaxRetries: 1})
	var errs []error
	_, err := c.Generate(context.Background(), []backends.GenRequest{{ID: "a", Prompt: "x"}})
	errs = append(errs, err)
	_, err = c.Generate(context.Background(), []backends.GenRequest{{ID: "b", Messages: []backends.Message{{Role: "user", Content: "x"}}}})
	errs = append(errs, err)
	_, err = c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "c", Context: "a", Continuation: "b"}})
	errs = append(errs, err)
	c.flavor = FlavorLlamaServer // /tokenize answers garbage that quotes the key
	_, err = c.LogLikelihood(context.Background(), []backends.LLRequest{{ID: "d", Context: "a", Continuation: "b"}})
	errs = append(errs, err)
	if !sawKey.Load() {
		t.Error("server never received the key")
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d: no error", i)
			continue
		}
		if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), key[3:15]) {
			t.Errorf("call %d: error leaks the key: %v", i, err)
		}
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("call %d: error %q does not show the redaction", i, err)
		}
	}
	if strings.Contains(c.Capabilities().Name, key) {
		t.Error("Capabilities().Name leaks the key")
	}
}

func TestPieceJSON(t *testing.T) {
	var ps []piece
	if err := json.Unmarshal([]byte(`[{"id":5,"piece":" Paris"},{"id":200,"piece":[195]}]`), &ps); err != nil {
		t.Fatal(err)
	}
	if ps[0].ID != 5 || string(ps[0].Bytes) != " Paris" || !ps[0].Whole || ps[1].ID != 200 || len(ps[1].Bytes) != 1 || ps[1].Bytes[0] != 195 || ps[1].Whole {
		t.Errorf("pieces %+v", ps)
	}
	for _, bad := range []string{`[{"id":1,"piece":[300]}]`, `[{"id":1,"piece":{}}]`} {
		if err := json.Unmarshal([]byte(bad), &ps); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestAutoProbe(t *testing.T) {
	var propsCalls atomic.Int64
	loading := atomic.Bool{}
	loading.Store(true)
	fake := &fakeLlama{t: t}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/props" {
			propsCalls.Add(1)
			if loading.Load() {
				w.WriteHeader(503)
				writeJSON(w, map[string]any{"error": map[string]any{"message": "Loading model"}})
				return
			}
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := newTestClient(t, srv, Config{MaxRetries: -1})
	req := []backends.LLRequest{{ID: "x", Context: "a", Continuation: "b"}}
	if _, err := c.LogLikelihood(context.Background(), req); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("while loading: err = %v", err)
	}
	if c.flavor != "" {
		t.Fatalf("a 503 decided the flavour %q", c.flavor)
	}
	loading.Store(false)
	if _, err := c.LogLikelihood(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LogLikelihood(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if c.flavor != FlavorLlamaServer || propsCalls.Load() != 2 {
		t.Errorf("flavour %q after %d probes, want llama-server after 2", c.flavor, propsCalls.Load())
	}
}
