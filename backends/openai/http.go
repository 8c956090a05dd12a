package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultMaxResponseBytes bounds how much of a response is read; echoed
// logprobs of a long prompt are large, but not this large.
const DefaultMaxResponseBytes = 64 << 20

// errBadJSON marks a response that is not the JSON we expected.
var errBadJSON = errors.New("malformed response")

// HTTPError is a non-2xx answer. Message is the server's error text with the
// API key removed.
type HTTPError struct {
	Method   string
	Endpoint string // path only, e.g. /v1/completions
	Status   int
	Message  string
}

func (e *HTTPError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("openai: %s %s: HTTP %d: %s", e.Method, e.Endpoint, e.Status, msg)
}

// retryable reports whether the status is worth another attempt. 501 Not
// Implemented is permanent: llama-server uses it for unsupported features.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || (status >= 500 && status != http.StatusNotImplemented)
}

// do sends one JSON request (in is nil for GET) and decodes the answer into
// out, retrying transient failures. Each attempt holds one concurrency slot.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("openai: %s %s: encoding request: %w", method, path, err)
		}
	}
	for attempt := 0; ; attempt++ {
		data, retryAfter, err := c.attempt(ctx, method, path, body)
		if err == nil {
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("openai: %s %s: %w: %v (body starts %q)", method, path, errBadJSON, err, c.redact(excerpt(data)))
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("openai: %s %s: %w", method, path, ctx.Err())
		}
		if !isTransient(err) {
			return err
		}
		if attempt >= c.maxRetries {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
		}
		t := time.NewTimer(c.retryWait(attempt, retryAfter))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("openai: %s %s: %w (while waiting to retry after: %v)", method, path, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// transientError wraps failures that a retry may cure.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Timeout and Temporary make a transient failure a net.Error, also after
// this client's retries are spent: a caller such as the Infer activity then
// tries the item again later (with its own backoff) instead of recording an
// outage of the server as the item's answer.
func (e *transientError) Timeout() bool {
	var ne net.Error
	return errors.Is(e.err, context.DeadlineExceeded) || errors.As(e.err, &ne) && ne.Timeout()
}
func (e *transientError) Temporary() bool { return true }

func isTransient(err error) bool {
	var te *transientError
	return errors.As(err, &te)
}

// attempt makes one HTTP request. It returns the body of a 2xx answer, or an
// error (a *transientError when a retry may help) and the Retry-After delay.
func (c *Client) attempt(ctx context.Context, method, path string, body []byte) ([]byte, time.Duration, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-c.slots }()

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, method, c.root+path, rd)
	if err != nil {
		return nil, 0, fmt.Errorf("openai: %s %s: %v", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, c.transportError(ctx, method, path, err)
	}
	defer resp.Body.Close()
	limit := c.cfg.MaxResponseBytes
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, 0, c.transportError(ctx, method, path, err)
	}
	if int64(len(data)) > limit {
		// Cut off here, a reply is never held whole; a retry would be as long.
		return nil, 0, fmt.Errorf("openai: %s %s: HTTP %d: the response is longer than this client's cap of %d bytes", method, path, resp.StatusCode, limit)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, 0, nil
	}
	he := &HTTPError{Method: method, Endpoint: path, Status: resp.StatusCode, Message: c.redact(errorMessage(data))}
	if retryable(resp.StatusCode) {
		return nil, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), &transientError{he}
	}
	return nil, 0, he
}

// transportError classifies a failure below HTTP: per-attempt timeouts and
// refused or reset connections are transient; the caller's cancellation is not.
func (c *Client) transportError(ctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// url.Error repeats the URL, which holds no secret, but keep errors short.
	wrapped := fmt.Errorf("openai: %s %s: %s", method, path, c.redact(rootCause(err).Error()))
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &transientError{fmt.Errorf("openai: %s %s: timed out after %v: %w", method, path, c.cfg.Timeout, context.DeadlineExceeded)}
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return &transientError{wrapped}
	}
	return wrapped
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// backoff is exponential backoff with full jitter: uniform in [0, min(max, base·2^attempt)).
func (c *Client) backoff(attempt int) time.Duration {
	ceil := c.backoffMax
	if attempt < 30 {
		ceil = min(c.backoffMax, c.backoffBase<<attempt)
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceil)))
}

// retryWait is the pause before retry attempt+1. A server's Retry-After is a
// floor; the jittered backoff on top keeps the clients it told the same delay
// from returning in one burst.
func (c *Client) retryWait(attempt int, retryAfter time.Duration) time.Duration {
	return retryAfter + c.backoff(attempt)
}

// maxRetryAfter caps a server's Retry-After so a bad header cannot stall a run.
const maxRetryAfter = 5 * time.Minute

// parseRetryAfter reads delay-seconds or an HTTP date; 0 means absent.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		d = time.Duration(s * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}

// errorMessage pulls the message out of an OpenAI-style error body
// ({"error":{"message":...}} or {"error":"..."} or {"message":...}),
// falling back to the start of the body.
func errorMessage(data []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(data, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case e.Message != "":
			return e.Message
		case e.Detail != nil:
			b, _ := json.Marshal(e.Detail)
			return excerpt(b)
		}
	}
	return excerpt(data)
}

// excerpt is the start of a body, for error messages.
func excerpt(data []byte) string {
	const n = 200
	s := strings.TrimSpace(string(data))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// redact removes the API key from text that may reach an error or a log.
func (c *Client) redact(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[redacted]")
}
