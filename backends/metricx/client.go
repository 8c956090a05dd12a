package metricx

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/glossobench/glossobench/backends/internal/httpjson"
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
	cfg      Config
	endpoint string // the /predict URL, which errors name
	api      *httpjson.Client
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
	cfg.Mode = cmp.Or(cfg.Mode, ModeHybrid)
	if _, err := parseMode(string(cfg.Mode)); err != nil {
		return nil, fmt.Errorf("metricx: %w", err)
	}
	if cfg.BatchSize < 0 || cfg.Concurrency < 0 || cfg.Timeout < 0 {
		return nil, errors.New("metricx: batch size, concurrency and timeout must not be negative")
	}
	cfg.BatchSize = cmp.Or(cfg.BatchSize, DefaultBatchSize)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	maxRetries := cfg.MaxRetries
	maxRetries = cmp.Or(maxRetries, DefaultMaxRetries)
	maxRetries = max(maxRetries, 0)
	var key string
	if cfg.APIKeyEnv != "" {
		if key = os.Getenv(cfg.APIKeyEnv); key == "" {
			return nil, fmt.Errorf("metricx: environment variable %s (spec option api_key_env) is empty or unset", cfg.APIKeyEnv)
		}
	}
	return &Client{
		cfg:      cfg,
		endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/predict",
		// No BaseURL: requests go to the whole endpoint URL, so errors name
		// the server, which is how a failed NLG axis note tells which one.
		api: httpjson.New(httpjson.Config{
			Name:             "metricx",
			APIKey:           key,
			Concurrency:      cfg.Concurrency,
			Timeout:          cfg.Timeout,
			MaxRetries:       maxRetries,
			MaxResponseBytes: maxBody,
		}),
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
// fits. TEI's other refusals, 424 (the model failed on this input) and 422
// (tokenization), are not retried: they would fail again.
func (c *Client) predict(ctx context.Context, inputs []string) ([]float64, error) {
	scores, err := c.post(ctx, inputs)
	var he *httpjson.HTTPError
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
	var preds [][]prediction
	if err := c.api.Do(ctx, http.MethodPost, c.endpoint, req, &preds); err != nil {
		return nil, err
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
