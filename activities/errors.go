package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"

	"go.temporal.io/sdk/temporal"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/openai"
)

// Error types the workflow must not retry.
const (
	// ErrConfig and ErrData: the input itself is wrong.
	ErrConfig = "ConfigError"
	ErrData   = "DataError"
	// ErrModel: the model fails every request alike (it computes NaN, it
	// cannot load, its server refuses the requests with a 4xx), so another
	// attempt would fail the same way; EvalRun ends the axis with the
	// message as its note.
	ErrModel = "ModelError"
)

// NonRetryable are the error types no retry can fix; every activity
// option preset lists them, and the worker's log says "not retried" for them.
var NonRetryable = []string{ErrConfig, ErrData, ErrModel}

// Failure is what a failed model request means for the work that made it.
type Failure int

const (
	// Outage: the server or the network is away (refused, reset, timed
	// out, HTTP 5xx, 408, 429) or the attempt was cancelled. The HTTP
	// backend has retried it already; the work is tried again later.
	Outage Failure = iota
	// ItemFailure: this item cannot be answered (longer than the model's
	// window, unrenderable). It is recorded with the item and never retried.
	ItemFailure
	// ModelFailure: every request will fail alike: non-finite numbers, an
	// HTTP 4xx other than 408, 429 and a prompt too long for the window.
	ModelFailure
)

// Classify is the one place that decides what a model call's error means;
// Infer, Judge and the worker's log act on it.
func Classify(err error) Failure {
	var ne net.Error
	var he *openai.HTTPError
	var unsupported *json.UnsupportedValueError
	switch {
	case errors.Is(err, backends.ErrNonFinite), errors.As(err, &unsupported):
		return ModelFailure
	case errors.As(err, &he):
		switch {
		case he.Status == http.StatusRequestTimeout, he.Status == http.StatusTooManyRequests, he.Status >= 500:
			return Outage
		case he.Status >= 400 && !tooLong(he.Message):
			return ModelFailure
		}
		return ItemFailure
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return Outage
	}
	return ItemFailure
}

// tooLong reports whether a server's 4xx message is about the prompt's
// length against the model's window (llama-server: "exceeds the available
// context size"; vLLM and OpenAI: "maximum context length"; TGI: "must have
// less than N tokens"): the one client error that is the item's, not the
// model's.
func tooLong(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "context") || strings.Contains(m, "too long") || strings.Contains(m, "too large") ||
		strings.Contains(m, "must have less than") || strings.Contains(m, "maximum") && strings.Contains(m, "length")
}

// modelError is err, from a call to the model named spec, as the activity
// returns it: a ModelFailure is a non-retryable ErrModel whose message is
// the axis's note; anything else is returned as it is (Temporal retries it).
func modelError(spec string, err error) error {
	if Classify(err) != ModelFailure {
		return err
	}
	return nonRetryable(ErrModel, fmt.Sprintf("model %s: %v; every request fails alike, so it is not retried", spec, err))
}

// nonRetryable is the one place an activity's error that no retry can fix
// is made: an application error of type typ (one of NonRetryable) whose
// message is what the run's failure says.
func nonRetryable(typ, msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, typ, nil)
}

// ConfigError is a non-retryable ErrConfig: the run's config or input is
// wrong. EvalRun fails with it too when its input leaves no time to run.
func ConfigError(format string, a ...any) error {
	return nonRetryable(ErrConfig, fmt.Sprintf(format, a...))
}

// dataError is a non-retryable ErrData: the data the run reads is wrong.
func dataError(format string, a ...any) error {
	return nonRetryable(ErrData, fmt.Sprintf(format, a...))
}

// ModelFailed reports whether a workflow or activity error is an ErrModel,
// and its message.
func ModelFailed(err error) (string, bool) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == ErrModel {
		return app.Message(), true
	}
	return "", false
}

// Retryable reports whether Temporal tries an activity that failed with err
// again.
func Retryable(err error) bool {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return !app.NonRetryable() && !slices.Contains(NonRetryable, app.Type())
	}
	return true
}
