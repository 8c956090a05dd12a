// Package preflight checks, before a run starts, what the run will need from
// outside itself: every dataset file exists and its first rows parse (read by
// the axis's own reader), every model and judge answers with the capabilities
// the config asks of it, the store takes writes, and the Temporal address
// answers. Each problem is one sentence naming the file, line and field (or
// the URL) and what to do, so a newcomer's mistake is reported in seconds
// instead of as a failed or endlessly retried workflow.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/openai"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/runplan"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

// Rows is how many rows of each dataset are read.
const Rows = 5

// Timeout bounds one request to a model; a model is asked once, not retried.
const Timeout = 10 * time.Second

// Options say what to check and with what.
type Options struct {
	// ConfigPath is the config file as the user named it (for messages and
	// line numbers); Overrides are the command-line values Load applied.
	ConfigPath string
	Overrides  config.Overrides
	// OpenBackend opens a model; nil means registry.Open.
	OpenBackend func(spec string, o registry.Options) (backends.Backend, error)
}

// Check runs every check on cfg and returns the problems found, one sentence each.
func Check(ctx context.Context, cfg *config.Config, opt Options) []error {
	c := &checker{opt: opt}
	if opt.ConfigPath != "" {
		c.yaml, _ = os.ReadFile(opt.ConfigPath)
	}
	skipped := c.datasets(cfg)
	c.models(ctx, cfg, skipped)
	c.store(ctx, cfg.Store.URI)
	return c.problems
}

type checker struct {
	opt      Options
	yaml     []byte
	problems []error
}

// where names a config field as "FILE line N, field".
func (c *checker) where(field string) string {
	if c.opt.ConfigPath == "" {
		return field
	}
	if line := config.KeyLine(c.yaml, field); line > 0 {
		return fmt.Sprintf("%s line %d, %s", c.opt.ConfigPath, line, field)
	}
	return fmt.Sprintf("%s, %s", c.opt.ConfigPath, field)
}

func (c *checker) fail(field, format string, a ...any) {
	c.problems = append(c.problems, fmt.Errorf("%s: %s", c.where(field), fmt.Sprintf(format, a...)))
}

// datasets reads what Prepare reads, as Prepare reads it, only shorter:
// the content hash over every dataset file, then the first Rows rows of
// every dataset of each axis the run scores, read together by the axis's
// own reader (runplan.EachAxis, as Prepare does), so an axis whose files
// only make sense together (MT's questions and reference answers) is
// checked as a whole, and a config the run accepts is accepted here. It
// returns the axes the run skips.
func (c *checker) datasets(cfg *config.Config) []runfiles.Skip {
	before := len(c.problems)
	skipped, err := runplan.EachAxis(cfg.WithLimit(Rows), runplan.ModelMeta(cfg), func(name string, _ scorers.Axis, each func(func(scorers.Item) error) error) error {
		ac := cfg.Axes[name]
		for i, d := range ac.Datasets {
			path := d.Source(ac.BaseDir).Path()
			if strings.Contains(path, "://") {
				continue
			}
			if _, err := os.Stat(path); err != nil {
				field := fmt.Sprintf("axes.%s.datasets[%d].path", name, i)
				if errors.Is(err, os.ErrNotExist) {
					c.fail(field, "no file at %s; correct the path (a relative path is read from the config file's folder).", path)
				} else {
					c.fail(field, "cannot read %s (%v); check the file's permissions.", path, err)
				}
				return nil // the axis's reader would only fail on it again
			}
		}
		err := each(func(scorers.Item) error { return nil })
		var de *runplan.DataError
		if !errors.As(err, &de) {
			return err
		}
		// The reader's own error names the file and line; the sentence
		// names the dataset whose file it is.
		cause := errors.Unwrap(de.Err)
		if cause == nil {
			cause = de.Err
		}
		for i, d := range ac.Datasets {
			if strings.Contains(cause.Error(), d.Source(ac.BaseDir).Path()) {
				c.fail(fmt.Sprintf("axes.%s.datasets[%d]", name, i), "the first %d rows do not read as format %s: %v; fix the file or the format.", Rows, d.Format, cause)
				return nil
			}
		}
		c.fail("axes."+name, "the first %d rows of its datasets do not read: %v; fix the files or their formats.", Rows, cause)
		return nil
	})
	if err != nil {
		c.problems = append(c.problems, err)
	}
	if len(c.problems) == before {
		// Prepare also hashes every dataset file of the axes it skips (a
		// judge's GGUF file is the model check's).
		if _, err := cfg.ContentHash(); err != nil && strings.HasPrefix(err.Error(), "axes.") {
			field, msg, _ := strings.Cut(err.Error(), ": ")
			c.fail(field, "cannot read the file (%s), which the run's config hash covers; correct the path (a relative path is read from the config file's folder).", msg)
		}
	}
	return skipped
}

// needs says what the configured axes ask of the evaluated model.
type needs struct {
	logLik   []string // axes scored by log-likelihood (cloze)
	generate []string // axes that generate from a raw prompt
	chat     []string // axes that send chat messages
}

// modelNeeds is what the axes the run scores (all but skipped) ask of the model.
func modelNeeds(cfg *config.Config, skipped []runfiles.Skip) needs {
	var n needs
	for _, name := range cfg.AxisNames() {
		ax, ok := scorers.AxisNamed(name)
		if !ok || slices.ContainsFunc(skipped, func(s runfiles.Skip) bool { return s.Axis == name }) {
			continue
		}
		u := scorers.ModelUseOf(ax, cfg.Axes[name])
		switch {
		case u.LogLik:
			n.logLik = append(n.logLik, name)
			if u.Generate {
				n.generate = append(n.generate, name)
			}
		case u.Chat || cfg.Run.ChatTemplate == "always":
			n.chat = append(n.chat, name)
		default:
			n.generate = append(n.generate, name)
		}
	}
	return n
}

// models asks the evaluated model and every judge for what the run needs.
func (c *checker) models(ctx context.Context, cfg *config.Config, skipped []runfiles.Skip) {
	field := "model.spec"
	if c.opt.Overrides.Model != "" {
		field = "--model"
	}
	m := cfg.Model
	c.model(ctx, field, m.Spec, registry.Options{
		Name: m.Name, APIKeyEnv: m.APIKeyEnv, Flavor: m.Flavor, ChatFormat: m.ChatFormat, StrictContext: m.StrictContext,
	}, modelNeeds(cfg, skipped))
	for i, j := range cfg.Judges {
		name := j.Model
		if name == "" {
			name = j.Name
		}
		c.model(ctx, fmt.Sprintf("judges[%d].spec", i), j.Spec, registry.Options{Name: name, APIKeyEnv: j.APIKeyEnv, ChatFormat: j.ChatFormat},
			needs{chat: []string{"judging"}})
	}
}

func (c *checker) model(ctx context.Context, field, spec string, o registry.Options, n needs) {
	open := c.opt.OpenBackend
	if open == nil {
		open = registry.Open
	}
	o.Timeout, o.MaxRetries = Timeout, -1 // one attempt: a server that never answered is not waited for
	b, err := open(spec, o)
	if err != nil {
		c.fail(field, "cannot open %s: %v; correct the spec.", spec, err)
		return
	}
	defer b.Close()
	if file, ok := registry.GGUFPath(spec); ok {
		// A file that opens may still compute NaN or infinities (broken
		// weights, an overflow), which every request of the run would meet:
		// one short forward probes it. When the run sends chat messages the
		// probe is a chat request, which also renders the chat template (the
		// file's own or chat_format), whose error names the construct.
		req := backends.GenRequest{ID: "preflight", Prompt: "Soalan: 1 + 1 = ?\nJawapan:", MaxTokens: 1}
		if len(n.chat) > 0 {
			req = backends.GenRequest{ID: "preflight", Messages: []backends.Message{{Role: "user", Content: "1 + 1 = ?"}}, MaxTokens: 1}
		}
		_, err := b.Generate(ctx, []backends.GenRequest{req})
		switch {
		case errors.Is(err, backends.ErrNonFinite):
			c.fail(field, "the model file %s computes NaN or infinite values on a one-token probe (%v); its weights are broken: convert or download the file again.", file, err)
		case err != nil && len(n.chat) > 0:
			c.fail(field, "%v (%s chat messages).", err, sendWho(n.chat))
		case err != nil:
			c.fail(field, "the model file %s cannot run a one-token probe (%v); check that it is a complete GGUF model.", file, err)
		}
		return
	}
	url := strings.TrimPrefix(spec, "openai:")
	ctx, cancel := context.WithTimeout(ctx, 3*Timeout)
	defer cancel()
	if len(n.logLik) > 0 {
		_, err := b.LogLikelihood(ctx, []backends.LLRequest{{ID: "preflight", Context: "Soalan: 1 + 1 = ?\nJawapan:", Continuation: " 2"}})
		if errors.Is(err, backends.ErrUnsupported) {
			c.fail(field, "%s gives no log-likelihoods, which cloze scoring of %s needs; set scoring_mode: generate on those axes or use a server that returns prompt logprobs (vLLM, llama-server).", url, strings.Join(n.logLik, ", "))
			return
		}
		if err != nil {
			c.fail(field, "%s", unreachable(url, err))
			return
		}
	}
	if len(n.generate) > 0 {
		if _, err := b.Generate(ctx, []backends.GenRequest{{ID: "preflight", Prompt: "Soalan: 1 + 1 = ?\nJawapan:", MaxTokens: 1}}); err != nil {
			c.fail(field, "%s", unreachable(url, err))
			return
		}
	}
	if len(n.chat) > 0 {
		if _, err := b.Generate(ctx, []backends.GenRequest{{ID: "preflight", Messages: []backends.Message{{Role: "user", Content: "1 + 1 = ?"}}, MaxTokens: 1}}); err != nil {
			c.fail(field, "%s (%s chat messages).", strings.TrimSuffix(unreachable(url, err), "."), sendWho(n.chat))
			return
		}
	}
}

// sendWho is "mt sends" or "mt, safety send".
func sendWho(axes []string) string {
	if len(axes) == 1 {
		return axes[0] + " sends"
	}
	return strings.Join(axes, ", ") + " send"
}

// unreachable says in one sentence why a server did not answer and what to do.
func unreachable(url string, err error) string {
	var he *openai.HTTPError
	msg := err.Error()
	switch {
	case errors.As(err, &he) && (he.Status == 401 || he.Status == 403):
		return fmt.Sprintf("%s refused the request (HTTP %d); set the API key in the environment variable that api_key_env names.", url, he.Status)
	case errors.As(err, &he) && he.Status == 404:
		return fmt.Sprintf("%s has no %s (HTTP 404); point the spec at an OpenAI-compatible server (the URL without /v1/... paths) or check model.name.", url, he.Endpoint)
	case errors.As(err, &he):
		return fmt.Sprintf("%s answered %s %s with HTTP %d (%s); check the server's log.", url, he.Method, he.Endpoint, he.Status, he.Message)
	case strings.Contains(msg, "connection refused"):
		return fmt.Sprintf("nothing answers at %s (connection refused); start the model server or correct the URL.", url)
	case strings.Contains(msg, "no such host"):
		return fmt.Sprintf("the host of %s is unknown; correct the URL.", url)
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "timed out"):
		return fmt.Sprintf("%s did not answer within %v; check that the server is up and reachable from here.", url, Timeout)
	}
	return fmt.Sprintf("%s did not answer as an OpenAI-compatible server (%v); check the URL and the server.", url, err)
}

// store checks that the store takes a write.
func (c *checker) store(ctx context.Context, uri string) {
	field := "store.uri"
	if !strings.Contains(uri, "://") {
		// A local folder: create it and a file in it, then remove the file.
		if err := os.MkdirAll(uri, 0o755); err != nil {
			c.fail(field, "cannot create the store folder %s (%v); choose a folder you can write to.", uri, err)
			return
		}
		f, err := os.CreateTemp(uri, ".preflight-")
		if err != nil {
			c.fail(field, "cannot write in the store folder %s (%v); choose a folder you can write to.", uri, err)
			return
		}
		f.Close()
		os.Remove(f.Name())
		return
	}
	st, err := store.Open(ctx, uri)
	if err != nil {
		c.fail(field, "cannot open the store (%v); correct the URI or its credentials.", err)
		return
	}
	key := fmt.Sprintf("preflight/%d", time.Now().UnixNano())
	if err := st.Put(ctx, key, []byte("preflight write check\n")); err != nil {
		c.fail(field, "%s does not take writes (%v); check the bucket, its endpoint and the credentials' permissions.", st.Describe(), err)
	}
}

// Temporal checks that a Temporal frontend answers at opts.HostPort.
func Temporal(ctx context.Context, opts client.Options) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err == nil {
		_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
		c.Close()
	}
	if err != nil {
		return fmt.Errorf("TEMPORAL_ADDRESS %s: no Temporal server answers (%v); start one (glossobench dev) or correct TEMPORAL_ADDRESS", opts.HostPort, rootMessage(err))
	}
	return nil
}

// rootMessage is the innermost message of an error chain.
func rootMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
