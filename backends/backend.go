// Package backends defines the model interface every inference and judge
// client implements: OpenAI-compatible HTTP servers (backends/openai) and the
// embedded pure-Go GGUF runtime (backends/gguf). It knows nothing of Temporal.
package backends

import (
	"context"
	"errors"
)

// ErrUnsupported is returned by LogLikelihood when the server cannot give
// log-probabilities; cloze scoring then reports "unsupported" instead of a
// made-up number.
var ErrUnsupported = errors.New("backend does not support log-likelihood")

// ErrNonFinite is returned when a model computes NaN or an infinity where a
// number is due (logits, log-probabilities): broken weights or an overflow,
// which every request meets alike.
var ErrNonFinite = errors.New("the model computed NaN or infinite values")

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"` // system | user | assistant
	Content string `json:"content"`
}

// GenRequest asks for one completion. When Messages is set the backend applies
// the model's chat template (or the server's /v1/chat/completions); otherwise
// Prompt is sent raw.
type GenRequest struct {
	ID          string    `json:"id"`
	Prompt      string    `json:"prompt,omitempty"`
	Messages    []Message `json:"messages,omitempty"`
	MaxTokens   int       `json:"max_tokens"`
	Temperature float64   `json:"temperature"` // 0 = greedy
	Seed        int64     `json:"seed"`
	Stop        []string  `json:"stop,omitempty"`
	// JSONSchema, when set, asks for output constrained to this schema where the
	// backend supports it (llama-server, vLLM, the embedded GGUF runtime, which
	// fails the request on a keyword it cannot enforce); others ignore it.
	JSONSchema map[string]any `json:"json_schema,omitempty"`
}

// Generation is the answer to one GenRequest.
type Generation struct {
	ID           string `json:"id"`
	Text         string `json:"text"`
	FinishReason string `json:"finish_reason"` // "stop" or "length" (hit MaxTokens)
	Tokens       int    `json:"tokens,omitempty"`
	// PromptTruncated counts prompt tokens dropped from the left to fit the model's window.
	PromptTruncated int `json:"prompt_truncated,omitempty"`
}

// Truncated reports whether generation stopped at the token cap.
func (g Generation) Truncated() bool { return g.FinishReason == "length" }

// LLRequest asks for log P(Continuation | Context).
type LLRequest struct {
	ID           string `json:"id"`
	Context      string `json:"context"`
	Continuation string `json:"continuation"`
}

// LLResult is the log-likelihood of one continuation.
type LLResult struct {
	ID            string    `json:"id"`
	LogProb       float64   `json:"logprob"`        // sum over continuation tokens
	TokenLogProbs []float64 `json:"token_logprobs"` // one per continuation token
	Tokens        []int     `json:"tokens,omitempty"`
	IsGreedy      bool      `json:"is_greedy"` // every continuation token was the argmax
	// ContextTruncated counts context tokens dropped from the left to fit the model's window.
	ContextTruncated int `json:"context_truncated,omitempty"`
}

// Capabilities says what a backend can do.
type Capabilities struct {
	Name          string `json:"name"` // e.g. "openai:http://127.0.0.1:8080", "gguf:tiny-llama.gguf"
	LogLikelihood bool   `json:"loglikelihood"`
	Chat          bool   `json:"chat"`
}

// Backend is a model. Implementations are safe for concurrent use; results
// come back in request order.
type Backend interface {
	Generate(ctx context.Context, reqs []GenRequest) ([]Generation, error)
	LogLikelihood(ctx context.Context, reqs []LLRequest) ([]LLResult, error)
	Capabilities() Capabilities
	Close() error
}
