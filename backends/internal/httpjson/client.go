// Package httpjson is the retrying JSON-over-HTTP client that the model
// server backends (backends/openai, backends/metricx) share: one request is
// one JSON body and one JSON answer, transient failures are retried with
// exponential backoff and full jitter, and errors never contain the API key.
package httpjson

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/glossobench/glossobench/backends"
)

// ErrMalformed marks a 2xx answer that is not the JSON the caller expected.
var ErrMalformed = errors.New("malformed response")

// Config configures a Client. Callers apply their own defaults; New
// requires Concurrency, Timeout and MaxResponseBytes to be positive.
type Config struct {
	Name             string        // starts every error, e.g. "openai"
	BaseURL          string        // prepended to each path given to Do; "" when the paths are whole URLs
	APIKey           string        // sent as "Authorization: Bearer"; "" sends none
	Concurrency      int           // requests in flight at once, across all calls to Do (DoAside's are not counted)
	Timeout          time.Duration // per attempt
	MaxRetries       int           // attempts after the first; 0 means none
	MaxResponseBytes int64         // a longer response is an error, not truncated

	// After failed attempt n (from 0) the client waits a server's
	// Retry-After plus a duration drawn uniformly from
	// [0, min(BackoffMax, BackoffBase·2^n)). Zero means 250ms and 20s.
	BackoffBase time.Duration
	BackoffMax  time.Duration
}

// Client sends JSON requests to one server. It is safe for concurrent use.
// The embedded Config is read on every request, so tests can shorten the
// backoff before the first one; Concurrency is fixed by New.
type Client struct {
	Config
	http  *http.Client
	slots chan struct{} // bounds in-flight requests across all calls
}

// New returns a client for cfg without contacting the server.
func New(cfg Config) *Client {
	if cfg.Concurrency <= 0 || cfg.Timeout <= 0 || cfg.MaxResponseBytes <= 0 {
		panic(fmt.Sprintf("httpjson: %s: concurrency %d, timeout %v and response cap %d must be positive",
			cfg.Name, cfg.Concurrency, cfg.Timeout, cfg.MaxResponseBytes))
	}
	cfg.BackoffBase = cmp.Or(cfg.BackoffBase, 250*time.Millisecond)
	cfg.BackoffMax = cmp.Or(cfg.BackoffMax, 20*time.Second)
	// The default transport keeps only 2 idle connections per host, which
	// would make every request beyond the second open a new connection.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 2 * cfg.Concurrency
	tr.MaxIdleConnsPerHost = cfg.Concurrency
	return &Client{
		Config: cfg,
		http:   &http.Client{Transport: tr},
		slots:  make(chan struct{}, cfg.Concurrency),
	}
}

// Close releases idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

// Do sends one JSON request to BaseURL+path (in is nil for a request
// without a body) and decodes the answer into out, retrying transient
// failures. Each attempt holds one concurrency slot; waits between attempts
// hold none. A transient failure that outlasts the retries is still a
// net.Error (see IsTransient), so a caller can try again later.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return c.do(ctx, method, path, in, out, true)
}

// DoAside is Do for a request the server answers beside its model work, in
// none of its generation slots: tokenizing a text, reading its settings.
// It holds none of the client's concurrency slots, which bound the
// requests that occupy the server's: a slot held through such a round trip
// would leave one of the server's empty, and with Concurrency set to the
// server's slot count the server could never be full.
func (c *Client) DoAside(ctx context.Context, method, path string, in, out any) error {
	return c.do(ctx, method, path, in, out, false)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any, slotted bool) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("%s: %s %s: encoding request: %w", c.Name, method, path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		data, retryAfter, err := c.attempt(ctx, method, path, body, slotted)
		if err == nil {
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("%s: %s %s: %w: %v (body starts %q)", c.Name, method, path, ErrMalformed, err, c.redact(excerpt(data)))
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %s %s: %w", c.Name, method, path, ctx.Err())
		}
		if !IsTransient(err) {
			return err
		}
		if attempt >= c.MaxRetries {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
		}
		backends.ObserveCtx(ctx).Retry(c.Name, endpoint(path))
		t := time.NewTimer(c.retryWait(attempt, retryAfter))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %s %s: %w (while waiting to retry after: %v)", c.Name, method, path, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// attempt makes one HTTP request. It returns the body of a 2xx answer, or an
// error (a *transientError when a retry may help) and the Retry-After delay.
func (c *Client) attempt(ctx context.Context, method, path string, body []byte, slotted bool) ([]byte, time.Duration, error) {
	if slotted {
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		defer func() { <-c.slots }()
	}

	actx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %s %s: %v", c.Name, method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		backends.ObserveCtx(ctx).Request(c.Name, endpoint(path), "error", time.Since(start))
		return nil, 0, c.transportError(ctx, method, path, err)
	}
	defer resp.Body.Close()
	limit := c.MaxResponseBytes
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	backends.ObserveCtx(ctx).Request(c.Name, endpoint(path), strconv.Itoa(resp.StatusCode), time.Since(start))
	if err != nil {
		return nil, 0, c.transportError(ctx, method, path, err)
	}
	if int64(len(data)) > limit {
		// Cut off here, a reply is never held whole; a retry would be as long.
		return nil, 0, fmt.Errorf("%s: %s %s: HTTP %d: the response is longer than this client's cap of %d bytes", c.Name, method, path, resp.StatusCode, limit)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, 0, nil
	}
	he := &HTTPError{Name: c.Name, Method: method, Endpoint: path, Status: resp.StatusCode, Message: c.redact(errorMessage(data))}
	if Retryable(resp.StatusCode) {
		return nil, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), &transientError{he}
	}
	return nil, 0, he
}

// endpoint is what a request's metrics are labelled with: the path alone,
// without a whole URL's host or query, which may name a private host or
// carry a key.
func endpoint(path string) string {
	if u, err := url.Parse(path); err == nil {
		return u.Path
	}
	return "?"
}
