package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/glossobench/glossobench/backends"
)

// LogLikelihood returns log P(Continuation | Context) for each request,
// concurrently, in request order. It returns an error wrapping
// backends.ErrUnsupported when the server cannot give logprobs.
func (c *Client) LogLikelihood(ctx context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	fl, err := c.resolveFlavor(ctx)
	if err != nil {
		return nil, err
	}
	if fl == FlavorChatOnly {
		return nil, fmt.Errorf("openai: flavor chat-only: %w", backends.ErrUnsupported)
	}
	one := c.echoLL
	if fl == FlavorLlamaServer {
		one = c.llamaLL
	}
	out := make([]backends.LLResult, len(reqs))
	err = c.forEach(ctx, len(reqs), func(ctx context.Context, i int) error {
		r, err := one(ctx, reqs[i])
		if err != nil {
			if errors.Is(err, backends.ErrUnsupported) {
				c.markLLUnsupported()
				return err
			}
			return fmt.Errorf("loglikelihood %q: %w", reqs[i].ID, err)
		}
		r.ID = reqs[i].ID
		out[i] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// unsupported reports a server answer that shows the feature is missing.
func unsupported(format string, a ...any) error {
	return fmt.Errorf("openai: %s: %w", fmt.Sprintf(format, a...), backends.ErrUnsupported)
}

// --- vLLM / SGLang: echo + logprobs on /v1/completions ---

type echoBody struct {
	Model       string  `json:"model,omitempty"`
	Prompt      any     `json:"prompt"` // text, or token ids once fitted
	Echo        bool    `json:"echo"`
	Logprobs    int     `json:"logprobs"`
	MaxTokens   int     `json:"max_tokens"`
	Temperature float64 `json:"temperature"`
	Seed        int64   `json:"seed"`
}

// echoResponse is the legacy completions logprobs format.
type echoResponse struct {
	Choices []struct {
		Logprobs *struct {
			Tokens        []string             `json:"tokens"`
			TokenLogprobs []*float64           `json:"token_logprobs"`
			TopLogprobs   []map[string]float64 `json:"top_logprobs"`
			TextOffset    []int                `json:"text_offset"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

// vllmTokenizeBody is vLLM's /tokenize request.
type vllmTokenizeBody struct {
	Model            string `json:"model,omitempty"`
	Prompt           string `json:"prompt"`
	AddSpecialTokens bool   `json:"add_special_tokens"`
}

// vllmTokenize asks the server's /tokenize (vLLM; SGLang) for the tokens of
// text, with special tokens as /v1/completions adds them. ok is false when
// the server has no such endpoint; the answer is remembered.
// n is the token count: len(toks), or the count a server sends without
// the tokens.
func (c *Client) vllmTokenize(ctx context.Context, text string) (toks []int, n int, ok bool, err error) {
	c.mu.Lock()
	known, has := c.tokenizeKnown, c.hasTokenize
	c.mu.Unlock()
	if known && !has {
		return nil, 0, false, nil
	}
	si, err := c.info(ctx)
	if err != nil {
		return nil, 0, false, err
	}
	var resp struct {
		Count  *int  `json:"count"`
		Tokens []int `json:"tokens"`
	}
	err = c.tokenizeCached(ctx, vllmTokenizeBody{Model: si.model, Prompt: text, AddSpecialTokens: true}, &resp)
	var he *HTTPError
	// Any refusal but an auth failure means "no such endpoint here".
	if errors.As(err, &he) && he.Status != 401 && he.Status != 403 && (he.Status < 500 || he.Status == 501) || errors.Is(err, errBadJSON) {
		c.mu.Lock()
		c.tokenizeKnown, c.hasTokenize = true, false
		c.mu.Unlock()
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	n = len(resp.Tokens)
	if resp.Count != nil {
		n = *resp.Count
	}
	c.mu.Lock()
	c.tokenizeKnown, c.hasTokenize = true, true
	c.mu.Unlock()
	return resp.Tokens, n, true, nil
}

func (c *Client) echoLL(ctx context.Context, r backends.LLRequest) (backends.LLResult, error) {
	cx, cont := r.Context, r.Continuation
	if cont == "" {
		return backends.LLResult{}, errors.New("openai: continuation is empty")
	}
	si, err := c.info(ctx)
	if err != nil {
		return backends.LLResult{}, err
	}
	_, nCtx, ok, err := c.vllmTokenize(ctx, cx)
	if err != nil {
		return backends.LLResult{}, err
	}
	if !ok {
		nCtx = -1
	}
	const path = "/v1/completions"
	// max_tokens 1, not 0: several servers reject 0. The one generated
	// token is cut off below by the prompt token count.
	b := echoBody{Model: si.model, Prompt: cx + cont, Echo: true, Logprobs: 1, MaxTokens: 1}
	cut := 0
	if ok && si.window > 0 {
		// The one context policy (backends.FitScore). The echo sends the
		// whole sequence plus one generated token where the embedded
		// runtime reads all but the last: vLLM wants prompt + max_tokens
		// within max_model_len, so the window here is two tokens smaller.
		whole, n, _, err := c.vllmTokenize(ctx, cx+cont)
		if err != nil {
			return backends.LLResult{}, err
		}
		if len(whole) != n {
			whole = nil // a count without the tokens: nothing to cut with
		}
		if cut, err = backends.FitScore(len(whole), nCtx, si.window-2, c.cfg.StrictContext); err != nil {
			return backends.LLResult{}, err
		}
		if cut > 0 {
			b.Prompt = backends.CutLeft(whole, cut)
			nCtx -= cut
		}
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodPost, path, b, &raw); err != nil {
		var he *HTTPError
		if errors.As(err, &he) && refusesEcho(he) {
			return backends.LLResult{}, fmt.Errorf("%v: %w", err, backends.ErrUnsupported)
		}
		return backends.LLResult{}, err
	}
	res, prompt, err := parseEchoTokens(raw, nCtx, utf8.RuneCountInString(cont))
	if err == nil {
		backends.ObserveCtx(ctx).Tokens("openai", prompt, 0)
	}
	res.ContextTruncated = cut
	return res, err
}

// refusesEcho tells a server without echo+logprobs from a bad request: no
// such endpoint, or a 400/422 that names echo or logprobs. Other 400s (a
// prompt longer than the model's context, say) stay ordinary errors, so one
// long item cannot turn a whole axis "unsupported".
func refusesEcho(he *HTTPError) bool {
	switch he.Status {
	case 404, 405, 501:
		return true
	case 400, 422:
		msg := strings.ToLower(he.Message)
		return strings.Contains(msg, "echo") || strings.Contains(msg, "logprob")
	}
	return false
}

// parseEcho finds the continuation's tokens in an echoed prompt.
//
// With nCtx ≥ 0 (the context's token count from /tokenize) they are the
// prompt tokens after the first nCtx, exactly as lm-evaluation-harness
// splits them. Otherwise (nCtx < 0) the split comes from text_offset,
// aligned at the prompt's end, contLen characters back: servers build
// offsets from their own token texts, which may start with "<s>" or
// similar that is not in the prompt. A token straddling the boundary counts
// as continuation, since it carries continuation text.
func parseEcho(raw []byte, nCtx, contLen int) (backends.LLResult, error) {
	res, _, err := parseEchoTokens(raw, nCtx, contLen)
	return res, err
}

// parseEchoTokens is parseEcho that also returns the prompt's token count.
func parseEchoTokens(raw []byte, nCtx, contLen int) (backends.LLResult, int, error) {
	const path = "/v1/completions"
	var resp echoResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return backends.LLResult{}, 0, fmt.Errorf("openai: POST %s: %w: %v", path, errBadJSON, err)
	}
	if len(resp.Choices) == 0 {
		return backends.LLResult{}, 0, fmt.Errorf("openai: POST %s: %w: no choices", path, errBadJSON)
	}
	lp := resp.Choices[0].Logprobs
	if lp == nil || len(lp.TokenLogprobs) == 0 {
		return backends.LLResult{}, 0, unsupported("POST %s returned no logprobs for echo=true", path)
	}
	n := len(lp.TokenLogprobs)
	if len(lp.Tokens) != n || (lp.TextOffset != nil && len(lp.TextOffset) != n) || (lp.TopLogprobs != nil && len(lp.TopLogprobs) != n) {
		return backends.LLResult{}, 0, fmt.Errorf("openai: POST %s: %w: logprobs arrays differ in length", path, errBadJSON)
	}
	// The echoed prompt is the first prompt_tokens entries; the rest was
	// generated. Without usage, assume the one token we asked for.
	p := n - 1
	if resp.Usage != nil && resp.Usage.PromptTokens > 0 {
		p = resp.Usage.PromptTokens
	}
	if p > n || p <= 0 || nCtx >= p {
		return backends.LLResult{}, 0, unsupported("POST %s did not echo the prompt (%d prompt tokens, %d logprobs, context %d tokens)", path, p, n, nCtx)
	}
	s := nCtx
	if s < 0 {
		var err error
		if s, err = echoSplit(lp.Tokens, lp.TextOffset, p, contLen); err != nil {
			return backends.LLResult{}, 0, err
		}
	}
	res := backends.LLResult{IsGreedy: true}
	for i := s; i < p; i++ {
		v := lp.TokenLogprobs[i]
		if v == nil {
			// Only the first prompt token has no logprob: nothing precedes it.
			return backends.LLResult{}, 0, fmt.Errorf("openai: POST %s: no logprob for continuation token %d (empty context and no BOS?)", path, i-s)
		}
		if math.IsNaN(*v) || *v > 0 {
			return backends.LLResult{}, 0, fmt.Errorf("openai: POST %s: %w: logprob %v", path, errBadJSON, *v)
		}
		res.TokenLogProbs = append(res.TokenLogProbs, *v)
		res.LogProb += *v
		if lp.TopLogprobs == nil || lp.TopLogprobs[i] == nil {
			res.IsGreedy = false // unknown; never claimed
			continue
		}
		for _, alt := range lp.TopLogprobs[i] {
			if alt > *v+1e-6 {
				res.IsGreedy = false
			}
		}
	}
	return res, p, nil
}

// echoSplit returns the index of the first continuation token among the p
// prompt tokens, from text offsets (rebuilt from token texts when absent).
func echoSplit(tokens []string, offsets []int, p, contLen int) (int, error) {
	const path = "/v1/completions"
	if offsets == nil {
		offsets = make([]int, len(tokens))
		pos := 0
		for i, t := range tokens {
			offsets[i] = pos
			pos += utf8.RuneCountInString(t)
		}
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return 0, fmt.Errorf("openai: POST %s: %w: text_offset decreases at token %d", path, errBadJSON, i)
		}
	}
	// End of the echoed prompt in the server's offset coordinates.
	end := offsets[p-1] + utf8.RuneCountInString(tokens[p-1])
	if p < len(offsets) {
		end = offsets[p]
	}
	boundary := end - contLen
	if boundary < 0 {
		return 0, unsupported("POST %s did not echo the prompt (echoed text shorter than the continuation)", path)
	}
	// First token starting at or after the boundary; if it starts after it,
	// the token before straddles the boundary and belongs to the continuation.
	s := p
	for i := range p {
		if offsets[i] >= boundary {
			s = i
			break
		}
	}
	if s == p || offsets[s] > boundary {
		s--
	}
	if s < 0 || s >= p {
		return 0, fmt.Errorf("openai: POST %s: %w: no continuation token in the echoed prompt", path, errBadJSON)
	}
	return s, nil
}
