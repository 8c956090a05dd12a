package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"syscall"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/openai"
)

func TestClassify(t *testing.T) {
	status := func(code int, msg string) error {
		return fmt.Errorf("item x: %w", &openai.HTTPError{Name: "openai", Method: "POST", Endpoint: "/v1/completions", Status: code, Message: msg})
	}
	_, nanErr := json.Marshal(math.NaN())
	for _, c := range []struct {
		name string
		err  error
		want Failure
	}{
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, Outage},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), Outage},
		{"cancelled", context.Canceled, Outage},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), Outage},
		{"503", status(503, "model is reloading"), Outage},
		{"500", status(500, ""), Outage},
		{"429", status(429, "slow down"), Outage},
		{"408", status(408, ""), Outage},
		{"400", status(400, "'seed' is not a supported parameter"), ModelFailure},
		{"401", status(401, "invalid api key"), ModelFailure},
		{"404", status(404, "model 'x' not found"), ModelFailure},
		{"422", status(422, "logprobs must be at most 20"), ModelFailure},
		{"llama-server window", status(400, "the request exceeds the available context size, try increasing it"), ItemFailure},
		{"vLLM window", status(400, "This model's maximum context length is 2048 tokens. However, you requested 2100 tokens"), ItemFailure},
		{"TGI window", status(422, "Input validation error: `inputs` must have less than 2048 tokens. Given: 3000"), ItemFailure},
		{"NaN logits", fmt.Errorf("item x: %w: logit 3 is NaN", backends.ErrNonFinite), ModelFailure},
		{"NaN in an answer", nanErr, ModelFailure},
		{"unrenderable", errors.New("chat template: unknown filter"), ItemFailure},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("%s: Classify(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
	}
	if nanErr == nil {
		t.Fatal("json.Marshal(NaN) succeeded")
	}
}

// A model failure becomes a non-retryable ModelError naming the model;
// anything else is left for Temporal to retry, or for the item.
func TestModelError(t *testing.T) {
	err := modelError("gguf:nan.gguf", fmt.Errorf("item k-1: %w: logit 0 is NaN", backends.ErrNonFinite))
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrModel || !app.NonRetryable() || Retryable(err) {
		t.Fatalf("modelError = %#v, want a non-retryable %s", err, ErrModel)
	}
	want := "model gguf:nan.gguf: item k-1: the model computed NaN or infinite values: logit 0 is NaN; every request fails alike, so it is not retried"
	if msg, ok := ModelFailed(fmt.Errorf("axis knowledge: inference: %w", err)); !ok || msg != want {
		t.Errorf("ModelFailed = %q, %v; want %q", msg, ok, want)
	}
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	if got := modelError("x", refused); got != error(refused) || !Retryable(got) {
		t.Errorf("modelError(refused) = %v, want it unchanged and retryable", got)
	}
}

// configError and dataError, which every activity returns for input no
// retry can fix, make non-retryable errors of their type whose message is
// the formatted text alone.
func TestNonRetryableErrors(t *testing.T) {
	for _, c := range []struct {
		err       error
		typ, want string
	}{
		{ConfigError("max_parallel %d: want 1 or more", 0), ErrConfig, "max_parallel 0: want 1 or more"},
		{dataError("%v", errors.New("scores.jsonl:2: field score")), ErrData, "scores.jsonl:2: field score"},
		{nonRetryable(ErrModel, "model x cannot be opened"), ErrModel, "model x cannot be opened"},
	} {
		var app *temporal.ApplicationError
		if !errors.As(c.err, &app) || app.Type() != c.typ || !app.NonRetryable() || app.Message() != c.want || Retryable(c.err) {
			t.Errorf("%v: want a non-retryable %s with message %q", c.err, c.typ, c.want)
		}
	}
}

// TestJudgeInterrupted: the Judge activity ends its stage with a "stopped
// at the deadline" note only when the workflow cancelled it; a context the
// SDK cancelled because a heartbeat failed is an error, so that attempt's
// few ratings are not taken as the stage's result.
func TestJudgeInterrupted(t *testing.T) {
	if err := interrupted(context.Background()); err != nil {
		t.Errorf("live context: %v", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(temporal.NewCanceledError())
	if err := interrupted(ctx); err != nil {
		t.Errorf("cancelled by the workflow: %v", err)
	}
	ctx, cancel = context.WithCancelCause(context.Background())
	cancel(fmt.Errorf("RecordActivityHeartbeat: %w", context.DeadlineExceeded))
	if err := interrupted(ctx); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("heartbeat failed: %v, want an error with the cause", err)
	}
}
