package openai

import (
	"context"

	"github.com/glossobench/glossobench/backends/internal/httpjson"
)

// DefaultMaxResponseBytes bounds how much of a response is read; echoed
// logprobs of a long prompt are large, but not this large.
const DefaultMaxResponseBytes = 64 << 20

// errBadJSON marks a response that is not the JSON we expected.
var errBadJSON = httpjson.ErrMalformed

// HTTPError is a non-2xx answer. Message is the server's error text with the
// API key removed.
type HTTPError = httpjson.HTTPError

// do sends one JSON request (in is nil for GET) and decodes the answer into
// out, retrying transient failures; see httpjson.Client.Do.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	return c.api.Do(ctx, method, path, in, out)
}

// doAside is do for a request the server answers outside its generation
// slots (tokenize, server settings): it does not count against
// Concurrency; see httpjson.Client.DoAside.
func (c *Client) doAside(ctx context.Context, method, path string, in, out any) error {
	return c.api.DoAside(ctx, method, path, in, out)
}
