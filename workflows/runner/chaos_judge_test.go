package runner_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/glossobench/glossobench/activities"
	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/workflows"
	"github.com/glossobench/glossobench/workflows/runner"
	"github.com/glossobench/glossobench/workflows/runner/runnertest"
)

// Kinds of reply the hostile judge gives.
const (
	replyValid   = "valid"   // {"rating": 7}: the only usable one
	replyGarbage = "garbage" // prose and broken brackets, no rating
	replyEmpty   = "empty"   // an empty message
	replyHuge    = "huge"    // 4 MiB of text without a rating
	replyOverCap = "overcap" // a 1 GiB body, far past any sane reply
)

var replyKinds = []string{replyValid, replyGarbage, replyEmpty, replyHuge, replyOverCap}

// hostileJudge is an OpenAI-compatible chat server that answers each distinct
// judge prompt with one kind of reply, chosen by the prompt's hash, so the
// same prompt always gets the same kind.
type hostileJudge struct {
	mu       sync.Mutex
	kinds    map[[32]byte]string // distinct prompt → the kind it got
	calls    int
	maxSent  int64 // most bytes of one over-cap reply the server managed to send
	overCaps int   // over-cap replies started
}

func (j *hostileJudge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []backends.Message `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var prompt bytes.Buffer
	for _, m := range req.Messages {
		prompt.WriteString(m.Role + "\x00" + m.Content + "\x00")
	}
	h := sha256.Sum256(prompt.Bytes())
	kind := replyKinds[int(h[0])%len(replyKinds)]
	j.mu.Lock()
	j.kinds[h] = kind
	j.calls++
	j.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	reply := func(content string) {
		c, _ := json.Marshal(content)
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`, c)
	}
	switch kind {
	case replyValid:
		reply(`{"explanation": "adequate", "rating": 7}`)
	case replyGarbage:
		reply("The answer is [[ seven ]] or maybe {rating: high} ]] [[ \x7f\ufffd lorem ipsum")
	case replyEmpty:
		reply("")
	case replyHuge:
		reply(strings.Repeat("sangat panjang tanpa penilaian ", 4<<20/31))
	case replyOverCap:
		// Streamed, never held: the client must stop reading long before the end.
		j.mu.Lock()
		j.overCaps++
		j.mu.Unlock()
		sent, _ := io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"`)
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		total := int64(sent)
		for total < 1<<30 {
			n, err := w.Write(chunk)
			total += int64(n)
			if err != nil {
				break
			}
		}
		j.mu.Lock()
		j.maxSent = max(j.maxSent, total)
		j.mu.Unlock()
	}
}

// countingInstant is the instant backend that also counts how often it was
// asked each request id, to show no item is inferred twice.
type countingInstant struct {
	instant
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingInstant) Generate(ctx context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	c.mu.Lock()
	for _, r := range reqs {
		c.seen[r.ID]++
	}
	c.mu.Unlock()
	return c.instant.Generate(ctx, reqs)
}

func (c *countingInstant) repeated() (total, repeated int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.seen {
		total += n
		repeated += n - 1
	}
	return total, repeated
}

// Fault-matrix case 5: the judge answers garbage, empty strings, huge replies
// and a reply far past the client's read cap. The run completes; every bad
// reply is counted as parse_fail (or, past the cap, as a dropped rating),
// never as a score; the items with a valid rating are scored exactly as an
// undisturbed judge would score them; no huge reply reaches the store.
func TestChaosJudgeGarbage(t *testing.T) {
	_, c := runnertest.StartServer(t)
	model := &countingInstant{seen: map[string]int{}}
	acts := activities.New(zerolog.Nop())
	acts.OpenBackend = func(string, registry.Options) (backends.Backend, error) { return model, nil }
	defer acts.Close()
	w, err := runner.StartWorkers(c, acts, runner.All)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	hj := &hostileJudge{kinds: map[[32]byte]string{}}
	hs := httptest.NewServer(hj)
	defer hs.Close()

	storeDir := t.TempDir()
	cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: instant-model}
store: {uri: %s}
run: {shard_size: 4, checkpoint_every: 2, bootstrap_resamples: 200}
judges:
  - {name: hostile, family: other, spec: "openai:%s"}
axes:
  mt:
    datasets:
      - {name: mt_bench, path: %s, format: mt_bench, limit: 10}
`, storeDir, hs.URL, filepath.Join(repoRoot(t), "testdata", "mt", "question.jsonl"))

	stopSampling := make(chan struct{})
	peakHeap := make(chan uint64)
	go samplePeakHeap(stopSampling, peakHeap)
	start := time.Now()
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "chaos-judge"})
	took := time.Since(start)
	close(stopSampling)
	heap := <-peakHeap
	r := readResult(t, res.Summary.ResultPath)
	mt, ok := r.Axes["mt"]
	if !ok {
		t.Fatalf("no mt axis in the result: %+v", r.Axes)
	}

	hj.mu.Lock()
	byKind := map[string]int{}
	for _, k := range hj.kinds {
		byKind[k]++
	}
	distinct, calls, maxSent, overCaps := len(hj.kinds), hj.calls, hj.maxSent, hj.overCaps
	hj.mu.Unlock()
	t.Logf("judge prompts: %d distinct, %d calls; replies by kind %v; largest over-cap send %d MiB; peak heap %d MiB",
		distinct, calls, byKind, maxSent>>20, heap>>20)
	// One 1 GiB reply read whole would take more than 1 GiB of heap by itself
	// (the whole test process, Temporal server included, counts here).
	if heap >= 1<<30 {
		t.Errorf("peak heap %d MiB during the run: a huge reply was held", heap>>20)
	}
	const items, turns = 10, 2
	if distinct != items*turns {
		t.Fatalf("the judge saw %d distinct prompts, want %d (10 items × 2 turns)", distinct, items*turns)
	}
	for _, k := range replyKinds {
		if byKind[k] == 0 {
			t.Fatalf("no prompt drew a %s reply: the test would not exercise it (kinds %v)", k, byKind)
		}
	}

	// The stored ratings agree with what the judge answered.
	stored := storedRatings(t, filepath.Join(storeDir, "runs", "chaos-judge", "mt"))
	var valid, parseFail, dropped int
	scoredItems, ratedItems := map[string]bool{}, map[string]bool{}
	for _, rt := range stored {
		ratedItems[rt.ItemID] = true
		switch {
		case rt.Valid():
			valid++
			scoredItems[rt.ItemID] = true
			if *rt.Value != 7 {
				t.Errorf("item %s turn %d: rating %v, the judge said 7", rt.ItemID, rt.Turn, *rt.Value)
			}
		case rt.ParseFail:
			parseFail++
		case rt.Dropped:
			dropped++
		}
		if len(rt.Raw) > judge.MaxRaw+len("…") {
			t.Errorf("item %s: a %d-byte reply was stored; replies are kept to %d bytes", rt.ItemID, len(rt.Raw), judge.MaxRaw)
		}
	}
	badParse := byKind[replyGarbage] + byKind[replyEmpty] + byKind[replyHuge]
	if valid != byKind[replyValid] || parseFail != badParse || dropped != byKind[replyOverCap] {
		t.Fatalf("stored ratings: %d valid, %d parse_fail, %d dropped; the judge gave %d valid, %d unparseable, %d over-cap",
			valid, parseFail, dropped, byKind[replyValid], badParse, byKind[replyOverCap])
	}
	if got := mt.Secondary["parse_fail"]; got != float64(badParse) {
		t.Errorf("result parse_fail = %v, want %d", got, badParse)
	}
	if got := mt.Secondary["judge_dropped"]; got != float64(byKind[replyOverCap]) {
		t.Errorf("result judge_dropped = %v, want %d", got, byKind[replyOverCap])
	}
	// An undisturbed judge rating every turn 7 gives every item 0.7; here the
	// items with at least one valid turn must get exactly that, and the rest
	// must be counted out, not scored.
	if mt.N != len(scoredItems) || mt.Score == nil || *mt.Score != 0.7 {
		t.Fatalf("mt: n=%d score=%v; want n=%d (items with a valid rating) and score 0.7", mt.N, mt.Score, len(scoredItems))
	}
	if unrated := items - len(scoredItems); unrated > 0 {
		want := fmt.Sprintf("%d items had no valid judge rating", unrated)
		if !strings.Contains(strings.Join(mt.Notes, "\n"), want) {
			t.Errorf("notes %q do not say %q", mt.Notes, want)
		}
	}

	// The over-cap reply was cut at the judge's read cap (judge.MaxReplyBytes,
	// far below the model client's 64 MiB), never read whole.
	if overCaps > 0 && (maxSent >= 4*judge.MaxReplyBytes || maxSent < 1<<20) {
		t.Errorf("an over-cap reply sent %d MiB before the client hung up; want about the %d MiB judge cap", maxSent>>20, judge.MaxReplyBytes>>20)
	}
	total, repeated := model.repeated()
	if total != items*turns || repeated != 0 {
		t.Errorf("model asked %d times with %d repeats; want %d, none repeated", total, repeated, items*turns)
	}
	// Lost: an item whose judging left no trace in the store at all.
	chaosRow(t, "5 judge garbage/empty/huge", 1, 1, items-len(ratedItems), repeated, 0, took)
}

// samplePeakHeap samples the live heap every few milliseconds until stop is
// closed, then sends the largest value seen.
func samplePeakHeap(stop <-chan struct{}, peak chan<- uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var top uint64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		metrics.Read(sample)
		top = max(top, sample[0].Value.Uint64())
		select {
		case <-stop:
			peak <- top
			return
		case <-tick.C:
		}
	}
}

// storedRatings reads every judge rating checkpointed under an axis folder.
func storedRatings(t *testing.T, axisDir string) []judge.Rating {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(axisDir, "shards", "*", "rated-*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rated-*.jsonl under %s (%v)", axisDir, err)
	}
	var out []judge.Rating
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var p struct {
				Variants map[string]json.RawMessage `json:"variants"`
			}
			if err := json.Unmarshal(line, &p); err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			var rs []judge.Rating
			if err := json.Unmarshal(p.Variants[judge.VariantKey], &rs); err != nil {
				t.Fatalf("%s:%d: variants.judge: %v", f, i+1, err)
			}
			out = append(out, rs...)
		}
	}
	return out
}
