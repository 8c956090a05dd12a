package openai

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/glossobench/glossobench/backends"
)

type genBody struct {
	Model          string             `json:"model,omitempty"`
	Messages       []backends.Message `json:"messages,omitempty"`
	Prompt         any                `json:"prompt,omitempty"` // text, or token ids once fitted
	MaxTokens      int                `json:"max_tokens,omitempty"`
	Temperature    float64            `json:"temperature"`
	Seed           int64              `json:"seed"`
	Stop           []string           `json:"stop,omitempty"`
	ResponseFormat *responseFormat    `json:"response_format,omitempty"`
	JSONSchema     map[string]any     `json:"json_schema,omitempty"` // llama-server's own field
	// CachePrompt false (llama-server): a prompt is computed whole, as the
	// embedded runtime computes it, not resumed from another request's
	// cache in another batch shape, which rounds differently.
	CachePrompt *bool `json:"cache_prompt,omitempty"`
}

type responseFormat struct {
	Type       string         `json:"type"`
	JSONSchema jsonSchemaSpec `json:"json_schema"`
}

type jsonSchemaSpec struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
}

type genResponse struct {
	Choices []struct {
		Text    string `json:"text"`
		Message *struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Generate answers each request through /v1/chat/completions (Messages set)
// or /v1/completions (raw Prompt), concurrently, in request order.
func (c *Client) Generate(ctx context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	out := make([]backends.Generation, len(reqs))
	err := c.forEach(ctx, len(reqs), func(ctx context.Context, i int) error {
		g, err := c.generate(ctx, reqs[i])
		if err != nil {
			return fmt.Errorf("generate %q: %w", reqs[i].ID, err)
		}
		out[i] = g
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Client) generate(ctx context.Context, r backends.GenRequest) (backends.Generation, error) {
	si, err := c.info(ctx)
	if err != nil {
		return backends.Generation{}, err
	}
	b := genBody{
		Model:       si.model,
		MaxTokens:   cmp.Or(max(r.MaxTokens, 0), backends.DefaultMaxTokens),
		Temperature: r.Temperature,
		Seed:        r.Seed,
		Stop:        r.Stop,
	}
	msgs, prompt := r.Messages, r.Prompt
	if len(msgs) > 0 && c.format != nil {
		// The config's chat format, rendered here as the embedded backend
		// renders it, with its stops; the text goes to /v1/completions.
		prompt, msgs = c.format.Render(msgs), nil
		b.Stop = append(slices.Clone(r.Stop), c.format.Stops...)
	}
	if len(msgs) > 0 && c.format == nil {
		fl, err := c.resolveFlavor(ctx)
		if err != nil {
			return backends.Generation{}, err
		}
		if fl == FlavorLlamaServer {
			// llama-server renders its own template on /apply-template
			// exactly as for /v1/chat/completions (and as the embedded
			// backend renders the GGUF's); the text then takes the
			// completion route, so it is fitted to the window like any
			// prompt instead of failing with HTTP 400 when too long.
			var out struct {
				Prompt *string `json:"prompt"`
			}
			if err := c.doAside(ctx, "POST", "/apply-template", map[string]any{"messages": msgs}, &out); err != nil {
				return backends.Generation{}, err
			}
			if out.Prompt == nil {
				return backends.Generation{}, fmt.Errorf("openai: POST /apply-template: %w: no prompt", errBadJSON)
			}
			prompt, msgs = *out.Prompt, nil
		}
	}
	path := "/v1/chat/completions"
	cut := 0
	if len(msgs) > 0 && c.format == nil {
		// vLLM renders its template on /tokenize too: the chat prompt is
		// fitted like any other, and a cut one goes to /v1/completions as
		// token ids.
		toks, maxGen, n, err := c.fitChat(ctx, msgs, b.MaxTokens)
		if err != nil {
			return backends.Generation{}, err
		}
		b.MaxTokens, cut = maxGen, n
		if toks != nil {
			b.Prompt, msgs, path = toks, nil, "/v1/completions"
		}
	}
	if len(msgs) > 0 {
		b.Messages = msgs
		if r.JSONSchema != nil {
			b.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchemaSpec{Name: "output", Schema: r.JSONSchema}}
		}
	} else {
		if c.cfg.Flavor == FlavorChatOnly {
			return backends.Generation{}, fmt.Errorf("openai: flavor chat-only cannot send a raw prompt; the request needs messages")
		}
		fl, err := c.resolveFlavor(ctx)
		if err != nil {
			return backends.Generation{}, err
		}
		if path != "/v1/completions" { // not already fitted as a chat prompt
			path = "/v1/completions"
			toks, maxGen, n, err := c.fitGeneration(ctx, prompt, b.MaxTokens)
			if err != nil {
				return backends.Generation{}, err
			}
			b.Prompt, b.MaxTokens, cut = prompt, maxGen, n
			if toks != nil {
				b.Prompt = toks
			}
		}
		if r.JSONSchema != nil {
			if fl == FlavorLlamaServer {
				b.JSONSchema = r.JSONSchema
			} else {
				b.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchemaSpec{Name: "output", Schema: r.JSONSchema}}
			}
		}
		if fl == FlavorLlamaServer {
			b.CachePrompt = new(bool)
		}
	}
	var resp genResponse
	if err := c.do(ctx, "POST", path, b, &resp); err != nil {
		return backends.Generation{}, err
	}
	if resp.Usage != nil {
		backends.ObserveCtx(ctx).Tokens("openai", resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
	}
	g, err := parseGeneration(r.ID, path, &resp)
	g.PromptTruncated = cut
	return g, err
}

func parseGeneration(id, path string, resp *genResponse) (backends.Generation, error) {
	if len(resp.Choices) == 0 {
		return backends.Generation{}, fmt.Errorf("openai: POST %s: %w: no choices", path, errBadJSON)
	}
	ch := resp.Choices[0]
	g := backends.Generation{ID: id, Text: ch.Text, FinishReason: "stop"}
	if ch.Message != nil && ch.Message.Content != nil {
		g.Text = *ch.Message.Content
	}
	// OpenAI says "length"; some servers say "max_tokens". Everything else
	// (stop, eos, tool_calls, content_filter) is a stop before the cap.
	if ch.FinishReason != nil && (*ch.FinishReason == "length" || *ch.FinishReason == "max_tokens") {
		g.FinishReason = "length"
	}
	if resp.Usage != nil {
		g.Tokens = resp.Usage.CompletionTokens
	}
	return g, nil
}
