package httpjson

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func testClient(baseURL string) *Client {
	return New(Config{
		Name: "test", BaseURL: baseURL, Concurrency: 2, Timeout: time.Second,
		MaxRetries: 2, MaxResponseBytes: 1 << 10, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"2":                             2 * time.Second,
		"0.5":                           500 * time.Millisecond,
		"-3":                            0,
		"soon":                          0,
		"99999":                         maxRetryAfter,
		"Fri, 02 Jan 2026 03:04:15 GMT": 10 * time.Second,
		"Fri, 02 Jan 2026 03:04:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestBackoffFullJitter(t *testing.T) {
	c := &Client{Config: Config{BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second}}
	for attempt := range 40 {
		ceil := min(time.Second, 100*time.Millisecond<<min(attempt, 20))
		var maxSeen time.Duration
		for range 200 {
			d := c.backoff(attempt)
			if d < 0 || d >= ceil {
				t.Fatalf("backoff(%d) = %v, outside [0, %v)", attempt, d, ceil)
			}
			maxSeen = max(maxSeen, d)
		}
		if maxSeen < ceil/2 {
			t.Errorf("backoff(%d) never above %v in 200 draws: not full jitter", attempt, maxSeen)
		}
	}
}

// The waits for one Retry-After spread over [100ms, 150ms) instead of all
// landing on 100ms, so clients told the same delay do not return at once.
func TestRetryAfterIsAFloorWithJitter(t *testing.T) {
	c := &Client{Config: Config{BackoffBase: 50 * time.Millisecond, BackoffMax: 50 * time.Millisecond}}
	lo, hi := time.Hour, time.Duration(0)
	for range 200 {
		d := c.retryWait(0, 100*time.Millisecond)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 100*time.Millisecond || hi >= 150*time.Millisecond || hi-lo < 25*time.Millisecond {
		t.Fatalf("waits for a Retry-After of 100ms span [%v, %v]; want within [100ms, 150ms) and spread", lo, hi)
	}
}

func TestRetryable(t *testing.T) {
	for status, want := range map[int]bool{
		429: true, 500: true, 502: true, 503: true, 504: true,
		501: false, 400: false, 401: false, 404: false, 413: false, 422: false, 424: false,
	} {
		if got := Retryable(status); got != want {
			t.Errorf("Retryable(%d) = %v, want %v", status, got, want)
		}
	}
}

// Failures below HTTP: timeouts and refused, reset or cut connections are
// transient and stay net.Errors; the caller's cancellation and anything
// else are permanent.
func TestTransportErrorClassification(t *testing.T) {
	c := testClient("")
	op := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	cases := []struct {
		name               string
		err                error
		transient, timeout bool
	}{
		{"deadline", context.DeadlineExceeded, true, true},
		{"net timeout", &net.DNSError{Err: "i/o timeout", IsTimeout: true}, true, true},
		{"refused", op(syscall.ECONNREFUSED), true, false},
		{"reset", op(syscall.ECONNRESET), true, false},
		{"broken pipe", op(syscall.EPIPE), true, false},
		{"eof", fmt.Errorf("reading: %w", io.EOF), true, false},
		{"unexpected eof", io.ErrUnexpectedEOF, true, false},
		// net/http's errServerClosedIdle, which its transport retries
		// only for idempotent requests, not for a POST.
		{"server closed idle", &url.Error{Op: "Post", URL: "http://127.0.0.1/p", Err: errors.New("http: server closed idle connection")}, true, false},
		{"no such host", &net.DNSError{Err: "no such host", IsNotFound: true}, false, false},
		{"bad certificate", errors.New("x509: certificate signed by unknown authority"), false, false},
	}
	for _, tc := range cases {
		err := c.transportError(context.Background(), "POST", "/p", tc.err)
		if got := IsTransient(err); got != tc.transient {
			t.Errorf("%s: IsTransient = %v, want %v: %v", tc.name, got, tc.transient, err)
			continue
		}
		var ne net.Error
		if tc.transient && (!errors.As(err, &ne) || !temporary(err) || ne.Timeout() != tc.timeout) {
			t.Errorf("%s: want a temporary net.Error with Timeout() %v: %v", tc.name, tc.timeout, err)
		}
		if !strings.HasPrefix(err.Error(), "test: POST /p: ") {
			t.Errorf("%s: error %q does not name the client and endpoint", tc.name, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.transportError(ctx, "POST", "/p", op(syscall.ECONNRESET)); IsTransient(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("after the caller cancelled: %v, want a permanent context.Canceled", err)
	}
}

func TestErrorMessage(t *testing.T) {
	long := strings.Repeat("x", 300)
	for body, want := range map[string]string{
		`{"error":{"message":"max_tokens must be positive","type":"invalid"}}`:              "max_tokens must be positive",
		`{"error":"batch size 9 > maximum allowed batch size 8","error_type":"validation"}`: "batch size 9 > maximum allowed batch size 8",
		`{"message":"overloaded"}`:              "overloaded",
		`{"detail":[{"msg":"field required"}]}`: `[{"msg":"field required"}]`,
		"  <html>bad gateway</html>\n":          "<html>bad gateway</html>",
		long:                                    strings.Repeat("x", 200) + "…",
	} {
		if got := errorMessage([]byte(body)); got != want {
			t.Errorf("errorMessage(%.40q) = %q, want %q", body, got, want)
		}
	}
}

// A transient failure that outlasts the retries is still transient, with
// the attempt count in its text; a client error is returned at once.
func TestDoRetriesThenStaysTransient(t *testing.T) {
	var calls atomic.Int64
	status := atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(int(status.Load()))
		fmt.Fprint(w, `{"error":{"message":"busy"}}`)
	}))
	defer srv.Close()
	c := testClient(srv.URL)
	defer c.Close()
	var out struct{}

	status.Store(503)
	err := c.Do(context.Background(), "POST", "/p", map[string]int{"a": 1}, &out)
	var ne net.Error
	var he *HTTPError
	if !IsTransient(err) || !errors.As(err, &ne) || !temporary(err) || ne.Timeout() || calls.Load() != 3 ||
		!errors.As(err, &he) || he.Status != 503 || err.Error() != "test: POST /p: HTTP 503: busy (gave up after 3 attempts)" {
		t.Errorf("after %d calls: %v", calls.Load(), err)
	}

	calls.Store(0)
	status.Store(400)
	err = c.Do(context.Background(), "POST", "/p", nil, &out)
	if IsTransient(err) || errors.As(err, &ne) || calls.Load() != 1 || err.Error() != "test: POST /p: HTTP 400: busy" {
		t.Errorf("after %d calls: %v", calls.Load(), err)
	}
}

// An answer over the cap is an error naming the cap, not a truncated body;
// an answer that is not the expected JSON is ErrMalformed.
func TestDoResponseChecks(t *testing.T) {
	body := `{"a":1}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	c := testClient(srv.URL)
	defer c.Close()
	var out struct{ A int }
	if err := c.Do(context.Background(), "GET", "/p", nil, &out); err != nil || out.A != 1 {
		t.Fatalf("%v, %+v", err, out)
	}
	body = `{"a":"` + strings.Repeat("x", 2000) + `"}`
	if err := c.Do(context.Background(), "GET", "/p", nil, &out); err == nil || !strings.Contains(err.Error(), "cap of 1024 bytes") {
		t.Errorf("over the cap: %v", err)
	}
	body = `<html>`
	if err := c.Do(context.Background(), "GET", "/p", nil, &out); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), `body starts "<html>"`) {
		t.Errorf("not JSON: %v", err)
	}
}

// temporary reports whether err says it is temporary, as callers that still
// ask net.Error's (deprecated) Temporary read it.
func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}
