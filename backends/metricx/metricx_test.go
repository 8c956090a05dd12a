package metricx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/glossobench/glossobench/backends/internal/httpjson"
)

// The expected strings are written out by hand from _make_input in
// google-research/metricx metricx24/predict.py (commit 0be34b4):
//
//	"source: " + source + " candidate: " + hypothesis + " reference: " + reference
//	"source: " + source + " candidate: " + hypothesis            (--qe)
func TestInputIsPredictPyFormat(t *testing.T) {
	cases := []struct {
		mode          Mode
		src, hyp, ref string
		want          string
	}{
		{ModeHybrid, "The cat sat on the mat.", "Kucing itu duduk di atas tikar.", "Kucing duduk di atas tikar.",
			"source: The cat sat on the mat. candidate: Kucing itu duduk di atas tikar. reference: Kucing duduk di atas tikar."},
		{ModeQE, "The cat sat on the mat.", "Kucing itu duduk di atas tikar.", "Kucing duduk di atas tikar.",
			"source: The cat sat on the mat. candidate: Kucing itu duduk di atas tikar."},
		// The README allows an empty source; the fields are joined verbatim,
		// so the two spaces stay, and so does surrounding whitespace.
		{ModeHybrid, "", " halo ", "Halo.", "source:  candidate:  halo  reference: Halo."},
		{ModeHybrid, "a\nb", "", "c", "source: a\nb candidate:  reference: c"},
	}
	for _, c := range cases {
		if got := Input(c.mode, c.src, c.hyp, c.ref); got != c.want {
			t.Errorf("Input(%s, %q, %q, %q) = %q, want %q", c.mode, c.src, c.hyp, c.ref, got, c.want)
		}
	}
}

// teiServer is a text-embeddings-inference /predict endpoint: it decodes
// the request strictly, records every batch and answers one score per input
// from score (by input text).
type teiServer struct {
	t        *testing.T
	score    func(input string) float64
	maxBatch int    // > 0: larger batches get TEI's 413
	key      string // expected bearer token, if any
	fail     []int  // statuses to answer first, one per request, before serving

	mu      sync.Mutex
	batches [][]string
	calls   int
}

func (s *teiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls++
	var status int
	if len(s.fail) > 0 {
		status, s.fail = s.fail[0], s.fail[1:]
	}
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/predict" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if s.key != "" && r.Header.Get("Authorization") != "Bearer "+s.key {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if status != 0 {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":"synthetic %d","error_type":"overloaded"}`, status)
		return
	}
	var req struct {
		Inputs    [][]string `json:"inputs"`
		Truncate  *bool      `json:"truncate"`
		RawScores *bool      `json:"raw_scores"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		s.t.Errorf("request body: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if req.RawScores == nil || !*req.RawScores || req.Truncate == nil || !*req.Truncate {
		s.t.Errorf("raw_scores and truncate must both be sent as true; body had raw_scores set %t, truncate set %t", req.RawScores != nil && *req.RawScores, req.Truncate != nil && *req.Truncate)
	}
	if s.maxBatch > 0 && len(req.Inputs) > s.maxBatch {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprintf(w, `{"error":"batch size %d > maximum allowed batch size %d","error_type":"validation"}`, len(req.Inputs), s.maxBatch)
		return
	}
	batch := make([]string, len(req.Inputs))
	out := make([][]map[string]any, len(req.Inputs))
	for i, in := range req.Inputs {
		if len(in) != 1 {
			s.t.Errorf("input %d is %d sequences, want one", i, len(in))
		}
		batch[i] = in[0]
		out[i] = []map[string]any{{"score": s.score(in[0]), "label": "LABEL_0"}}
	}
	s.mu.Lock()
	s.batches = append(s.batches, batch)
	s.mu.Unlock()
	json.NewEncoder(w).Encode(out)
}

func (s *teiServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *teiServer) reset(fail ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls, s.fail, s.batches = 0, fail, nil
}

func (s *teiServer) sent() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

func (s *teiServer) sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n []int
	for _, b := range s.batches {
		n = append(n, len(b))
	}
	slices.Sort(n)
	return n
}

func start(t *testing.T, s *teiServer) string {
	s.t = t
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

func fastRetries(c *Client) *Client {
	c.api.BackoffBase, c.api.BackoffMax = time.Millisecond, time.Millisecond
	return c
}

func segments(n int) (src, hyp, ref []string) {
	for i := range n {
		src = append(src, fmt.Sprintf("Source sentence %d.", i))
		hyp = append(hyp, fmt.Sprintf("Ayat terjemahan %d.", i))
		ref = append(ref, fmt.Sprintf("Ayat rujukan %d.", i))
	}
	return
}

// Each input's score is its index, read back from the text, so a score in
// the wrong slot shows.
func indexScore(input string) float64 {
	var i int
	fmt.Sscanf(input[strings.Index(input, "terjemahan ")+len("terjemahan "):], "%d", &i)
	return float64(i) / 4
}

func TestScoreSendsOfficialInputsInBatches(t *testing.T) {
	srv := &teiServer{score: indexScore}
	host := start(t, srv)
	c, err := Open("tei+http://" + host + "?batch_size=2&concurrency=1")
	if err != nil {
		t.Fatal(err)
	}
	src, hyp, ref := segments(5)
	got, err := c.Score(t.Context(), src, hyp, ref)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"source: Source sentence 0. candidate: Ayat terjemahan 0. reference: Ayat rujukan 0.",
			"source: Source sentence 1. candidate: Ayat terjemahan 1. reference: Ayat rujukan 1."},
		{"source: Source sentence 2. candidate: Ayat terjemahan 2. reference: Ayat rujukan 2.",
			"source: Source sentence 3. candidate: Ayat terjemahan 3. reference: Ayat rujukan 3."},
		{"source: Source sentence 4. candidate: Ayat terjemahan 4. reference: Ayat rujukan 4."},
	}
	if sent := srv.sent(); !slices.EqualFunc(sent, want, slices.Equal) {
		t.Errorf("batches sent:\n%q\nwant:\n%q", sent, want)
	}
	if !slices.Equal(got, []float64{0, 0.25, 0.5, 0.75, 1}) {
		t.Errorf("scores %v", got)
	}

	qe, _ := Open("tei+http://" + host + "?mode=qe")
	srv.reset()
	if _, err := qe.Score(t.Context(), src[:1], hyp[:1], nil); err != nil {
		t.Fatal(err)
	}
	if w := "source: Source sentence 0. candidate: Ayat terjemahan 0."; !slices.EqualFunc(srv.sent(), [][]string{{w}}, slices.Equal) {
		t.Errorf("qe input %q, want %q", srv.sent(), w)
	}
}

// Concurrent batches cover every segment once and land in order.
func TestScoreConcurrentBatches(t *testing.T) {
	srv := &teiServer{score: indexScore}
	c, _ := Open("tei+http://" + start(t, srv) + "?concurrency=3")
	src, hyp, ref := segments(70)
	got, err := c.Score(t.Context(), src, hyp, ref)
	if err != nil {
		t.Fatal(err)
	}
	if s := srv.sizes(); !slices.Equal(s, []int{6, 32, 32}) {
		t.Errorf("batch sizes %v, want 32, 32, 6 (default batch_size %d)", s, DefaultBatchSize)
	}
	for i, x := range got {
		if x != float64(i)/4 {
			t.Fatalf("score %d = %v, want %v", i, x, float64(i)/4)
		}
	}
	if _, err := c.Score(t.Context(), src, hyp, ref[:3]); err == nil {
		t.Error("mismatched reference count accepted")
	}
}

// A batch over the server's limit is answered 413 and halved until it fits.
func TestScoreHalvesOnTooLarge(t *testing.T) {
	srv := &teiServer{score: indexScore, maxBatch: 3}
	c, _ := Open("tei+http://" + start(t, srv) + "?batch_size=8&concurrency=1")
	src, hyp, ref := segments(8)
	got, err := c.Score(t.Context(), src, hyp, ref)
	if err != nil {
		t.Fatal(err)
	}
	if s := srv.sizes(); !slices.Equal(s, []int{2, 2, 2, 2}) {
		t.Errorf("accepted batch sizes %v, want four of 2", s)
	}
	if got[7] != 7.0/4 {
		t.Errorf("scores %v", got)
	}
}

// Scores are clipped to [0, 25], as MT5ForRegression clamps them.
func TestScoreClips(t *testing.T) {
	raw := []float64{-1.5, 30, 12.25, 25, 0}
	srv := &teiServer{score: func(in string) float64 { return raw[int(indexScore(in)*4)] }}
	c, _ := Open("tei+http://" + start(t, srv))
	src, hyp, ref := segments(len(raw))
	got, err := c.Score(t.Context(), src, hyp, ref)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 25, 12.25, 25, 0}; !slices.Equal(got, want) {
		t.Errorf("clipped %v, want %v", got, want)
	}
	if Clip(-0.01) != 0 || Clip(25.5) != 25 || Clip(3) != 3 {
		t.Error("Clip")
	}
}

// An answer that is not one score per input is an error, not a number.
func TestScoreRejectsWrongAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"two labels": `[[{"score":0.9,"label":"a"},{"score":0.1,"label":"b"}]]`,
		"no score":   `[[{"label":"a"}]]`,
		"too many":   `[[{"score":1,"label":"a"}],[{"score":2,"label":"a"}]]`,
		"not json":   `<html>`,
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		c, _ := Open("tei+" + ts.URL)
		_, err := c.Score(t.Context(), []string{"s"}, []string{"h"}, []string{"r"})
		if err == nil || !strings.Contains(err.Error(), ts.URL+"/predict") {
			t.Errorf("%s: err %v", name, err)
		}
		ts.Close()
	}
}

// 429 and 5xx are retried; 424 (the model failed on the input) is not.
func TestScoreRetries(t *testing.T) {
	srv := &teiServer{score: indexScore}
	srv.reset(503, 429)
	c, _ := Open("tei+http://" + start(t, srv) + "?max_retries=2")
	src, hyp, ref := segments(1)
	if _, err := fastRetries(c).Score(t.Context(), src, hyp, ref); err != nil || srv.count() != 3 {
		t.Errorf("err %v after %d calls, want success on the 3rd", err, srv.count())
	}
	srv.reset(503, 503, 503)
	_, err := c.Score(t.Context(), src, hyp, ref)
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") || srv.count() != 3 {
		t.Errorf("err %v after %d calls", err, srv.count())
	}
	srv.reset(424)
	_, err = c.Score(t.Context(), src, hyp, ref)
	if err == nil || !strings.Contains(err.Error(), "HTTP 424: synthetic 424") || srv.count() != 1 {
		t.Errorf("err %v after %d calls", err, srv.count())
	}
}

// The key comes from the named environment variable, is sent as a bearer
// token, and never appears in an error even when the server echoes it.
func TestAPIKey(t *testing.T) {
	const key = "sk-metricx-secret-123"
	t.Setenv("GLOSSOBENCH_TEST_METRICX_KEY", key)
	srv := &teiServer{score: indexScore, key: key}
	host := start(t, srv)
	c, err := Open("tei+http://" + host + "?api_key_env=GLOSSOBENCH_TEST_METRICX_KEY")
	if err != nil {
		t.Fatal(err)
	}
	src, hyp, ref := segments(2)
	if _, err := c.Score(t.Context(), src, hyp, ref); err != nil {
		t.Fatal(err)
	}
	noKey, _ := Open("tei+http://" + host)
	if _, err := noKey.Score(t.Context(), src, hyp, ref); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("keyless request: %v", err)
	}

	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"bad token %s"}`, r.Header.Get("Authorization"))
	}))
	defer echo.Close()
	c, _ = Open("tei+" + echo.URL + "?api_key_env=GLOSSOBENCH_TEST_METRICX_KEY")
	_, err = c.Score(t.Context(), src, hyp, ref)
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("echoed key not redacted: %v", err)
	}
	if _, err := Open("tei+http://" + host + "?api_key_env=GLOSSOBENCH_TEST_METRICX_UNSET"); err == nil || !strings.Contains(err.Error(), "GLOSSOBENCH_TEST_METRICX_UNSET") {
		t.Errorf("unset key variable: %v", err)
	}
}

// Opening sends nothing; the first request is the first Score's.
func TestOpenIsLazy(t *testing.T) {
	srv := &teiServer{score: indexScore}
	c, err := Open("tei+http://" + start(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.count(); n != 0 {
		t.Fatalf("%d requests before Score", n)
	}
	src, hyp, ref := segments(1)
	if _, err := c.Score(t.Context(), src, hyp, ref); err != nil {
		t.Fatal(err)
	}
	if n := srv.count(); n != 1 {
		t.Errorf("%d requests after one Score of one segment", n)
	}
}

// A server nobody listens on is an error naming the URL, after the retries.
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, _ := Open("tei+http://" + addr + "/v2?max_retries=1")
	src, hyp, ref := segments(3)
	_, err = fastRetries(c).Score(t.Context(), src, hyp, ref)
	if err == nil || !strings.Contains(err.Error(), "http://"+addr+"/v2/predict") || !strings.Contains(err.Error(), "gave up after 2 attempts") {
		t.Errorf("err %v", err)
	}
}

func TestParseSpec(t *testing.T) {
	cfg, err := ParseSpec("tei+https://gpu.example:8443/metricx/?mode=qe&api_key_env=K&batch_size=8&concurrency=4&timeout=90s&max_retries=0")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{BaseURL: "https://gpu.example:8443/metricx", Mode: ModeQE, APIKeyEnv: "K", BatchSize: 8, Concurrency: 4, Timeout: 90 * time.Second, MaxRetries: -1}
	if cfg != want {
		t.Errorf("got %+v\nwant %+v", cfg, want)
	}
	if cfg, _ := ParseSpec("tei+http://h:1"); cfg != (Config{BaseURL: "http://h:1"}) {
		t.Errorf("defaults %+v", cfg)
	}
	for spec, msg := range map[string]string{
		"http://h:1":                    "want tei+http://",
		"tei+ftp://h":                   "want tei+http://",
		"tei+http://?mode=qe":           "want a host",
		"tei+http://h:1?mode=ref":       `mode "ref": want hybrid or qe`,
		"tei+http://h:1?batch=3":        `unknown option "batch"`,
		"tei+http://h:1?batch_size=0":   "batch_size=\"0\" is not a valid count",
		"tei+http://h:1?concurrency=-2": "is not a valid count",
		"tei+http://h:1?timeout=soon":   "not a positive duration",
		"tei+http://u:hunter2@h:1":      "must not carry credentials",
	} {
		_, err := ParseSpec(spec)
		if err == nil || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: err %v, want %q", spec, err, msg)
		}
	}
}

// Once the client's retries are spent, an outage still reads as one: the
// error is a temporary net.Error (a timeout when the server hung), which a
// caller retries later instead of taking as the axis's answer. TEI's 424
// stays permanent.
func TestSpentRetriesStayTransient(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only after the body
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer hung.Close()
	cases := []struct {
		name               string
		host               string
		fail               []int
		transient, timeout bool
	}{
		{"connection refused", refused, nil, true, false},
		{"503", "", []int{503, 503}, true, false},
		{"429", "", []int{429, 429}, true, false},
		{"timeout", strings.TrimPrefix(hung.URL, "http://"), nil, true, true},
		{"424", "", []int{424}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host := tc.host
			if host == "" {
				srv := &teiServer{score: indexScore}
				srv.reset(tc.fail...)
				host = start(t, srv)
			}
			c, err := Open("tei+http://" + host + "?max_retries=1&timeout=50ms")
			if err != nil {
				t.Fatal(err)
			}
			src, hyp, ref := segments(1)
			_, err = fastRetries(c).Score(t.Context(), src, hyp, ref)
			if err == nil {
				t.Fatal("no error")
			}
			// Temporary through an interface of its own: net.Error's is
			// deprecated, yet the errors keep answering callers that ask it.
			var ne interface {
				net.Error
				Temporary() bool
			}
			if got := errors.As(err, &ne) && ne.Temporary(); got != tc.transient {
				t.Fatalf("temporary net.Error = %v, want %v: %v", got, tc.transient, err)
			}
			if got := httpjson.IsTransient(err); got != tc.transient {
				t.Fatalf("IsTransient = %v, want %v: %v", got, tc.transient, err)
			}
			if tc.transient && (ne.Timeout() != tc.timeout || !strings.Contains(err.Error(), "gave up after 2 attempts")) {
				t.Fatalf("Timeout() = %v, want %v, after 2 attempts: %v", ne.Timeout(), tc.timeout, err)
			}
		})
	}
}
