package activities

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/scorers/checks/audit"
)

// randomBackend answers at random, deterministically: every log-likelihood
// and every generated letter is a hash of the request, so the model's
// confidence in any answer carries nothing about whether it is right.
type randomBackend struct{}

func unit(parts ...string) float64 {
	h := fnv.New64a()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return float64(h.Sum64()>>11) / (1 << 53)
}

func (randomBackend) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	out := make([]backends.Generation, len(reqs))
	for i, r := range reqs {
		letter := string(rune('A' + int(4*unit("gen", r.ID))))
		out[i] = backends.Generation{ID: r.ID, Text: letter, FinishReason: "stop"}
	}
	return out, nil
}

func (randomBackend) LogLikelihood(_ context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	out := make([]backends.LLResult, len(reqs))
	for i, r := range reqs {
		out[i] = backends.LLResult{ID: r.ID, LogProb: -8 * unit("ll", r.ID, r.Continuation)}
	}
	return out, nil
}

func (randomBackend) Capabilities() backends.Capabilities {
	return backends.Capabilities{LogLikelihood: true}
}
func (randomBackend) Close() error { return nil }

// randomJudge is an OpenAI-compatible judge that rates every answer 0–10 at
// random (a hash of the request).
func randomJudge(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		v := int(11 * unit("judge", string(body)))
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"explanation\": \"ok\", \"rating\": %d}"},"finish_reason":"stop"}]}`, v)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// auditedPools is every pool of an axis's audit summary that was audited
// (has a headline), with each of its detectors.
func auditedPools(s AuditSummary) []AuditSummary {
	var out []AuditSummary
	for _, p := range append([]AuditSummary{s}, s.Pools...) {
		if p.Headline == nil {
			continue
		}
		out = append(out, p)
		out = append(out, p.Trained...)
	}
	return out
}

// runRandomAxis runs prepare, dedup, infer, judge (when judges are
// configured), score and audit of one axis on the random backend.
func runRandomAxis(t *testing.T, axis, cfg string, judged bool) AuditSummary {
	t.Helper()
	env, acts, _ := newActEnv()
	acts.OpenBackend = func(string, registry.Options) (backends.Backend, error) { return randomBackend{}, nil }
	r := inferAxis(t, env, acts, "t", cfg, axis)
	in := ScoreInput{AxisInput: AxisInput{RunRef: r.ref, Axis: axis}, Shards: r.shards}
	if judged {
		if _, err := env.ExecuteActivity(acts.Judge, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.ExecuteActivity(acts.Score, in); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(acts.Audit, in.AxisInput)
	if err != nil {
		t.Fatal(err)
	}
	var au AuditSummary
	v.Get(&au)
	return au
}

// checkNearCoinFlip asserts that every audited pool of a detector that knows
// nothing reads near 0.50 and, by construction, never "not flagged".
func checkNearCoinFlip(t *testing.T, what string, au AuditSummary) {
	t.Helper()
	pools := auditedPools(au)
	if len(pools) == 0 {
		t.Fatalf("%s: nothing was audited: %+v", what, au)
	}
	for _, p := range pools {
		if math.Abs(*p.Headline-0.5) > 0.12 {
			t.Errorf("%s: pool %s, %s: headline %.3f; a detector that knows nothing must score near 0.50 (a tautology: the label is a function of the rating)",
				what, poolName(p), p.Detector, *p.Headline)
		}
		if p.Verdict == audit.VerdictNotFlagged || p.Verdict == audit.VerdictSourceNothing {
			t.Errorf("%s: pool %s, %s: verdict %q for a detector that knows nothing", what, poolName(p), p.Detector, p.Verdict)
		}
	}
}

func poolName(p AuditSummary) string {
	if p.Design == nil {
		return "?"
	}
	return p.Design.Detector + " by " + p.Design.Source
}

// TestAuditIsNotATautology: the audit rates rows by a detector against a
// label the detector did not produce. A backend whose confidence is random
// gives an MCQ headline near 0.50; a judge rating at random against the
// overlay's verifiable label gives near 0.50 too.
func TestAuditIsNotATautology(t *testing.T) {
	data, _ := filepath.Abs("../testdata/data")
	mcq := func(mode, extra string) string {
		return fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: 200, checkpoint_every: 50}
axes:
  knowledge:
    scoring_mode: %s
    datasets:
      - {name: g, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 600}
%s`, t.TempDir(), mode, data, extra)
	}
	t.Run("mcq cloze confidence", func(t *testing.T) {
		au := runRandomAxis(t, "knowledge", mcq("cloze", ""), false)
		checkNearCoinFlip(t, "cloze", au)
		if au.Design == nil || au.Design.Label != "correct" || au.Design.Source != "source" {
			t.Errorf("design %+v: want the model's confidence against its correctness, pooled by source", au.Design)
		}
	})
	t.Run("judge overlay", func(t *testing.T) {
		judge := randomJudge(t)
		extra := fmt.Sprintf("  if:\n    judge_overlay: true\n    datasets:\n      - {name: ifeval, path: %s, format: ifeval, limit: 200}\njudges: [{name: j1, family: other, spec: %q}, {name: j2, family: another, spec: %q}]\n",
			filepath.Join(data, "..", "ifeval", "input_data.jsonl"), judge.URL, judge.URL)
		cfg := strings.Replace(mcq("both", extra), "    scoring_mode: both\n", "    scoring_mode: both\n    judge_overlay: true\n", 1)
		au := runRandomAxis(t, "knowledge", cfg, true)
		checkNearCoinFlip(t, "knowledge overlay", au)
		var judgePool *AuditSummary
		for _, p := range append([]AuditSummary{au}, au.Pools...) {
			if p.Design != nil && p.Design.Source == "judge" {
				judgePool = &p
			}
		}
		if judgePool == nil || judgePool.Headline == nil || judgePool.Sources != 2 {
			t.Fatalf("no audited judge pool: %+v", au)
		}
	})
}
