package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"go.temporal.io/sdk/testsuite"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/judge"
	"github.com/glossobench/glossobench/scorers/mcq"
)

// countingBackend answers instantly and counts what it was asked per item.
type countingBackend struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingBackend) note(id string) {
	c.mu.Lock()
	c.seen[id]++
	c.mu.Unlock()
}
func (c *countingBackend) Generate(_ context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	out := make([]backends.Generation, len(reqs))
	for i, r := range reqs {
		c.note(r.ID)
		out[i] = backends.Generation{ID: r.ID, Text: "A", FinishReason: "stop"}
	}
	return out, nil
}
func (c *countingBackend) LogLikelihood(_ context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	out := make([]backends.LLResult, len(reqs))
	for i, r := range reqs {
		c.note(r.ID)
		out[i] = backends.LLResult{ID: r.ID, LogProb: -float64(len(r.Continuation) + i)}
	}
	return out, nil
}
func (c *countingBackend) Capabilities() backends.Capabilities {
	return backends.Capabilities{LogLikelihood: true}
}
func (c *countingBackend) Close() error { return nil }

func testConfig(t *testing.T, storeDir, extra string) string {
	data, _ := filepath.Abs("../testdata/data")
	return fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: 10, checkpoint_every: 3}
axes:
  knowledge:
    datasets:
      - {name: g, path: %s/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz, format: global_mmlu, limit: 25}
%s`, storeDir, data, extra)
}

// newActEnv is an activity test environment with both queues' activities
// registered on a counting backend.
func newActEnv() (*testsuite.TestActivityEnvironment, *Activities, *countingBackend) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	acts, b := newActs()
	acts.RegisterCPU(env)
	acts.RegisterInference(env)
	return env, acts, b
}

func newActs() (*Activities, *countingBackend) {
	b := &countingBackend{seen: map[string]int{}}
	a := New(zerolog.Nop())
	a.OpenBackend = func(string, registry.Options) (backends.Backend, error) { return b, nil }
	return a, b
}

func TestInferNeverAsksTwice(t *testing.T) {
	env, acts, b := newActEnv()
	dir := t.TempDir()
	v, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "r", ConfigYAML: testConfig(t, dir, "")})
	if err != nil {
		t.Fatal(err)
	}
	var plan Plan
	v.Get(&plan)
	ref := RunRef{RunID: "r", StoreURI: plan.StoreURI}
	v, err = env.ExecuteActivity(acts.Dedup, ref)
	if err != nil {
		t.Fatal(err)
	}
	var dd DedupResult
	v.Get(&dd)
	if got := fmt.Sprint(dd.Axes[0].Shards); got != "[10 10 5]" || dd.Corpus != "no corpus" {
		t.Fatalf("dedup = %+v", dd)
	}

	// Delete one checkpoint object of shard 1, as if the worker died before writing it.
	in := ShardInput{RunRef: ref, Axis: "knowledge", Shard: 1}
	if _, err := env.ExecuteActivity(acts.Infer, in); err != nil {
		t.Fatal(err)
	}
	lost := filepath.Join(dir, filepath.FromSlash(runfiles.PredKey("r", "knowledge", 1, 3)))
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}
	before := len(b.seen)
	v, err = env.ExecuteActivity(acts.Infer, in)
	if err != nil {
		t.Fatal(err)
	}
	var r ShardResult
	v.Get(&r)
	if r.Total != 10 || r.Done != 10 || r.Reused != 9 {
		t.Fatalf("retry result %+v, want 9 reused of 10", r)
	}
	// Only the lost item's eight cloze requests (four letters, four choice
	// texts) were sent again.
	if after := len(b.seen); after != before {
		t.Fatalf("retry asked about new requests: %d -> %d", before, after)
	}
	repeats := 0
	for _, n := range b.seen {
		if n > 1 {
			repeats++
		}
	}
	if repeats != 8 {
		t.Fatalf("%d requests repeated, want the 8 of the one lost item", repeats)
	}
}

func TestDedupDropsPlantedContamination(t *testing.T) {
	env, acts, _ := newActEnv()
	dir := t.TempDir()
	// Plant the first two items' prompts (re-spaced, upper-cased) in a corpus file.
	items, err := acts.loadItemsForTest(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(t.TempDir(), "corpus.txt")
	text := "unrelated text\n\n" + strings.ToUpper(strings.Join(strings.Fields(items[0].Prompt), "  ")) + "\n\nmore text\n\n" + items[1].Prompt + "\n"
	os.WriteFile(corpus, []byte(text), 0o644)
	for _, fromEnv := range []bool{false, true} {
		dedupPlanted(t, env, acts, dir, corpus, fromEnv)
	}
}

// dedupPlanted screens the planted corpus named by the config, or, when
// fromEnv, by MB_DEDUP_CORPUS with no corpus in the config (spec §6).
func dedupPlanted(t *testing.T, env *testsuite.TestActivityEnvironment, acts *Activities, dir, corpus string, fromEnv bool) {
	extra, run := fmt.Sprintf("dedup: {corpus: [%s]}\n", corpus), "d"
	if fromEnv {
		t.Setenv("MB_DEDUP_CORPUS", corpus)
		extra, run = "", "d-env"
	}
	v, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: run, ConfigYAML: testConfig(t, dir, extra)})
	if err != nil {
		t.Fatal(err)
	}
	var plan Plan
	v.Get(&plan)
	v, err = env.ExecuteActivity(acts.Dedup, RunRef{RunID: run, StoreURI: plan.StoreURI})
	if err != nil {
		t.Fatal(err)
	}
	var dd DedupResult
	v.Get(&dd)
	ad := dd.Axes[0]
	if ad.Dropped != 2 || ad.Kept != 23 || ad.ContaminationRate == nil || *ad.ContaminationRate != 2.0/25 {
		t.Fatalf("env %v: axis dedup %+v", fromEnv, ad)
	}
	if !strings.Contains(dd.Corpus, "corpus.txt") || len(dd.KeptSHA256) != 64 || fromEnv != strings.Contains(dd.Corpus, "(corpus from MB_DEDUP_CORPUS)") {
		t.Fatalf("env %v: dedup %+v", fromEnv, dd)
	}
	if fromEnv {
		var m struct {
			Config struct {
				Dedup struct {
					CorpusFrom string `json:"corpus_from"`
				} `json:"dedup"`
			} `json:"config"`
		}
		st, _ := store.Open(context.Background(), plan.StoreURI)
		if err := getJSON(context.Background(), st, runfiles.ManifestKey(run), &m); err != nil || m.Config.Dedup.CorpusFrom != "MB_DEDUP_CORPUS" {
			t.Fatalf("manifest config.dedup.corpus_from %q (%v)", m.Config.Dedup.CorpusFrom, err)
		}
	}
}

// DedupCounts returns a few bytes per axis however many shards the axis has
// (10,000 here): the item count per shard, which EvalRun's history would
// hold, stays in the store, and Aggregate copies it from there into
// result.json.
func TestDedupCountsStaySmall(t *testing.T) {
	const n = 10_000
	env, acts, _ := newActEnv()
	cfg := fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: 1, checkpoint_every: 1}
axes:
  knowledge:
    scoring_mode: generate
    datasets: [{name: syn, path: %s, format: global_mmlu}]
`, t.TempDir(), synMMLU(t, n))
	_, ref, counts := prepareAndDedup(t, env, acts, "big", cfg)
	enc, err := json.Marshal(counts)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) > 100 || len(counts.Axes) != 1 || counts.Axes[0] != (AxisCounts{Axis: "knowledge", Kept: n, Shards: n}) {
		t.Fatalf("DedupCounts returned %d bytes: %s", len(enc), enc)
	}
	st, err := acts.store(t.Context(), ref.StoreURI)
	if err != nil {
		t.Fatal(err)
	}
	var stored DedupResult
	if err := getJSON(t.Context(), st, runfiles.DedupKey(ref.RunID), &stored); err != nil {
		t.Fatal(err)
	}
	if len(stored.Axes) != 1 || len(stored.Axes[0].Shards) != n {
		t.Fatalf("stored dedup result has %+v", stored.Axes)
	}
	if _, err := env.ExecuteActivity(acts.Aggregate, AggregateInput{RunRef: ref, Plan: Plan{ModelID: "m"}}); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := getJSON(t.Context(), st, runfiles.ResultKey(ref.RunID), &res); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Summary.Dedup, stored) {
		t.Fatalf("result.json's dedup differs from the stored one: %d axes, kept_sha256 %s", len(res.Summary.Dedup.Axes), res.Summary.Dedup.KeptSHA256)
	}
}

// loadItemsForTest prepares a throwaway run to read the items the config loads.
func (a *Activities) loadItemsForTest(t *testing.T, dir string) ([]scorers.Item, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	a.RegisterCPU(env)
	if _, err := env.ExecuteActivity(a.Prepare, PrepareInput{RunID: "peek", ConfigYAML: testConfig(t, dir, "")}); err != nil {
		return nil, err
	}
	st, err := store.NewLocal(dir)
	if err != nil {
		return nil, err
	}
	data, err := st.Get(context.Background(), runfiles.ItemsKey("peek", "knowledge"))
	if err != nil {
		return nil, err
	}
	return runfiles.DecodeJSONL[scorers.Item](runfiles.ItemsKey("peek", "knowledge"), data)
}

// failingBackend rejects one item for good and answers the rest.
type failingBackend struct{ countingBackend }

func (f *failingBackend) LogLikelihood(ctx context.Context, reqs []backends.LLRequest) ([]backends.LLResult, error) {
	if strings.HasSuffix(reqs[0].ID, "/abstract_algebra/test/3#A") {
		return nil, fmt.Errorf("gguf: request %q: cannot format chat messages", reqs[0].ID)
	}
	return f.countingBackend.LogLikelihood(ctx, reqs)
}

func TestInferRecordsItemErrorsAndScoresTheRest(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	b := &failingBackend{countingBackend{seen: map[string]int{}}}
	acts := New(zerolog.Nop())
	acts.OpenBackend = func(string, registry.Options) (backends.Backend, error) { return b, nil }
	acts.RegisterCPU(env)
	acts.RegisterInference(env)
	v, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "e", ConfigYAML: testConfig(t, t.TempDir(), "")})
	if err != nil {
		t.Fatal(err)
	}
	var plan Plan
	v.Get(&plan)
	ref := RunRef{RunID: "e", StoreURI: plan.StoreURI}
	if _, err := env.ExecuteActivity(acts.Dedup, ref); err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 3; s++ {
		if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "knowledge", Shard: s}); err != nil {
			t.Fatalf("shard %d: %v", s, err)
		}
	}
	v, err = env.ExecuteActivity(acts.Score, ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: "knowledge"}, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	var out AxisOutcome
	v.Get(&out)
	notes := strings.Join(out.Result.Notes, "\n")
	if out.Result.N != 24 || !strings.Contains(notes, "1 items could not be answered") || !strings.Contains(notes, "cannot format chat messages") {
		t.Fatalf("n=%d notes:\n%s", out.Result.N, notes)
	}
}

func TestJudgeOverlayAddsSecondaryQuality(t *testing.T) {
	judgeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"explanation\": \"fine\", \"rating\": 7}"},"finish_reason":"stop"}]}`)
	}))
	defer judgeSrv.Close()
	run := func(overlay bool) AxisOutcome {
		env, acts, _ := newActEnv()
		extra := fmt.Sprintf("judges: [{name: j, family: other, spec: %q}, {name: k, family: another, spec: %q}]\n", judgeSrv.URL, judgeSrv.URL)
		cfg := strings.Replace(testConfig(t, t.TempDir(), extra), "  knowledge:\n", "  knowledge:\n    scoring_mode: generate\n", 1)
		v, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "o", ConfigYAML: cfg, JudgeOverlay: overlay})
		if err != nil {
			t.Fatal(err)
		}
		var plan Plan
		v.Get(&plan)
		ref := RunRef{RunID: "o", StoreURI: plan.StoreURI}
		env.ExecuteActivity(acts.Dedup, ref)
		for s := 0; s < 3; s++ {
			if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "knowledge", Shard: s}); err != nil {
				t.Fatal(err)
			}
		}
		in := ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: "knowledge"}, Shards: 3}
		if plan.Axes[0].Judged != overlay {
			t.Fatalf("overlay %v: plan says judged=%v", overlay, plan.Axes[0].Judged)
		}
		if overlay {
			if _, err := env.ExecuteActivity(acts.Judge, in); err != nil {
				t.Fatal(err)
			}
		}
		v, err = env.ExecuteActivity(acts.Score, in)
		if err != nil {
			t.Fatal(err)
		}
		var out AxisOutcome
		v.Get(&out)
		v, err = env.ExecuteActivity(acts.Audit, in.AxisInput)
		if err != nil {
			t.Fatal(err)
		}
		var au AuditSummary
		v.Get(&au)
		var byJudge *AuditSummary
		for _, p := range append([]AuditSummary{au}, au.Pools...) {
			if p.Design != nil && p.Design.Source == "judge" {
				byJudge = &p
			}
		}
		if overlay {
			// Two judges grade the same answers: their ratings are audited
			// against the verifiable outcome, pooled by judge.
			if byJudge == nil || byJudge.Sources != 2 || byJudge.Design.Detector != judge.DetectorOverlay || byJudge.Design.Label != "correct" {
				t.Fatalf("judge-pool audit %+v", byJudge)
			}
		} else if byJudge != nil {
			t.Fatalf("no judges rated, yet a judge-pool audit: %+v", byJudge)
		}
		return out
	}
	off, on := run(false), run(true)
	if *off.Result.Score != *on.Result.Score {
		t.Fatalf("overlay moved the headline: %v vs %v", *off.Result.Score, *on.Result.Score)
	}
	if _, has := off.Result.Secondary["judge_quality_mean"]; has {
		t.Fatal("overlay off must leave the result unchanged")
	}
	if q := on.Result.Secondary["judge_quality_mean"]; q != 7.0 || on.Result.Secondary["judge_quality_n"] != 25.0 {
		t.Fatalf("judge_quality_mean %v n %v", q, on.Result.Secondary["judge_quality_n"])
	}
}

func TestRegistersGiveScoresAndMix(t *testing.T) {
	env, acts, _ := newActEnv()
	data, _ := filepath.Abs("../testdata/data")
	cfg := fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: 100}
axes:
  nlu:
    datasets:
      - {name: b, path: %s/belebele_ms_en/ms_belebele.jsonl, format: belebele, limit: 6, register: HIGH}
      - {name: i, path: %s/nli_indonli/id_indonli_lay_1000sample.jsonl, format: indonli, limit: 2, register: LOW}
`, t.TempDir(), data, data)
	ref, out := scoreOneShard(t, env, acts, "g", cfg, "nlu")
	mix, _ := out.Result.Secondary["register_mix"].(map[string]any)
	by, _ := out.Result.Secondary["by_register"].(map[string]any)
	if mix["HIGH"] != 0.75 || mix["LOW"] != 0.25 || len(by) != 2 {
		t.Fatalf("register mix %v, by register %v", mix, by)
	}
	v, err := env.ExecuteActivity(acts.Audit, AxisInput{RunRef: ref, Axis: "nlu"})
	if err != nil {
		t.Fatal(err)
	}
	var au AuditSummary
	v.Get(&au)
	var byRegister *AuditSummary
	for _, p := range append([]AuditSummary{au}, au.Pools...) {
		if p.Design != nil && p.Design.Source == "register" {
			byRegister = &p
		}
	}
	if byRegister == nil || byRegister.Sources != 2 || byRegister.Design.Detector != mcq.DetectorClozeConfidence {
		t.Fatalf("register-pool audit %+v", byRegister)
	}
}

// prepareRun prepares a run of cfg and dedups it.
func prepareRun(t *testing.T, env *testsuite.TestActivityEnvironment, acts *Activities, run, cfg string) RunRef {
	t.Helper()
	_, ref, _ := prepareAndDedup(t, env, acts, run, cfg)
	return ref
}

// prepareAndDedup runs Prepare of cfg and DedupCounts of the run.
func prepareAndDedup(t testing.TB, env *testsuite.TestActivityEnvironment, acts *Activities, run, cfg string) (Plan, RunRef, DedupCounts) {
	t.Helper()
	v, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: run, ConfigYAML: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var plan Plan
	v.Get(&plan)
	ref := RunRef{RunID: run, StoreURI: plan.StoreURI}
	v, err = env.ExecuteActivity(acts.DedupCounts, ref)
	if err != nil {
		t.Fatal(err)
	}
	var dd DedupCounts
	v.Get(&dd)
	return plan, ref, dd
}

// inferredAxis is a run prepared, deduplicated and inferred on one axis.
type inferredAxis struct {
	plan   Plan
	ref    RunRef
	dedup  DedupCounts
	shards int // of the axis
}

// inferAxis runs Prepare of cfg, Dedup and Infer of every shard of axis.
func inferAxis(t testing.TB, env *testsuite.TestActivityEnvironment, acts *Activities, run, cfg, axis string) inferredAxis {
	t.Helper()
	var r inferredAxis
	r.plan, r.ref, r.dedup = prepareAndDedup(t, env, acts, run, cfg)
	for _, a := range r.dedup.Axes {
		if a.Axis == axis {
			r.shards = a.Shards
		}
	}
	for s := range r.shards {
		if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: r.ref, Axis: axis, Shard: s}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// scoreOneShard prepares a run of cfg, dedups it, infers the axis's single
// shard and scores it.
func scoreOneShard(t *testing.T, env *testsuite.TestActivityEnvironment, acts *Activities, run, cfg, axis string) (RunRef, AxisOutcome) {
	t.Helper()
	ref := prepareRun(t, env, acts, run, cfg)
	if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: axis, Shard: 0}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(acts.Score, ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: axis}, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	var out AxisOutcome
	v.Get(&out)
	return ref, out
}
