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

// splitPair moves trailing spaces of the context to the continuation, as
// lm-evaluation-harness does, so "Answer: " + "B" scores " B" after "Answer:",
// the way the text would be tokenized.
func splitPair(context, continuation string) (string, string) {
	trimmed := strings.TrimRight(context, " ")
	return trimmed, context[len(trimmed):] + continuation
}

// unsupported reports a server answer that shows the feature is missing.
func unsupported(format string, a ...any) error {
	return fmt.Errorf("openai: %s: %w", fmt.Sprintf(format, a...), backends.ErrUnsupported)
}

// --- vLLM / SGLang: echo + logprobs on /v1/completions ---

type echoBody struct {
	Model       string  `json:"model,omitempty"`
	Prompt      string  `json:"prompt"`
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

func (c *Client) echoLL(ctx context.Context, r backends.LLRequest) (backends.LLResult, error) {
	cx, cont := splitPair(r.Context, r.Continuation)
	if cont == "" {
		return backends.LLResult{}, errors.New("openai: continuation is empty")
	}
	const path = "/v1/completions"
	// max_tokens 1, not 0: several servers reject 0. The one generated
	// token is cut off below by the prompt token count.
	b := echoBody{Model: c.cfg.Model, Prompt: cx + cont, Echo: true, Logprobs: 1, MaxTokens: 1}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodPost, path, b, &raw); err != nil {
		var he *HTTPError
		if errors.As(err, &he) && (he.Status == 400 || he.Status == 404 || he.Status == 405 || he.Status == 422 || he.Status == 501) {
			return backends.LLResult{}, fmt.Errorf("%v: %w", err, backends.ErrUnsupported)
		}
		return backends.LLResult{}, err
	}
	return parseEcho(raw, utf8.RuneCountInString(cx), utf8.RuneCountInString(cx+cont))
}

// parseEcho finds the continuation's tokens in an echoed prompt. ctxLen and
// promptLen are in characters (Unicode code points), the unit of OpenAI's
// text_offset. A token that straddles the context/continuation boundary
// counts as continuation, since it carries continuation text.
func parseEcho(raw []byte, ctxLen, promptLen int) (backends.LLResult, error) {
	const path = "/v1/completions"
	var resp echoResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return backends.LLResult{}, fmt.Errorf("openai: POST %s: %w: %v", path, errBadJSON, err)
	}
	if len(resp.Choices) == 0 {
		return backends.LLResult{}, fmt.Errorf("openai: POST %s: %w: no choices", path, errBadJSON)
	}
	lp := resp.Choices[0].Logprobs
	if lp == nil || len(lp.TokenLogprobs) == 0 {
		return backends.LLResult{}, unsupported("POST %s returned no logprobs for echo=true", path)
	}
	n := len(lp.TokenLogprobs)
	if len(lp.Tokens) != n || (lp.TextOffset != nil && len(lp.TextOffset) != n) || (lp.TopLogprobs != nil && len(lp.TopLogprobs) != n) {
		return backends.LLResult{}, fmt.Errorf("openai: POST %s: %w: logprobs arrays differ in length", path, errBadJSON)
	}
	offsets := lp.TextOffset
	if offsets == nil {
		// Some servers omit text_offset; rebuild it from the token texts.
		offsets = make([]int, n)
		pos := 0
		for i, t := range lp.Tokens {
			offsets[i] = pos
			pos += utf8.RuneCountInString(t)
		}
	}
	// The echoed prompt is the first prompt_tokens entries; the rest was
	// generated. Without usage, assume the one token we asked for.
	p := n - 1
	if resp.Usage != nil && resp.Usage.PromptTokens > 0 {
		p = resp.Usage.PromptTokens
	}
	if p > n || p <= 0 {
		return backends.LLResult{}, unsupported("POST %s did not echo the prompt (%d prompt tokens, %d logprobs)", path, p, n)
	}
	for i := 1; i < p; i++ {
		if offsets[i] < offsets[i-1] {
			return backends.LLResult{}, fmt.Errorf("openai: POST %s: %w: text_offset decreases at token %d", path, errBadJSON, i)
		}
	}
	if offsets[p-1] >= promptLen && promptLen > 0 {
		return backends.LLResult{}, unsupported("POST %s did not echo the prompt (offsets do not match the prompt)", path)
	}
	// First token starting at or after the boundary; if it starts after it,
	// the token before straddles the boundary and belongs to the continuation.
	s := p
	for i := range p {
		if offsets[i] >= ctxLen {
			s = i
			break
		}
	}
	if s == p || offsets[s] > ctxLen {
		s--
	}
	if s < 0 || s >= p {
		return backends.LLResult{}, fmt.Errorf("openai: POST %s: %w: no continuation token in the echoed prompt", path, errBadJSON)
	}
	res := backends.LLResult{IsGreedy: true}
	for i := s; i < p; i++ {
		v := lp.TokenLogprobs[i]
		if v == nil {
			// Only the first prompt token has no logprob: nothing precedes it.
			return backends.LLResult{}, fmt.Errorf("openai: POST %s: no logprob for continuation token %d (empty context and no BOS?)", path, i-s)
		}
		if math.IsNaN(*v) || *v > 0 {
			return backends.LLResult{}, fmt.Errorf("openai: POST %s: %w: logprob %v", path, errBadJSON, *v)
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
	return res, nil
}
