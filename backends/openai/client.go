package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/chattemplate"
	"github.com/glossobench/glossobench/backends/internal/httpjson"
	"golang.org/x/sync/errgroup"
)

// Server flavours. They decide how log-likelihoods are obtained.
const (
	FlavorAuto        = "auto"         // probe the server once, on first use
	FlavorVLLM        = "vllm"         // echo + logprobs on /v1/completions (vLLM, SGLang)
	FlavorLlamaServer = "llama-server" // /tokenize + /completion with a forcing grammar
	FlavorChatOnly    = "chat-only"    // /v1/chat/completions only; no log-likelihood
)

// Defaults for zero Config fields.
const (
	DefaultConcurrency = 8
	DefaultTimeout     = 120 * time.Second
	DefaultMaxRetries  = 5
)

// Config configures a Client. The API key is never part of it: APIKeyEnv
// names the environment variable that holds the key.
type Config struct {
	BaseURL     string        // e.g. http://127.0.0.1:8080, with or without /v1
	Model       string        // model name sent in requests; "" is omitted (fine for llama-server)
	APIKeyEnv   string        // name of the env var holding the key; "" sends no key
	Flavor      string        // auto | vllm | llama-server | chat-only; "" means auto
	Concurrency int           // max model requests in flight (completions, chat); tokenize and settings reads are not counted; 0 means DefaultConcurrency
	Timeout     time.Duration // per HTTP request; 0 means DefaultTimeout
	MaxRetries  int           // retries after the first attempt; 0 means DefaultMaxRetries, <0 none
	// MaxResponseBytes bounds how much of one response is read; 0 means
	// DefaultMaxResponseBytes. A longer response is an error, not truncated.
	MaxResponseBytes int64
	// ChatFormat names a built-in chat format (chattemplate.Named): chat
	// requests are then rendered here and sent as text to /v1/completions,
	// exactly as the embedded backend renders them. "" leaves chat
	// messages to the server's own template on /v1/chat/completions.
	ChatFormat string
	// StrictContext fails a request longer than the server's window
	// instead of left-truncating it (backends.FitGeneration, FitScore).
	StrictContext bool
}

// Client talks to one OpenAI-compatible server. It implements
// backends.Backend and is safe for concurrent use.
type Client struct {
	cfg  Config
	root string // base URL without trailing "/" or "/v1"
	api  *httpjson.Client

	mu            sync.Mutex
	flavor        string // resolved flavour; "" until an auto probe succeeds
	llUnsupported bool   // set once the server proved it cannot give logprobs
	tokenizeKnown bool   // whether hasTokenize has been learnt
	hasTokenize   bool   // the echo server has a vLLM-style /tokenize
	infoKnown     bool   // srv has been learnt
	srv           serverInfo

	format *chattemplate.Format // ChatFormat's format; nil when none is named
	tokens tokenCache
}

var _ backends.Backend = (*Client)(nil)

// New checks cfg and returns a client. It does not contact the server; with
// Flavor auto the server is probed on first use.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("openai: config field base_url is empty")
	}
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("openai: config field base_url %q must start with http:// or https://", cfg.BaseURL)
	}
	switch cfg.Flavor {
	case "":
		cfg.Flavor = FlavorAuto
	case FlavorAuto, FlavorVLLM, FlavorLlamaServer, FlavorChatOnly:
	default:
		return nil, fmt.Errorf("openai: config field flavor %q: want auto, vllm, llama-server or chat-only", cfg.Flavor)
	}
	var format *chattemplate.Format
	if cfg.ChatFormat != "" {
		f, ok := chattemplate.Named(cfg.ChatFormat)
		if !ok {
			return nil, fmt.Errorf("openai: config field chat_format %q: want one of %s", cfg.ChatFormat, strings.Join(chattemplate.FormatNames, ", "))
		}
		if cfg.Flavor == FlavorChatOnly {
			return nil, fmt.Errorf("openai: config field chat_format %q renders prompts for /v1/completions, which flavor chat-only does not use; remove chat_format to use the server's own template, or choose another flavor", cfg.ChatFormat)
		}
		format = &f
	}
	if cfg.Concurrency < 0 || cfg.Timeout < 0 {
		return nil, errors.New("openai: config fields concurrency and timeout must not be negative")
	}
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	maxRetries := cfg.MaxRetries
	maxRetries = cmp.Or(maxRetries, DefaultMaxRetries)
	if maxRetries < 0 {
		maxRetries = 0
	}
	var key string
	if cfg.APIKeyEnv != "" {
		key = os.Getenv(cfg.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("openai: environment variable %s (config field api_key_env) is empty or unset", cfg.APIKeyEnv)
		}
	}
	root := strings.TrimRight(cfg.BaseURL, "/")
	root = strings.TrimSuffix(root, "/v1")
	c := &Client{
		cfg:    cfg,
		root:   root,
		format: format,
		api: httpjson.New(httpjson.Config{
			Name:             "openai",
			BaseURL:          root,
			APIKey:           key,
			Concurrency:      cfg.Concurrency,
			Timeout:          cfg.Timeout,
			MaxRetries:       maxRetries,
			MaxResponseBytes: cfg.MaxResponseBytes,
		}),
	}
	if cfg.Flavor != FlavorAuto {
		c.flavor = cfg.Flavor
	}
	return c, nil
}

// Capabilities reports what the server can do. With Flavor auto it probes the
// server if that has not happened yet; if the probe fails it reports
// log-likelihood as possible and LogLikelihood itself gives the final answer.
func (c *Client) Capabilities() backends.Capabilities {
	// Capabilities has no context; bound the probe so a down server cannot
	// stall the caller for a whole request timeout with retries.
	ctx, cancel := context.WithTimeout(context.Background(), min(c.cfg.Timeout, 10*time.Second))
	defer cancel()
	fl, err := c.resolveFlavor(ctx)
	c.mu.Lock()
	unsupported := c.llUnsupported
	c.mu.Unlock()
	return backends.Capabilities{
		Name:          "openai:" + c.root,
		LogLikelihood: (err != nil || fl != FlavorChatOnly) && !unsupported,
		Chat:          true,
	}
}

// Close releases idle connections.
func (c *Client) Close() error {
	c.api.Close()
	return nil
}

// resolveFlavor returns the configured flavour, or probes the server once:
// llama-server answers GET /props with its generation settings; anything else
// is treated as echo-capable, which LogLikelihood verifies per response.
func (c *Client) resolveFlavor(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flavor != "" {
		return c.flavor, nil
	}
	var props struct {
		DefaultGenerationSettings *struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	err := c.doAside(ctx, http.MethodGet, "/props", nil, &props)
	var he *HTTPError
	switch {
	case err == nil && props.DefaultGenerationSettings != nil:
		c.flavor = FlavorLlamaServer
		// The same answer carries the window (see info).
		c.srv = serverInfo{window: props.DefaultGenerationSettings.NCtx, model: c.cfg.Model}
		c.infoKnown = true
	case err == nil || (errors.As(err, &he) && !httpjson.Retryable(he.Status)) || errors.Is(err, errBadJSON):
		// The server answered, and it is not llama-server. (A 503 while
		// a model loads decides nothing; the next call probes again.)
		c.flavor = FlavorVLLM
	default:
		return "", fmt.Errorf("openai: probing server flavour: %w", err)
	}
	return c.flavor, nil
}

func (c *Client) markLLUnsupported() {
	c.mu.Lock()
	c.llUnsupported = true
	c.mu.Unlock()
}

// forEach runs fn(i) for i in [0,n) on up to Concurrency goroutines and
// returns the first error; after an error no new items are started.
func (c *Client) forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // an item that waited for a worker while another failed
			}
			return fn(gctx, i)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}
