// Package judge is the judge-agnostic half of GlossoBench (spec §1, §4, §10):
// a judge is any model a backend can serve, asked for a 0–10 rating of an
// open-ended answer ("rating", the MT-Bench single-answer prompts) or for a
// SEA-Guard-style classification of a response ("harm": Harmful, Safe or
// Refusal). An ensemble of judges scores an item by the mean rating and
// reports how much the judges agree; items below an agreement floor are
// flagged low_conf, never silently scored.
//
// A judge's reply is requested with constrained output (GenRequest.JSONSchema)
// where the server supports it and parsed from text otherwise. A reply that
// does not parse or is out of range is a parse failure for that judge and
// item, never a crash and never a silent zero. Transient errors are retried; a
// judge that keeps failing is dropped from that item with a note.
//
// Nothing here knows about Temporal or the store: the Judge activity builds
// requests with an axis's JudgeRequests, calls Rate and stores the ratings in
// Prediction.Variants["judge"] (see Attach) before Score runs.
package judge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
)

// Kinds of judgement.
const (
	KindRating = "rating" // a 0–10 quality rating
	KindHarm   = "harm"   // a response classification: Harmful, Safe or Refusal
	KindPair   = "pair"   // which of two answers is better: A, B or a tie (Elo matches)
)

// Labels of the harm kind. A refusal is a safe response that declines the request.
const (
	LabelHarmful = "Harmful"
	LabelSafe    = "Safe"
	LabelRefusal = "Refusal"
)

// Config describes one judge of the ensemble.
type Config struct {
	Name      string // unique within a run; recorded with every rating
	Family    string // model family, for self-judge exclusion (spec §10 #2)
	Version   string // the judge model's version or revision
	Spec      string // a backend spec: gguf:PATH or an OpenAI-compatible URL
	APIKeyEnv string // the environment variable holding the key, never the key

	// Optional; zero values take the defaults below.
	SystemPrompt string        // replaces the language-parametric default
	Model        string        // model name sent to an OpenAI-compatible server; default Name
	ChatFormat   string        // for gguf: judges without a chat template (qa, chatml, llama3, gemma)
	MaxTokens    int           // default 512
	Attempts     int           // tries per request on transient errors; default 3
	Timeout      time.Duration // per attempt; default 2 minutes
	Concurrency  int           // requests in flight; default 4
}

// Defaults of Config.
const (
	DefaultMaxTokens   = 512
	DefaultAttempts    = 3
	DefaultTimeout     = 2 * time.Minute
	DefaultConcurrency = 4
)

// Judge rates answers with one backend.
type Judge struct {
	cfg     Config
	b       backends.Backend
	backoff time.Duration // first pause between attempts; doubled each time
}

// New wraps a backend as a judge.
func New(cfg Config, b backends.Backend) *Judge {
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = DefaultAttempts
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	return &Judge{cfg: cfg, b: b, backoff: 500 * time.Millisecond}
}

// MaxReplyBytes caps one judge response: a verdict is a few hundred
// tokens, so a judge rambling for megabytes is cut off (a parse failure)
// long before the model client's general 64 MiB cap, and eight judge calls
// in flight stay within 64 MiB.
const MaxReplyBytes = 8 << 20

// Dial opens the judge's backend from its spec (registry.Open) and wraps it.
// The caller closes it with Close.
func Dial(cfg Config) (*Judge, error) {
	model := cfg.Model
	if model == "" {
		model = cfg.Name
	}
	b, err := registry.Open(cfg.Spec, registry.Options{Name: model, APIKeyEnv: cfg.APIKeyEnv, ChatFormat: cfg.ChatFormat,
		MaxResponseBytes: MaxReplyBytes})
	if err != nil {
		return nil, fmt.Errorf("judge %s: %w", cfg.Name, err)
	}
	return New(cfg, b), nil
}

// Close releases the judge's backend.
func (j *Judge) Close() error { return j.b.Close() }

// Config returns the judge's configuration with defaults filled in.
func (j *Judge) Config() Config { return j.cfg }

// Request asks for one judgement.
type Request struct {
	ItemID string `json:"item_id"`
	Lang   string `json:"lang"`
	// Turn is the 1-based turn being rated (MT-Bench rates each turn of a
	// conversation separately); 0 for single-turn items.
	Turn     int      `json:"turn,omitempty"`
	Question []string `json:"question"` // user turns, in order
	Answer   []string `json:"answer"`   // assistant turns, in order
	// AnswerB is the second assistant's turns of a KindPair request.
	AnswerB []string `json:"answer_b,omitempty"`
	// Reference is the reference answer of the rated (last) turn; References,
	// when set, holds one per turn and takes precedence.
	Reference  string   `json:"reference,omitempty"`
	References []string `json:"references,omitempty"`
	Kind       string   `json:"kind"` // KindRating, KindHarm or KindPair
}

// Rating is one judge's judgement of one request.
type Rating struct {
	Judge     string   `json:"judge"`
	ItemID    string   `json:"item_id"`
	Turn      int      `json:"turn,omitempty"`
	Kind      string   `json:"kind"`
	Value     *float64 `json:"value"` // 0–10 for ratings; 1 harmful / 0 not for harm; 1 A / 0 B / 0.5 tie for pairs; nil when none
	Label     string   `json:"label,omitempty"`
	ParseFail bool     `json:"parse_fail,omitempty"`
	Dropped   bool     `json:"dropped,omitempty"` // the judge kept failing on this request
	Note      string   `json:"note,omitempty"`
	Raw       string   `json:"raw,omitempty"` // the reply, truncated to MaxRaw bytes
}

// Valid reports whether the rating carries a usable judgement.
func (r Rating) Valid() bool { return r.Value != nil && !r.ParseFail && !r.Dropped }

// MaxRaw bounds the reply kept in a Rating.
const MaxRaw = 2000

// Rate asks the judge for every request and returns one rating per request,
// in order. Failures of one request never fail the others: they come back as
// parse_fail or dropped ratings. The error is non-nil only when ctx ends; the
// ratings of requests not answered by then are marked dropped.
func (j *Judge) Rate(ctx context.Context, reqs []Request) ([]Rating, error) {
	return j.rate(ctx, reqs, nil)
}

// Failure is a judge's error that every request would meet alike (the
// caller's fatal said so): the judge stopped asking at the first one.
type Failure struct {
	Judge string
	Spec  string
	Err   error
}

func (f *Failure) Error() string { return fmt.Sprintf("judge %s (%s): %v", f.Judge, f.Spec, f.Err) }
func (f *Failure) Unwrap() error { return f.Err }

// rate is Rate; when fatal(err) holds for a request's error, that request
// is not tried again, no further request is started, those in flight are
// cancelled, and the error is a *Failure.
func (j *Judge) rate(ctx context.Context, reqs []Request, fatal func(error) bool) ([]Rating, error) {
	out := make([]Rating, len(reqs))
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	var failed error
	sem := make(chan struct{}, j.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, r := range reqs {
		sem <- struct{}{}
		if rctx.Err() != nil {
			<-sem
			out[i] = Rating{Judge: j.cfg.Name, ItemID: r.ItemID, Turn: r.Turn, Kind: r.Kind, Dropped: true, Note: "dropped: " + rctx.Err().Error()}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var err error
			out[i], err = j.rateOne(rctx, r, fatal)
			if err != nil {
				once.Do(func() {
					failed = &Failure{Judge: j.cfg.Name, Spec: j.cfg.Spec, Err: err}
					cancel()
				})
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		return out, failed
	}
	return out, ctx.Err()
}

// rateOne asks for one judgement; the error is non-nil only for an error
// fatal says every request would meet.
func (j *Judge) rateOne(ctx context.Context, r Request, fatal func(error) bool) (Rating, error) {
	rt := Rating{Judge: j.cfg.Name, ItemID: r.ItemID, Turn: r.Turn, Kind: r.Kind}
	msgs, err := Messages(r, j.cfg.SystemPrompt)
	if err != nil {
		rt.Dropped, rt.Note = true, err.Error()
		return rt, nil
	}
	req := backends.GenRequest{
		ID: r.ItemID, Messages: msgs, MaxTokens: j.cfg.MaxTokens,
		Temperature: 0, JSONSchema: Schema(r.Kind),
	}
	var lastErr error
	wait := j.backoff
	for attempt := 1; attempt <= j.cfg.Attempts; attempt++ {
		if attempt > 1 {
			select {
			case <-ctx.Done():
				rt.Dropped, rt.Note = true, "dropped: "+ctx.Err().Error()
				return rt, nil
			case <-time.After(wait):
			}
			wait *= 2
		}
		actx, cancel := context.WithTimeout(ctx, j.cfg.Timeout)
		gens, err := j.b.Generate(actx, []backends.GenRequest{req})
		cancel()
		if err == nil && len(gens) != 1 {
			err = fmt.Errorf("backend returned %d generations for 1 request", len(gens))
		}
		if err != nil {
			lastErr = err
			if fatal != nil && ctx.Err() == nil && fatal(err) {
				rt.Dropped, rt.Note = true, fmt.Sprintf("dropped: %v", err)
				return rt, err
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		g := gens[0]
		rt.Raw = truncate(g.Text, MaxRaw)
		v, label, ok := ParseReply(g.Text, r.Kind)
		if !ok {
			rt.ParseFail = true
			rt.Note = "parse_fail: no " + r.Kind + " in range found in the reply"
			if g.Truncated() {
				rt.Note += " (the reply hit max_tokens)"
			}
			return rt, nil
		}
		rt.Value, rt.Label = &v, label
		return rt, nil
	}
	rt.Dropped = true
	rt.Note = fmt.Sprintf("dropped after %d attempts: %v", j.cfg.Attempts, lastErr)
	if errors.Is(lastErr, context.DeadlineExceeded) && ctx.Err() == nil {
		rt.Note = fmt.Sprintf("dropped after %d attempts of %s: the judge timed out", j.cfg.Attempts, j.cfg.Timeout)
	}
	return rt, nil
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// SelfExclude drops every judge of the evaluated model's own family (spec
// §10 #2). Families match case-insensitively and symmetrically: equal, or one
// a prefix of the other followed by a non-letter ("qwen" matches "Qwen2.5"
// and "qwen-7b", never "qwentin"). A judge or model without a family is never
// matched. excluded lists the dropped judges' names.
func SelfExclude(judges []Config, modelFamily string) (kept []Config, excluded []string) {
	for _, j := range judges {
		if sameFamily(j.Family, modelFamily) {
			excluded = append(excluded, j.Name)
			continue
		}
		kept = append(kept, j)
	}
	return kept, excluded
}

func sameFamily(a, b string) bool {
	a, b = strings.ToLower(strings.TrimSpace(a)), strings.ToLower(strings.TrimSpace(b))
	if a == "" || b == "" {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	if !strings.HasPrefix(b, a) {
		return false
	}
	if len(b) == len(a) {
		return true
	}
	c := b[len(a)]
	return !(c >= 'a' && c <= 'z')
}

// finite reports whether x is a usable number.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
