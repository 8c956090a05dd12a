package httpjson

import (
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

// HTTPError is a non-2xx answer. Message is the server's error text with the
// API key removed.
type HTTPError struct {
	Name     string // the client's name, e.g. "openai"
	Method   string
	Endpoint string // the path given to Do, e.g. /v1/completions
	Status   int
	Message  string
}

func (e *HTTPError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s: %s %s: HTTP %d: %s", e.Name, e.Method, e.Endpoint, e.Status, msg)
}

// Retryable reports whether an answer with this status is worth another
// attempt: 429 and 5xx. 501 Not Implemented is permanent: llama-server uses
// it for unsupported features.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || (status >= 500 && status != http.StatusNotImplemented)
}

// transientError wraps failures that a retry may cure.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// Timeout and Temporary make a transient failure a net.Error, also after
// the client's retries are spent: a caller such as the Infer activity then
// tries the work again later (with its own backoff) instead of recording an
// outage of the server as the answer.
func (e *transientError) Timeout() bool {
	var ne net.Error
	return errors.Is(e.err, context.DeadlineExceeded) || errors.As(e.err, &ne) && ne.Timeout()
}
func (e *transientError) Temporary() bool { return true }

// IsTransient reports whether err is a failure that another attempt may
// cure: a retryable status, a timeout, or a refused or reset connection.
func IsTransient(err error) bool {
	var te *transientError
	return errors.As(err, &te)
}

// transportError classifies a failure below HTTP: per-attempt timeouts and
// refused or reset connections are transient; the caller's cancellation is not.
func (c *Client) transportError(ctx context.Context, method, path string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// url.Error repeats the URL, which holds no secret, but keep errors short.
	wrapped := fmt.Errorf("%s: %s %s: %s", c.Name, method, path, c.redact(rootCause(err).Error()))
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &transientError{fmt.Errorf("%s: %s %s: timed out after %v: %w", c.Name, method, path, c.Timeout, context.DeadlineExceeded)}
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE),
		rootCause(err).Error() == serverClosedIdle:
		return &transientError{wrapped}
	}
	return wrapped
}

// serverClosedIdle is the text of net/http's unexported errServerClosedIdle:
// a kept-alive connection the server closed as the request was sent on it.
// The transport resends only idempotent requests, so a POST meets it when
// a model server goes away or restarts; the request was never answered and
// another attempt on a new connection may be.
const serverClosedIdle = "http: server closed idle connection"

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
	ceil := c.BackoffMax
	if attempt < 30 {
		ceil = min(c.BackoffMax, c.BackoffBase<<attempt)
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

// errorMessage pulls the message out of an error body: OpenAI's
// {"error":{"message":...}}, text-embeddings-inference's {"error":"...",
// "error_type":...}, {"message":...} or FastAPI's {"detail":...}, falling
// back to the start of the body.
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
	if c.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.APIKey, "[redacted]")
}
