package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/glossobench/glossobench/backends"
)

// llama-server: log-likelihood through /tokenize and /completion.
//
// /completion is asked to generate exactly the continuation's tokens, forced
// by a grammar over token ids, and reports each generated token's logprob
// under the model's raw softmax (post_sampling_probs off).
//
// Two catches, found against the bundled server: its grammar cannot force a
// token whose text is not valid UTF-8 on its own (a byte-fallback or
// byte-level BPE piece such as 0xC3): the request fails with "Unexpected
// empty grammar stack". And a generated token after which the text ends
// inside a character is left out of completion_probabilities. So the
// continuation is cut into runs of whole-character tokens, each forced in
// one request, and every byte token's logprob is read from the top-k list
// of a one-token request that stops right before it.

type tokenizeBody struct {
	Content    string `json:"content"`
	AddSpecial bool   `json:"add_special"`
	WithPieces bool   `json:"with_pieces,omitempty"`
}

type tokenizeResponse struct {
	Tokens []int `json:"tokens"`
}

// piece is a token with its text; the server sends the text as a string, or
// as a list of bytes when it is not valid UTF-8 on its own.
type piece struct {
	ID    int
	Bytes []byte
	Whole bool // the text is valid UTF-8 on its own
}

func (p *piece) UnmarshalJSON(data []byte) error {
	var raw struct {
		ID    int             `json:"id"`
		Piece json.RawMessage `json:"piece"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	p.ID = raw.ID
	var s string
	if err := json.Unmarshal(raw.Piece, &s); err == nil {
		p.Bytes = []byte(s)
		p.Whole = true
		return nil
	}
	var bs []int
	if err := json.Unmarshal(raw.Piece, &bs); err != nil {
		return fmt.Errorf("token %d: piece is neither a string nor a list of bytes", raw.ID)
	}
	for _, b := range bs {
		if b < 0 || b > 255 {
			return fmt.Errorf("token %d: piece byte %d out of range", raw.ID, b)
		}
		p.Bytes = append(p.Bytes, byte(b))
	}
	return nil
}

type llamaCompletionBody struct {
	Prompt            []int   `json:"prompt"`
	NPredict          int     `json:"n_predict"`
	NProbs            int     `json:"n_probs"`
	PostSamplingProbs bool    `json:"post_sampling_probs"`
	Grammar           string  `json:"grammar"`
	Temperature       float64 `json:"temperature"`
	Seed              int64   `json:"seed"`
	// Prompt caching can change logits slightly between batch shapes; a
	// score must not depend on which request came before.
	CachePrompt bool `json:"cache_prompt"`
	Stream      bool `json:"stream"`
}

type llamaTop struct {
	ID      int     `json:"id"`
	Logprob float64 `json:"logprob"`
}

type llamaProb struct {
	ID          int        `json:"id"`
	Logprob     *float64   `json:"logprob"`
	Prob        *float64   `json:"prob"`
	TopLogprobs []llamaTop `json:"top_logprobs"`
}

type llamaCompletionResponse struct {
	Probs []llamaProb `json:"completion_probabilities"`
}

func (c *Client) tokenize(ctx context.Context, text string) ([]int, error) {
	var resp tokenizeResponse
	if err := c.tokenizeCached(ctx, tokenizeBody{Content: text, AddSpecial: true}, &resp); err != nil {
		return nil, err
	}
	return resp.Tokens, nil
}

func (c *Client) tokenizePieces(ctx context.Context, text string) ([]piece, error) {
	var resp struct {
		Tokens []piece `json:"tokens"`
	}
	if err := c.tokenizeCached(ctx, tokenizeBody{Content: text, AddSpecial: true, WithPieces: true}, &resp); err != nil {
		return nil, err
	}
	return resp.Tokens, nil
}

// splitContinuation splits whole (the tokens of context+continuation) after
// the context's own token count, as lm-evaluation-harness does.
func splitContinuation(nCtx int, whole []piece) (prefix []int, cont []piece, err error) {
	if nCtx == 0 {
		return nil, nil, errors.New("openai: context has no tokens and the model adds no BOS; nothing to condition on")
	}
	if len(whole) <= nCtx {
		return nil, nil, fmt.Errorf("openai: continuation adds no tokens (context %d tokens, with continuation %d)", nCtx, len(whole))
	}
	for _, p := range whole[:nCtx] {
		prefix = append(prefix, p.ID)
	}
	return prefix, whole[nCtx:], nil
}

// forcingGrammar is a GBNF grammar that admits exactly these tokens, by id,
// so the server cannot pick another tokenization of the same text.
func forcingGrammar(toks []int) string {
	var b strings.Builder
	b.WriteString("root ::=")
	for _, t := range toks {
		b.WriteString(" <[")
		b.WriteString(strconv.Itoa(t))
		b.WriteString("]>")
	}
	return b.String()
}

func (c *Client) llamaLL(ctx context.Context, r backends.LLRequest) (backends.LLResult, error) {
	if r.Continuation == "" {
		return backends.LLResult{}, errors.New("openai: continuation is empty")
	}
	ctxToks, err := c.tokenize(ctx, r.Context)
	if err != nil {
		return backends.LLResult{}, err
	}
	whole, err := c.tokenizePieces(ctx, r.Context+r.Continuation)
	if err != nil {
		return backends.LLResult{}, err
	}
	prefix, cont, err := splitContinuation(len(ctxToks), whole)
	if err != nil {
		return backends.LLResult{}, err
	}
	// The one context policy (backends.FitScore) against the server's n_ctx.
	// The embedded runtime reads all but the last token, up to the whole
	// window; llama-server refuses a prompt that fills n_ctx and stops
	// forcing tokens once prompt and forced tokens fill it, so the last
	// continuation token's logprob needs the sequence itself to fit: the
	// window here is one token smaller.
	si, err := c.info(ctx)
	if err != nil {
		return backends.LLResult{}, err
	}
	cut := 0
	if si.window > 0 {
		if cut, err = backends.FitScore(len(whole), len(prefix), si.window-1, c.cfg.StrictContext); err != nil {
			return backends.LLResult{}, err
		}
		prefix = backends.CutLeft(prefix, cut)
	}
	all := append([]int(nil), prefix...)
	for _, p := range cont {
		all = append(all, p.ID)
	}
	res := backends.LLResult{IsGreedy: true, Tokens: all[len(prefix):], TokenLogProbs: make([]float64, len(cont)), ContextTruncated: cut}
	for i := 0; i < len(cont); {
		if !cont[i].Whole {
			lp, top1, err := c.llamaTokenLogprob(ctx, all[:len(prefix)+i], cont[i].ID)
			if err != nil {
				return backends.LLResult{}, err
			}
			res.TokenLogProbs[i] = lp
			res.IsGreedy = res.IsGreedy && top1
			i++
			continue
		}
		j := i
		for j < len(cont) && cont[j].Whole {
			j++
		}
		lps, greedy, err := c.llamaForced(ctx, all[:len(prefix)+i], all[len(prefix)+i:len(prefix)+j])
		if err != nil {
			return backends.LLResult{}, err
		}
		copy(res.TokenLogProbs[i:j], lps)
		res.IsGreedy = res.IsGreedy && greedy
		i = j
	}
	for _, v := range res.TokenLogProbs {
		res.LogProb += v
	}
	return res, nil
}

// llamaForced generates exactly toks after prompt and returns their logprobs.
func (c *Client) llamaForced(ctx context.Context, prompt, toks []int) ([]float64, bool, error) {
	b := llamaCompletionBody{
		Prompt:   prompt,
		NPredict: len(toks),
		NProbs:   1,
		Grammar:  forcingGrammar(toks),
	}
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/completion", b, &raw); err != nil {
		var he *HTTPError
		if errors.As(err, &he) && (he.Status == 404 || he.Status == 501) {
			return nil, false, fmt.Errorf("%v: %w", err, backends.ErrUnsupported)
		}
		return nil, false, err
	}
	return parseLlamaProbs(raw, toks)
}

// llamaTokenLogprob reads log P(tok | prompt) from the top-k list of a
// one-token generation. The generated token is forced to be one ASCII
// character so that the server reports it; k grows until tok is listed.
func (c *Client) llamaTokenLogprob(ctx context.Context, prompt []int, tok int) (logprob float64, top1 bool, err error) {
	for k := 64; ; k *= 16 {
		b := llamaCompletionBody{
			Prompt:   prompt,
			NPredict: 1,
			NProbs:   k,
			Grammar:  `root ::= [a-zA-Z0-9]`,
		}
		var resp llamaCompletionResponse
		if err := c.do(ctx, http.MethodPost, "/completion", b, &resp); err != nil {
			return 0, false, err
		}
		if len(resp.Probs) == 0 {
			return 0, false, unsupported("POST /completion returned no completion_probabilities")
		}
		top := resp.Probs[0].TopLogprobs
		for j, t := range top {
			if t.ID == tok {
				if math.IsNaN(t.Logprob) || t.Logprob > 0 {
					return 0, false, fmt.Errorf("openai: POST /completion: %w: logprob %v", errBadJSON, t.Logprob)
				}
				return t.Logprob, j == 0 || top[0].Logprob <= t.Logprob+1e-6, nil
			}
		}
		if len(top) < k || k > 1<<20 {
			return 0, false, fmt.Errorf("openai: POST /completion: token %d is not among the %d tokens listed", tok, len(top))
		}
	}
}

// parseLlamaProbs reads the forced tokens' raw logprobs from a /completion
// answer; greedy holds when each forced token was also the top-1.
func parseLlamaProbs(raw []byte, want []int) (lps []float64, greedy bool, err error) {
	const path = "/completion"
	var resp llamaCompletionResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, false, fmt.Errorf("openai: POST %s: %w: %v", path, errBadJSON, err)
	}
	if len(resp.Probs) == 0 {
		return nil, false, unsupported("POST %s returned no completion_probabilities", path)
	}
	if len(resp.Probs) < len(want) {
		return nil, false, fmt.Errorf("openai: POST %s: got %d token probabilities, want %d (generation stopped early)", path, len(resp.Probs), len(want))
	}
	greedy = true
	for i, tok := range want {
		p := resp.Probs[i]
		if p.Logprob == nil {
			if p.Prob != nil {
				return nil, false, fmt.Errorf("openai: POST %s: server sent post-sampling probabilities, not logprobs", path)
			}
			return nil, false, fmt.Errorf("openai: POST %s: %w: token %d has no logprob", path, errBadJSON, i)
		}
		if p.ID != tok {
			return nil, false, fmt.Errorf("openai: POST %s: grammar did not force token %d: got id %d, want %d", path, i, p.ID, tok)
		}
		v := *p.Logprob
		if math.IsNaN(v) || v > 0 {
			return nil, false, fmt.Errorf("openai: POST %s: %w: logprob %v", path, errBadJSON, v)
		}
		lps = append(lps, v)
		if len(p.TopLogprobs) == 0 || (p.TopLogprobs[0].ID != tok && p.TopLogprobs[0].Logprob > v+1e-6) {
			greedy = false
		}
	}
	return lps, greedy, nil
}
