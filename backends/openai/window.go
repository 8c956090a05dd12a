package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/glossobench/glossobench/backends"
)

// The context policy of backends.FitGeneration and backends.FitScore needs
// the server's window and its tokenizer: llama-server reports its per-slot
// n_ctx in GET /props, vLLM its max_model_len per model in GET /v1/models;
// both tokenize on POST /tokenize. A server that reports no window (a
// hosted API) gets requests as they are and applies its own policy.

// serverInfo is learnt once per client: the window and, for vLLM, the
// model name to send.
type serverInfo struct {
	window int    // tokens; 0 = unknown, requests are not fitted
	model  string // name sent in requests
}

// info returns what the server reports, asking it once.
func (c *Client) info(ctx context.Context) (serverInfo, error) {
	fl, err := c.resolveFlavor(ctx)
	if err != nil {
		return serverInfo{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.infoKnown {
		return c.srv, nil
	}
	si := serverInfo{model: c.cfg.Model}
	switch fl {
	case FlavorLlamaServer:
		var props struct {
			DefaultGenerationSettings struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
		}
		err := c.doAside(ctx, http.MethodGet, "/props", nil, &props)
		var he *HTTPError
		switch {
		case errors.As(err, &he) && he.Status != 401 && he.Status != 403 && he.Status < 500 || errors.Is(err, errBadJSON):
			// No /props (a proxy in front, say): no window to fit to.
		case err != nil:
			return serverInfo{}, fmt.Errorf("openai: reading the context size from GET /props: %w", err)
		}
		si.window = props.DefaultGenerationSettings.NCtx
	case FlavorVLLM:
		if si, err = c.vllmModels(ctx, si); err != nil {
			return serverInfo{}, err
		}
	}
	c.srv, c.infoKnown = si, true
	return si, nil
}

// vllmModels reads GET /v1/models (vLLM's ModelList: one card per served
// model name, each with max_model_len, and adapter cards without it). With
// no model name configured the server must serve exactly one base model;
// vLLM answers a request for another name with 404 "The model `…` does not
// exist.", so several are an error that names them.
func (c *Client) vllmModels(ctx context.Context, si serverInfo) (serverInfo, error) {
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen *int   `json:"max_model_len"`
		} `json:"data"`
	}
	err := c.doAside(ctx, http.MethodGet, "/v1/models", nil, &list)
	var he *HTTPError
	if errors.As(err, &he) && he.Status != 401 && he.Status != 403 && (he.Status < 500 || he.Status == 501) || errors.Is(err, errBadJSON) {
		return si, nil // no model list: nothing to learn
	}
	if err != nil {
		return si, fmt.Errorf("openai: GET /v1/models: %w", err)
	}
	var names []string
	vllm := false // vLLM's cards carry max_model_len; a hosted API's list is only a catalogue
	for _, m := range list.Data {
		names = append(names, m.ID)
		vllm = vllm || m.MaxModelLen != nil
	}
	if !vllm {
		return si, nil
	}
	if si.model == "" {
		switch {
		case len(list.Data) == 1:
			si.model = list.Data[0].ID
		case len(list.Data) > 1:
			return si, fmt.Errorf("openai: config field model.name is empty, but the server at %s serves %d models (%s); name the one to evaluate", c.root, len(names), strings.Join(names, ", "))
		}
	}
	found := false
	for _, m := range list.Data {
		if m.ID == si.model {
			found = true
			if m.MaxModelLen != nil {
				si.window = *m.MaxModelLen
			}
		}
	}
	if !found && len(list.Data) > 0 {
		return si, fmt.Errorf("openai: model.name %q is not served at %s (it serves %s)", si.model, c.root, strings.Join(names, ", "))
	}
	return si, nil
}

// tokenIDs returns the server's tokens of text with the special tokens
// (BOS) its completion endpoint adds; ok is false when it has no /tokenize.
func (c *Client) tokenIDs(ctx context.Context, fl string, text string) (toks []int, ok bool, err error) {
	var n int
	if fl == FlavorLlamaServer {
		toks, err = c.tokenize(ctx, text)
		return toks, err == nil, err
	}
	toks, n, ok, err = c.vllmTokenize(ctx, text)
	return toks, ok && n == len(toks), err
}

// tokenCache remembers /tokenize answers by request body, so no text is
// tokenized twice by one client (an item's choices share a context, a
// judge prompt repeats across judges); it is bounded, oldest out first.
// Concurrent requests for the same body wait for one round trip.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]*tokenEntry
	order   []string
}

type tokenEntry struct {
	done chan struct{}
	raw  json.RawMessage
	err  error
}

// tokenCacheSize bounds the cache; a /tokenize answer is a few KB.
const tokenCacheSize = 4096

// tokenizeCached POSTs body to /tokenize once per distinct body and decodes
// the answer into out.
func (c *Client) tokenizeCached(ctx context.Context, body, out any) error {
	kb, err := json.Marshal(body)
	if err != nil {
		return err
	}
	key := string(kb)
	tc := &c.tokens
	tc.mu.Lock()
	if tc.entries == nil {
		tc.entries = map[string]*tokenEntry{}
	}
	e, hit := tc.entries[key]
	if !hit {
		e = &tokenEntry{done: make(chan struct{})}
		tc.entries[key] = e
		tc.order = append(tc.order, key)
		if len(tc.order) > tokenCacheSize {
			delete(tc.entries, tc.order[0])
			tc.order = tc.order[1:]
		}
	}
	tc.mu.Unlock()
	if !hit {
		e.err = c.doAside(ctx, http.MethodPost, "/tokenize", body, &e.raw)
		if e.err != nil {
			tc.mu.Lock()
			if tc.entries[key] == e {
				delete(tc.entries, key) // a failure is not remembered
			}
			tc.mu.Unlock()
		}
		close(e.done)
	} else {
		select {
		case <-e.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if e.err != nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) && ctx.Err() == nil {
			// The request waited on was cancelled by its own caller, not
			// ours (a worker's runs share a client): ask again.
			return c.tokenizeCached(ctx, body, out)
		}
	}
	if e.err != nil {
		return e.err
	}
	if err := json.Unmarshal(e.raw, out); err != nil {
		return fmt.Errorf("openai: POST /tokenize: %w: %v", errBadJSON, err)
	}
	return nil
}

// fitGeneration left-truncates a completion prompt and caps max_tokens by
// backends.FitGeneration. prompt is nil when the text goes as it is.
func (c *Client) fitGeneration(ctx context.Context, text string, maxTokens int) (prompt []int, maxGen, cut int, err error) {
	fl, err := c.resolveFlavor(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	si, err := c.info(ctx)
	if err != nil || si.window <= 0 {
		return nil, maxTokens, 0, err
	}
	toks, ok, err := c.tokenIDs(ctx, fl, text)
	if err != nil || !ok || len(toks) == 0 {
		return nil, maxTokens, 0, err
	}
	cut, maxGen, err = backends.FitGeneration(len(toks), si.window, maxTokens, c.cfg.StrictContext)
	if err != nil {
		return nil, 0, 0, err
	}
	if cut > 0 {
		prompt = backends.CutLeft(toks, cut)
	}
	return prompt, maxGen, cut, nil
}

// fitChat fits a chat prompt as vLLM's template renders it (POST /tokenize
// with messages: vLLM's TokenizeChatRequest) by backends.FitGeneration.
// prompt is the cut prompt's token ids, nil when the chat goes as it is;
// nothing is fitted on other servers or without a window.
func (c *Client) fitChat(ctx context.Context, msgs []backends.Message, maxTokens int) (prompt []int, maxGen, cut int, err error) {
	fl, err := c.resolveFlavor(ctx)
	if err != nil || fl != FlavorVLLM {
		return nil, maxTokens, 0, err
	}
	si, err := c.info(ctx)
	if err != nil || si.window <= 0 {
		return nil, maxTokens, 0, err
	}
	c.mu.Lock()
	noTokenize := c.tokenizeKnown && !c.hasTokenize
	c.mu.Unlock()
	if noTokenize {
		return nil, maxTokens, 0, nil
	}
	var resp struct {
		Tokens []int `json:"tokens"`
	}
	// The template adds the special tokens itself, as vLLM's chat endpoint
	// tokenizes the rendered prompt without adding them again.
	body := map[string]any{"model": si.model, "messages": msgs, "add_generation_prompt": true, "add_special_tokens": false}
	var he *HTTPError
	if err := c.tokenizeCached(ctx, body, &resp); errors.As(err, &he) && he.Status >= 400 && he.Status < 500 && he.Status != 401 && he.Status != 403 || errors.Is(err, errBadJSON) {
		return nil, maxTokens, 0, nil // no chat tokenization here: the server's own policy applies
	} else if err != nil {
		return nil, 0, 0, err
	}
	if len(resp.Tokens) == 0 {
		return nil, maxTokens, 0, nil
	}
	cut, maxGen, err = backends.FitGeneration(len(resp.Tokens), si.window, maxTokens, c.cfg.StrictContext)
	if err != nil {
		return nil, 0, 0, err
	}
	if cut > 0 {
		prompt = backends.CutLeft(resp.Tokens, cut)
	}
	return prompt, maxGen, cut, nil
}
