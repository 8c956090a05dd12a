package main

import (
	"encoding/json"
	"net/http"
)

// fakeServer is an instant upstream in vLLM's shapes, for measuring the
// harness alone (-upstream fake): the proxy's hold is then all of a
// request's time, so every idle slot is the harness's. One model, "fake",
// with a 4,096-token window; its tokenizer is one token per byte after a
// BOS (id 1), every token's logprob -0.5; a completion or chat answers "B".
type fakeServer struct{}

const fakeWindow = 4096

func fakeTokens(text string) []int {
	ids := make([]int, 0, 1+len(text))
	ids = append(ids, 1)
	for _, b := range []byte(text) {
		ids = append(ids, 2+int(b))
	}
	return ids
}

func (fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt any  `json:"prompt"`
		Echo   bool `json:"echo"`
	}
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	var out any
	switch r.URL.Path {
	case "/v1/models":
		out = map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake", "object": "model", "max_model_len": fakeWindow}}}
	case "/tokenize":
		s, _ := req.Prompt.(string)
		ids := fakeTokens(s)
		out = map[string]any{"count": len(ids), "max_model_len": fakeWindow, "tokens": ids}
	case "/v1/completions":
		n := 0 // prompt tokens
		switch p := req.Prompt.(type) {
		case string:
			n = len(fakeTokens(p))
		case []any:
			n = len(p)
		}
		choice := map[string]any{"index": 0, "text": "B", "finish_reason": "stop"}
		if req.Echo {
			toks, lps := make([]string, n+1), make([]any, n+1)
			for i := 1; i <= n; i++ {
				toks[i], lps[i] = "x", -0.5
			}
			choice["logprobs"] = map[string]any{"tokens": toks, "token_logprobs": lps}
		}
		out = map[string]any{"object": "text_completion", "choices": []any{choice},
			"usage": map[string]any{"prompt_tokens": n, "completion_tokens": 1}}
	case "/v1/chat/completions":
		out = map[string]any{"object": "chat.completion", "choices": []any{map[string]any{"index": 0,
			"message": map[string]any{"role": "assistant", "content": "B"}, "finish_reason": "stop"}},
			"usage": map[string]any{"prompt_tokens": 1, "completion_tokens": 1}}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
