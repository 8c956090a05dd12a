package metricx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults for zero Config fields.
const (
	DefaultBatchSize   = 32 // text-embeddings-inference's default --max-client-batch-size
	DefaultConcurrency = 2
	DefaultTimeout     = 120 * time.Second
	DefaultMaxRetries  = 4
)

// MaxScore is MetricX-24's worst error score; scores are clipped to [0, MaxScore].
const MaxScore = 25

// maxBody bounds how much of an answer is read: a batch's scores are small.
const maxBody = 8 << 20

// maxRetryAfter caps a server's Retry-After so a bad header cannot stall a run.
const maxRetryAfter = 2 * time.Minute

// Config configures a Client. The API key is never part of it: APIKeyEnv
// names the environment variable that holds it.
type Config struct {
	BaseURL     string // http(s)://host:port[/path]; /predict is appended
	Mode        Mode   // "" means ModeHybrid
	APIKeyEnv   string
	BatchSize   int           // 0 means DefaultBatchSize
	Concurrency int           // 0 means DefaultConcurrency
	Timeout     time.Duration // per request; 0 means DefaultTimeout
	MaxRetries  int           // retries after the first attempt; 0 means DefaultMaxRetries, <0 none
}

// Client scores segments with a MetricX-24 model behind a /predict server.
// It is safe for concurrent use and opens no connection until Score.
type Client struct {
	cfg        Config
	endpoint   string
	key        string
	maxRetries int
	http       *http.Client

	// Backoff parameters; tests shorten them.
	backoffBase time.Duration
	backoffMax  time.Duration
}

// Open parses a spec (see ParseSpec) and returns its client.
func Open(spec string) (*Client, error) {
	cfg, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// New checks cfg and returns a client without contacting the server.
func New(cfg Config) (*Client, error) {
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("metricx: base URL %q must start with http:// or https://", cfg.BaseURL)
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeHybrid
	}
	if _, err := parseMode(string(cfg.Mode)); err != nil {
		return nil, fmt.Errorf("metricx: %w", err)
	}
	if cfg.BatchSize < 0 || cfg.Concurrency < 0 || cfg.Timeout < 0 {
		return nil, errors.New("metricx: batch size, concurrency and timeout must not be negative")
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	maxRetries := cfg.MaxRetries
	if maxRetries == 0 {
		maxRetries = DefaultMaxRetries
	}
	maxRetries = max(maxRetries, 0)
	var key string
	if cfg.APIKeyEnv != "" {
		if key = os.Getenv(cfg.APIKeyEnv); key == "" {
			return nil, fmt.Errorf("metricx: environment variable %s (spec option api_key_env) is empty or unset", cfg.APIKeyEnv)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cfg.Concurrency
	return &Client{
		cfg:         cfg,
		endpoint:    strings.TrimRight(cfg.BaseURL, "/") + "/predict",
		key:         key,
		maxRetries:  maxRetries,
		http:        &http.Client{Transport: tr},
		backoffBase: 250 * time.Millisecond,
		backoffMax:  20 * time.Second,
	}, nil
}

// Score returns one MetricX-24 error score in [0, 25] per segment, in order.
// refs is ignored in QE mode. Batches go out Concurrency at a time; the
// first batch that fails for good cancels the rest and its error is
// returned.
func (c *Client) Score(ctx context.Context, sources, hyps, refs []string) ([]float64, error) {
	if len(sources) != len(hyps) || (c.cfg.Mode == ModeHybrid && len(refs) != len(hyps)) {
		return nil, fmt.Errorf("metricx: %d sources, %d hypotheses and %d references", len(sources), len(hyps), len(refs))
	}
	inputs := make([]string, len(hyps))
	for i := range hyps {
		ref := ""
		if c.cfg.Mode == ModeHybrid {
			ref = refs[i]
		}
		inputs[i] = Input(c.cfg.Mode, sources[i], hyps[i], ref)
	}
	out := make([]float64, len(inputs))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	starts := make(chan int)
	var wg sync.WaitGroup
	for range min(c.cfg.Concurrency, (len(inputs)+c.cfg.BatchSize-1)/c.cfg.BatchSize) {
		wg.Go(func() {
			for lo := range starts {
				hi := min(lo+c.cfg.BatchSize, len(inputs))
				scores, err := c.predict(ctx, inputs[lo:hi])
				if err != nil {
					cancel(err)
					continue // drain starts; the sender stops on cancellation
				}
				copy(out[lo:hi], scores)
			}
		})
	}
send:
	for lo := 0; lo < len(inputs); lo += c.cfg.BatchSize {
		select {
		case starts <- lo:
		case <-ctx.Done():
			break send
		}
	}
	close(starts)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// predict scores one batch. A 413 answer means the batch is larger than
// the server accepts (TEI's --max-client-batch-size): it is halved until it
// fits.
func (c *Client) predict(ctx context.Context, inputs []string) ([]float64, error) {
	scores, err := c.post(ctx, inputs)
	var he *HTTPError
	if errors.As(err, &he) && he.Status == http.StatusRequestEntityTooLarge && len(inputs) > 1 {
		h := len(inputs) / 2
		a, err := c.predict(ctx, inputs[:h])
		if err != nil {
			return nil, err
		}
		b, err := c.predict(ctx, inputs[h:])
		if err != nil {
			return nil, err
		}
		return append(a, b...), nil
	}
	return scores, err
}

// predictRequest is TEI's /predict body. Each input is a one-element list
// (a single sequence, not a pair), which TEI reads as a batch even when
// there is one. raw_scores keeps TEI from applying a sigmoid to the
// regression output; truncate mirrors predict.py's truncation=True.
type predictRequest struct {
	Inputs    [][]string `json:"inputs"`
	Truncate  bool       `json:"truncate"`
	RawScores bool       `json:"raw_scores"`
}

// prediction is one label's score in TEI's answer.
type prediction struct {
	Score *float64 `json:"score"`
	Label string   `json:"label"`
}

// post sends one batch, retrying transient failures, and checks the answer.
func (c *Client) post(ctx context.Context, inputs []string) ([]float64, error) {
	req := predictRequest{Inputs: make([][]string, len(inputs)), Truncate: true, RawScores: true}
	for i, s := range inputs {
		req.Inputs[i] = []string{s}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("metricx: POST %s: encoding request: %w", c.endpoint, err)
	}
	data, err := c.do(ctx, body)
	if err != nil {
		return nil, err
	}
	var preds [][]prediction
	if err := json.Unmarshal(data, &preds); err != nil {
		return nil, fmt.Errorf("metricx: POST %s: malformed answer: %v (body starts %q)", c.endpoint, err, c.redact(excerpt(data)))
	}
	if len(preds) != len(inputs) {
		return nil, fmt.Errorf("metricx: POST %s: %d predictions for %d inputs", c.endpoint, len(preds), len(inputs))
	}
	scores := make([]float64, len(inputs))
	for i, p := range preds {
		if len(p) != 1 || p[0].Score == nil {
			return nil, fmt.Errorf("metricx: POST %s: input %d has %d labelled scores; MetricX-24 is a regression model with exactly one", c.endpoint, i, len(p))
		}
		x := *p[0].Score
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("metricx: POST %s: input %d: score %v", c.endpoint, i, x)
		}
		scores[i] = Clip(x)
	}
	return scores, nil
}

// Clip bounds a score to [0, 25], as MetricX-24's MT5ForRegression does.
func Clip(x float64) float64 { return min(max(x, 0), MaxScore) }

// HTTPError is a non-2xx answer. Message is the server's error text with
// the API key removed.
type HTTPError struct {
	URL     string
	Status  int
	Message string
}

func (e *HTTPError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("metricx: POST %s: HTTP %d: %s", e.URL, e.Status, msg)
}

// transientError wraps failures that another attempt may cure.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// do posts body, retrying with exponential backoff and full jitter.
func (c *Client) do(ctx context.Context, body []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		data, retryAfter, err := c.attempt(ctx, body)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("metricx: POST %s: %w", c.endpoint, context.Cause(ctx))
		}
		var te *transientError
		if !errors.As(err, &te) {
			return nil, err
		}
		if attempt >= c.maxRetries {
			return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
		}
		wait := retryAfter
		if wait <= 0 {
			wait = c.backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("metricx: POST %s: %w (while waiting to retry after: %v)", c.endpoint, context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

// attempt makes one request and returns a 2xx body, or an error (a
// *transientError when a retry may help) with the Retry-After delay.
func (c *Client) attempt(ctx context.Context, body []byte) ([]byte, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("metricx: POST %s: %v", c.endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, 0, c.transportError(ctx, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, 0, nil
	}
	he := &HTTPError{URL: c.endpoint, Status: resp.StatusCode, Message: c.redact(errorMessage(data))}
	// 501 is permanent; TEI's 424 (the model failed on this input) and 422
	// (tokenization) would fail again.
	if resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented) {
		return nil, retryAfterDelay(resp.Header.Get("Retry-After")), &transientError{he}
	}
	return nil, 0, he
}

// transportError classifies a failure below HTTP: timeouts and refused or
// reset connections are transient; the caller's cancellation is not.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	cause := err
	for u := errors.Unwrap(cause); u != nil; u = errors.Unwrap(cause) {
		cause = u
	}
	wrapped := fmt.Errorf("metricx: POST %s: %s", c.endpoint, c.redact(cause.Error()))
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return &transientError{fmt.Errorf("metricx: POST %s: timed out after %v", c.endpoint, c.cfg.Timeout)}
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &transientError{wrapped}
	}
	return wrapped
}

// backoff is uniform in [0, min(backoffMax, backoffBase·2^attempt)).
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

// retryAfterDelay reads Retry-After in seconds (TEI and proxies send
// seconds); 0 means absent or unreadable.
func retryAfterDelay(v string) time.Duration {
	s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || s <= 0 {
		return 0
	}
	return min(time.Duration(s*float64(time.Second)), maxRetryAfter)
}

// errorMessage pulls the message out of a TEI error body ({"error": "...",
// "error_type": "..."}) or an OpenAI-style one, else the start of the body.
func errorMessage(data []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(data, &e) == nil {
		var s string
		var inner struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case e.Message != "":
			return e.Message
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
