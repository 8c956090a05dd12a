package gguf

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/grammar"
)

var _ backends.Backend = (*Model)(nil)

// batchSize bounds the tokens run through the network at once, which bounds
// the activation memory of long prompts. It is llama.cpp's default n_ubatch,
// so long prompts split where llama-server splits them.
const batchSize = 512

// Capabilities reports a log-likelihood and chat capable backend.
func (m *Model) Capabilities() backends.Capabilities {
	return backends.Capabilities{Name: "gguf:" + filepath.Base(m.path), LogLikelihood: true, Chat: m.chat.ok()}
}

// eval appends tokens to the cached sequence and returns the logits of the
// positions from firstLogit (relative to tokens) on.
func (m *Model) eval(ctx context.Context, tokens []int, firstLogit int) ([]float32, error) {
	var logits []float32
	for start := 0; start < len(tokens); start += batchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+batchSize, len(tokens))
		l, err := m.forward(tokens[start:end], max(firstLogit-start, 0))
		if err == nil {
			err = finite(l)
		}
		if err != nil {
			m.cache.tokens = m.cache.tokens[:0] // the cache may be half written
			return nil, err
		}
		logits = append(logits, l...)
	}
	return logits, nil
}

// finite checks logits for NaN and infinities: broken weights or an
// overflow, which every request would meet. Scanning them costs next to
// the matrix products that made them.
func finite(logits []float32) error {
	for i, v := range logits {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%w: logit %d is %v", backends.ErrNonFinite, i, v)
		}
	}
	return nil
}

// LogLikelihood scores each continuation given its context. The sequence is
// tokenized whole and split where the context's own tokens end (as
// lm-evaluation-harness does); requests are evaluated grouped by context, and
// the KV cache keeps the shared context, so the choices of one item cost the
// context once.
func (m *Model) LogLikelihood(ctx context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	type job struct {
		i      int
		all    []int
		nCtx   int
		cut    int
		sortBy string
	}
	jobs := make([]job, len(reqs))
	for i, r := range reqs {
		ctxToks := m.tok.Encode(r.Context, true)
		all := m.tok.Encode(r.Context+r.Continuation, true)
		if len(ctxToks) == 0 {
			return nil, fmt.Errorf("gguf: request %q: empty context and the model adds no BOS token", r.ID)
		}
		if len(all) <= len(ctxToks) {
			return nil, fmt.Errorf("gguf: request %q: continuation %q adds no tokens to the context", r.ID, r.Continuation)
		}
		// The one context policy of every backend (backends.FitScore).
		nCtx := len(ctxToks)
		cut, err := backends.FitScore(len(all), nCtx, m.ctxSize, !m.truncateLeft)
		if err != nil {
			return nil, fmt.Errorf("gguf: request %q: %w", r.ID, err)
		}
		all = backends.CutLeft(all, cut)
		nCtx -= cut
		jobs[i] = job{i: i, all: all, nCtx: nCtx, cut: cut, sortBy: r.Context}
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].sortBy < jobs[order[b]].sortBy })

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("gguf: model is closed")
	}
	// Requests of this call share their common contexts (an item's choices
	// share its passage); nothing is kept from earlier calls, whose order
	// changes from run to run (see resetCache).
	m.resetCache()
	out := make([]backends.LLResult, len(reqs))
	for _, oi := range order {
		j := jobs[oi]
		start := time.Now()
		res, err := m.score(ctx, j.all, j.nCtx)
		if err != nil {
			backends.ObserveCtx(ctx).Request("gguf", "loglikelihood", "error", time.Since(start))
			return nil, fmt.Errorf("gguf: request %q: %w", reqs[j.i].ID, err)
		}
		backends.ObserveCtx(ctx).Request("gguf", "loglikelihood", "ok", time.Since(start))
		backends.ObserveCtx(ctx).Tokens("gguf", len(j.all), 0)
		res.ID = reqs[j.i].ID
		res.ContextTruncated = j.cut
		out[j.i] = res
	}
	return out, nil
}

// score returns the log-probabilities of all[nCtx:] given all[:nCtx].
func (m *Model) score(ctx context.Context, all []int, nCtx int) (backends.LLResult, error) {
	// llama-server scores a request by running its tokens from an empty
	// cache in one batch; choosing the arithmetic from the whole sequence
	// reproduces that, independent of which requests share a context.
	mode := attnF32
	if len(all) < faTileQ {
		mode = attnF16
	}
	keep := m.prepare(all, nCtx-1, mode)
	feed := all[keep : len(all)-1]
	logits, err := m.eval(ctx, feed, nCtx-1-keep)
	if err != nil {
		return backends.LLResult{}, err
	}
	V := m.cfg.Vocab
	res := backends.LLResult{IsGreedy: true, Tokens: append([]int(nil), all[nCtx:]...)}
	for r, t := range all[nCtx:] {
		row := logits[r*V : (r+1)*V]
		lp, greedy := logProb(row, t)
		res.TokenLogProbs = append(res.TokenLogProbs, lp)
		res.LogProb += lp
		res.IsGreedy = res.IsGreedy && greedy
	}
	return res, nil
}

// logProb is log softmax(row)[t] in float64, and whether t is the argmax.
func logProb(row []float32, t int) (float64, bool) {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	mx := float64(row[best])
	var sum float64
	for _, v := range row {
		sum += math.Exp(float64(v) - mx)
	}
	return float64(row[t]) - mx - math.Log(sum), row[t] >= row[best]
}

// Generate completes each request greedily (Temperature 0) or by sampling
// with the request's seed, stopping at an end-of-generation token, a stop
// string (cut from the text), MaxTokens or the context size.
func (m *Model) Generate(ctx context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("gguf: model is closed")
	}
	out := make([]backends.Generation, len(reqs))
	for i, r := range reqs {
		start := time.Now()
		g, err := m.generate(ctx, r)
		if err != nil {
			backends.ObserveCtx(ctx).Request("gguf", "generate", "error", time.Since(start))
			return nil, fmt.Errorf("gguf: request %q: %w", r.ID, err)
		}
		backends.ObserveCtx(ctx).Request("gguf", "generate", "ok", time.Since(start))
		g.ID = r.ID
		out[i] = g
	}
	return out, nil
}

func (m *Model) generate(ctx context.Context, r backends.GenRequest) (backends.Generation, error) {
	prompt, stops := r.Prompt, r.Stop
	if len(r.Messages) > 0 {
		var err error
		if prompt, err = m.renderChat(r.Messages); err != nil {
			return backends.Generation{}, err
		}
		if r.JSONSchema == nil {
			// A format's stops stand in for an end of turn ("qa" ends an
			// answer at "\n"); under a schema the grammar ends the reply
			// (only end-of-generation may follow a complete match), and a
			// "\n" of the JSON's whitespace must not cut it.
			stops = append(append([]string(nil), stops...), m.chat.stops...)
		}
	}
	// A JSON schema constrains the reply as llama-server's json_schema does:
	// the schema becomes a grammar, and each step samples only among the
	// tokens the grammar can still accept (greedy stays the argmax of those).
	var gc *grammar.Constraint
	var gs grammar.State
	if r.JSONSchema != nil {
		var err error
		if gc, err = m.constraint(r.JSONSchema); err != nil {
			return backends.Generation{}, err
		}
		gs = gc.Start()
	}
	tokens := m.tok.Encode(prompt, true)
	if len(tokens) == 0 {
		return backends.Generation{}, fmt.Errorf("empty prompt and the model adds no BOS token")
	}
	// The one context policy of every backend (backends.FitGeneration):
	// the prompt is left-truncated so the answer has room, and the
	// generation reports how much was cut. The loop below stops at the
	// window, which is maxTokens as FitGeneration caps it.
	promptCut, _, err := backends.FitGeneration(len(tokens), m.ctxSize, r.MaxTokens, !m.truncateLeft)
	if err != nil {
		return backends.Generation{}, err
	}
	maxTokens := cmp.Or(max(r.MaxTokens, 0), backends.DefaultMaxTokens)
	tokens = backends.CutLeft(tokens, promptCut)
	m.resetCache() // a prompt is computed whole, whatever came before it
	logits, err := m.eval(ctx, tokens, len(tokens)-1)
	if err != nil {
		return backends.Generation{}, err
	}
	var rng *rand.Rand
	if r.Temperature > 0 {
		rng = rand.New(rand.NewPCG(uint64(r.Seed), 0x9e3779b97f4a7c15))
	}
	var gen []int
	defer func() { backends.ObserveCtx(ctx).Tokens("gguf", len(tokens), len(gen)) }()
	for {
		var mask []uint64
		if gc != nil {
			mask = gc.Allowed(gs)
		}
		next := sample(logits, r.Temperature, rng, mask)
		if next < 0 {
			if gc.Complete(gs) { // a vocabulary without end-of-generation tokens
				return backends.Generation{Text: m.tok.Decode(gen), FinishReason: "stop", Tokens: len(gen), PromptTruncated: promptCut}, nil
			}
			return backends.Generation{}, fmt.Errorf("json_schema: no token of the vocabulary continues %q in the schema's grammar", m.tok.Decode(gen))
		}
		if m.tok.IsEOG(next) {
			return backends.Generation{Text: m.tok.Decode(gen), FinishReason: "stop", Tokens: len(gen), PromptTruncated: promptCut}, nil
		}
		if gc != nil {
			gs, _ = gc.Accept(gs, next) // allowed by the mask, so accepted
		}
		gen = append(gen, next)
		text := m.tok.Decode(gen)
		if cut, ok := findStop(text, stops); ok {
			return backends.Generation{Text: text[:cut], FinishReason: "stop", Tokens: len(gen), PromptTruncated: promptCut}, nil
		}
		if len(gen) >= maxTokens || len(m.cache.tokens)+1 >= m.ctxSize {
			return backends.Generation{Text: text, FinishReason: "length", Tokens: len(gen), PromptTruncated: promptCut}, nil
		}
		if logits, err = m.eval(ctx, []int{next}, 0); err != nil {
			return backends.Generation{}, err
		}
	}
}

// findStop returns where the earliest stop string begins in text.
func findStop(text string, stops []string) (int, bool) {
	best := -1
	for _, s := range stops {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best, best >= 0
}

// sample picks the argmax when temp <= 0, else draws from softmax(logits/temp),
// among the tokens the mask allows (nil: all); -1 when it allows none.
func sample(logits []float32, temp float64, rng *rand.Rand, mask []uint64) int {
	best := -1
	for i, v := range logits {
		if allowed(mask, i) && (best < 0 || v > logits[best]) {
			best = i
		}
	}
	if best < 0 || temp <= 0 || rng == nil {
		return best
	}
	mx := float64(logits[best])
	probs := make([]float64, len(logits))
	var sum float64
	for i, v := range logits {
		if allowed(mask, i) {
			probs[i] = math.Exp((float64(v) - mx) / temp)
		}
		sum += probs[i]
	}
	u := rng.Float64() * sum
	for i, p := range probs {
		u -= p
		if u < 0 {
			return i
		}
	}
	return best
}
