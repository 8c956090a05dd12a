package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/glossobench/glossobench/infra/runfiles"

	"go.temporal.io/sdk/testsuite"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

// axisExtraFor is what an axis needs in its config section to run without judges.
func axisExtraFor(axis string) string {
	if axis == "safety" {
		return "    scorer: rules\n"
	}
	return ""
}

// judgeServer is an OpenAI-compatible judge that answers every request with reply.
func judgeServer(t *testing.T, reply string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, reply)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// axisRun is one axis taken through every stage up to Score.
type axisRun struct {
	plan      Plan
	in        ScoreInput // what Judge and Score were given
	judgeNote string
	out       AxisOutcome
}

// runAxisStages prepares cfg, dedups it, infers every shard of axis, judges
// it when the plan says so and scores it.
func runAxisStages(t *testing.T, env *testsuite.TestActivityEnvironment, acts *Activities, run, cfg, axis string) axisRun {
	t.Helper()
	inf := inferAxis(t, env, acts, run, cfg, axis)
	r := axisRun{plan: inf.plan}
	in := ScoreInput{AxisInput: AxisInput{RunRef: inf.ref, Axis: axis}, Shards: inf.shards}
	r.in = in
	for _, ap := range r.plan.Axes {
		if ap.Name == axis && ap.Judged {
			v, err := env.ExecuteActivity(acts.Judge, in)
			if err != nil {
				t.Fatal(err)
			}
			var n StageNote
			v.Get(&n)
			r.judgeNote = n.Note
		}
	}
	v, err := env.ExecuteActivity(acts.Score, in)
	if err != nil {
		t.Fatal(err)
	}
	v.Get(&r.out)
	return r
}

func mtConfig(t *testing.T, judgeURL, run, axisExtra string) string {
	data, _ := filepath.Abs("../testdata/mt/question.jsonl")
	return fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: 10%s}
judges: [{name: j, family: other, spec: %q}, {name: k, family: another, spec: %q}]
axes:
  mt:
%s    datasets:
      - {name: q, path: %s, format: mt_bench, limit: 3}
`, t.TempDir(), run, judgeURL, judgeURL, axisExtra, data)
}

// TestRunJudgeFloorReachesJudgedAxes: run.judge_floor is the agreement floor
// of every judged axis that sets none of its own; the axis option wins.
func TestRunJudgeFloorReachesJudgedAxes(t *testing.T) {
	url := judgeServer(t, `{"explanation": "fine", "rating": 7}`)
	for _, c := range []struct {
		run, axis string
		want      float64
	}{
		{"", "", 0.5},
		{", judge_floor: 0.9", "", 0.9},
		{", judge_floor: 0", "", 0},
		{", judge_floor: 0.9", "    options: {agreement_floor: 0.3}\n", 0.3},
	} {
		env, acts, _ := newActEnv()
		r := runAxisStages(t, env, acts, "f", mtConfig(t, url, c.run, c.axis), "mt")
		if got := r.out.Result.Secondary["agreement_floor"]; got != c.want {
			t.Errorf("run%q axis %q: agreement_floor %v, want %v", c.run, c.axis, got, c.want)
		}
	}
}

// TestWeightZeroIsKept: an axis configured with weight 0 has weight 0 in the
// plan and the outcome, not the default 1.
func TestWeightZeroIsKept(t *testing.T) {
	env, acts, _ := newActEnv()
	cfg := strings.Replace(testConfig(t, t.TempDir(), ""), "  knowledge:\n", "  knowledge:\n    weight: 0\n", 1)
	r := runAxisStages(t, env, acts, "w", cfg, "knowledge")
	if r.plan.Axes[0].Weight != 0 || r.out.Weight != 0 {
		t.Fatalf("weight 0 became plan %v, outcome %v", r.plan.Axes[0].Weight, r.out.Weight)
	}
}

// TestOverlayNoteCountsRatedResponses: the judge overlay on a cloze-only axis
// has no generated response to rate, and its note says so.
func TestOverlayNoteCountsRatedResponses(t *testing.T) {
	url := judgeServer(t, `{"explanation": "fine", "rating": 7}`)
	extra := fmt.Sprintf("judges: [{name: j, family: other, spec: %q}]\n", url)
	for mode, want := range map[string]string{
		"cloze":    "0 responses rated by j (25 items have no generated response",
		"generate": "25 responses rated by j",
	} {
		env, acts, _ := newActEnv()
		cfg := strings.Replace(testConfig(t, t.TempDir(), extra), "  knowledge:\n", "  knowledge:\n    judge_overlay: true\n    scoring_mode: "+mode+"\n", 1)
		r := runAxisStages(t, env, acts, "o", cfg, "knowledge")
		if !strings.Contains(r.judgeNote, want) {
			t.Errorf("%s: judge note %q does not say %q", mode, r.judgeNote, want)
		}
	}
}

// truncatingBackend answers like countingBackend, every generation cut at max_tokens.
type truncatingBackend struct{ *countingBackend }

func (b truncatingBackend) Generate(ctx context.Context, reqs []backends.GenRequest) ([]backends.Generation, error) {
	out, err := b.countingBackend.Generate(ctx, reqs)
	for i := range out {
		out[i].FinishReason = "length"
	}
	return out, err
}

// TestTruncationWarnsOnEveryGenerativeAxis: spec §10 #9 on IF, NLG and Safety
// as on MCQ and MT.
func TestTruncationWarnsOnEveryGenerativeAxis(t *testing.T) {
	td, _ := filepath.Abs("../testdata")
	datasets := map[string]string{
		"if":     "{name: i, path: " + td + "/ifeval/input_data.jsonl, format: ifeval, limit: 5}",
		"nlg":    "{name: f, path: " + td + "/nlg/flores_passages_eng_zsm_from_belebele.sample.jsonl, format: flores_passages, limit: 5}",
		"safety": "{name: s, path: " + td + "/safety/ms_general_sample.jsonl, format: seahelm_safeguard, limit: 6}",
	}
	for axis, ds := range datasets {
		env, acts, b := newActEnv()
		acts.OpenBackend = func(string, registry.Options) (backends.Backend, error) { return truncatingBackend{b}, nil }
		cfg := fmt.Sprintf("model: {spec: \"openai:http://127.0.0.1:1\", id: m}\nstore: {uri: %s}\naxes:\n  %s:\n%s    datasets: [%s]\n",
			t.TempDir(), axis, axisExtraFor(axis), ds)
		r := runAxisStages(t, env, acts, "t", cfg, axis)
		notes := strings.Join(r.out.Result.Notes, "\n")
		if r.out.Result.TruncationRate != 1 || !strings.Contains(notes, "WARNING: truncation_rate 1.00 >= 0.30") {
			t.Errorf("%s: truncation_rate %v, notes:\n%s", axis, r.out.Result.TruncationRate, notes)
		}
	}
}

// TestAggregatePublishesRankingMean: near-chance axes stay in ms_public but
// not in the ranking mean, which names what it leaves out; the run's
// warnings (truncation) reach the summary.
func TestAggregatePublishesRankingMean(t *testing.T) {
	env, acts, _ := newActEnv()
	ref := prepareRun(t, env, acts, "a", testConfig(t, t.TempDir(), ""))
	score := func(v float64) *float64 { return &v }
	outcome := func(axis string, s, chance, trunc float64, notes ...string) AxisOutcome {
		return AxisOutcome{Weight: 1, Tier: "public", Result: scorers.AxisResult{Axis: axis, Score: score(s), Chance: chance, N: 10, TruncationRate: trunc, Notes: notes}}
	}
	in := AggregateInput{RunRef: ref, Plan: Plan{ModelID: "m"}, Outcomes: []AxisOutcome{
		outcome("knowledge", 0.9, 0.25, 0),
		outcome("nlu", 0.26, 0.25, 0),
		outcome("if", 0.5, 0, 1, "WARNING: truncation_rate 1.00 >= 0.30: generations hit max_tokens; a low score may be a cap-hit, not weakness"),
	}}
	v, err := env.ExecuteActivity(acts.Aggregate, in)
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	v.Get(&sum)
	var res struct {
		Summary map[string]any `json:"summary"`
	}
	st, _ := store.Open(context.Background(), ref.StoreURI)
	data, err := st.Get(context.Background(), runfiles.ResultKey("a"))
	if err != nil || json.Unmarshal(data, &res) != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if ms, _ := s["ms_public"].(float64); math.Abs(ms-(0.9+0.26+0.5)/3) > 1e-12 {
		t.Errorf("ms_public %v", s["ms_public"])
	}
	if r, _ := s["ms_ranking"].(float64); math.Abs(r-0.7) > 1e-12 {
		t.Errorf("ms_ranking %v, want 0.7 (knowledge, if)", s["ms_ranking"])
	}
	if fmt.Sprint(s["ms_ranking_axes"], s["ms_ranking_left_out"]) != "[knowledge if] [nlu]" {
		t.Errorf("ranking axes %v, left out %v", s["ms_ranking_axes"], s["ms_ranking_left_out"])
	}
	for _, m := range []map[string]any{s, sum} {
		if w := fmt.Sprint(m["warnings"]); !strings.Contains(w, "if: WARNING: truncation_rate 1.00") {
			t.Errorf("warnings %s", w)
		}
	}
}

// TestAggregateWeightZeroIsOutsideTheMS: weight 0 puts an axis outside every
// mean (spec §2): not in ms_axes, ms_public, ms_pooled or the interval, whose
// one remaining axis gives its own interval; the notes name each axis's tier
// and never call a self-built axis part of ms_public.
func TestAggregateWeightZeroIsOutsideTheMS(t *testing.T) {
	env, acts, _ := newActEnv()
	ref := prepareRun(t, env, acts, "z", testConfig(t, t.TempDir(), ""))
	score := func(v float64) *float64 { return &v }
	in := AggregateInput{RunRef: ref, Plan: Plan{ModelID: "m"}, Outcomes: []AxisOutcome{
		{Weight: 0, Tier: "public", Result: scorers.AxisResult{Axis: "knowledge", Score: score(0.9), Chance: 0.25, N: 10, CI95: &[2]float64{0.8, 1}}},
		{Weight: 1, Tier: "public", Result: scorers.AxisResult{Axis: "nlu", Score: score(0.42), Chance: 0.25, N: 10, CI95: &[2]float64{0.3, 0.5}}},
		{Weight: 1, Tier: "selfbuilt", Result: scorers.AxisResult{Axis: "cultural", Score: score(0.26), Chance: 0.25, N: 10}},
	}}
	if _, err := env.ExecuteActivity(acts.Aggregate, in); err != nil {
		t.Fatal(err)
	}
	st, _ := store.Open(context.Background(), ref.StoreURI)
	res, err := runfiles.InStore(context.Background(), st, "z").Result()
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.MSPublic == nil || *s.MSPublic != 0.42 || fmt.Sprint(s.MSAxes) != "[nlu]" {
		t.Errorf("ms_public %v over %v, want 0.42 over [nlu]", s.MSPublic, s.MSAxes)
	}
	if s.MSCI95 == nil || *s.MSCI95 != [2]float64{0.3, 0.5} {
		t.Errorf("ms_ci95 %v, want nlu's own [0.3 0.5]", s.MSCI95)
	}
	if !strings.Contains(s.MSNote, "knowledge (weight 0)") {
		t.Errorf("ms_note %q does not say knowledge has weight 0", s.MSNote)
	}
	notes := strings.Join(s.Notes, "\n")
	for _, want := range []string{"cultural: selfbuilt (experimental) tier: in ms_experimental only", "knowledge: public tier, weight 0: in no mean score", "nlu: public tier: in ms_public, ms_pooled, ms_ranking"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "in ms_public but") {
		t.Errorf("notes call a self-built axis part of ms_public:\n%s", notes)
	}
}

func safetyConfig(t *testing.T, extra, axisExtra string) string {
	td, _ := filepath.Abs("../testdata")
	return fmt.Sprintf("model: {spec: \"openai:http://127.0.0.1:1\", id: m}\nstore: {uri: %s}\n%saxes:\n  safety:\n%s    datasets: [{name: s, path: %s/safety/ms_general_sample.jsonl, format: seahelm_safeguard, limit: 6}]\n",
		t.TempDir(), extra, axisExtra, td)
}

// TestSafetyWithoutJudgesSkips: with no judges Safety is skipped and flagged
// like MT; the rule-based detector runs only when the axis says scorer: rules.
func TestSafetyWithoutJudgesSkips(t *testing.T) {
	env, acts, _ := newActEnv()
	v, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "s", ConfigYAML: safetyConfig(t, "", "")})
	if err == nil {
		var plan Plan
		v.Get(&plan)
		if len(plan.Axes) != 0 || len(plan.Skipped) != 1 || !strings.HasPrefix(plan.Skipped[0].Reason, "skipped_no_judge") {
			t.Errorf("safety without judges: axes %+v, skipped %+v", plan.Axes, plan.Skipped)
		}
	} else if !strings.Contains(err.Error(), "no configured axis can run") {
		t.Fatal(err)
	}

	url := judgeServer(t, `{"explanation": "x", "label": "Refusal"}`)
	judges := fmt.Sprintf("judges: [{name: j, family: other, spec: %q}]\n", url)
	for _, extra := range []string{"", judges} {
		env, acts, _ := newActEnv()
		r := runAxisStages(t, env, acts, "s", safetyConfig(t, extra, "    scorer: rules\n"), "safety")
		notes := strings.Join(r.out.Result.Notes, "\n")
		if r.plan.Axes[0].Judged || r.out.Result.ScorerType != scorers.ScorerRule || !strings.Contains(notes, "scorer: rules") {
			t.Errorf("scorer: rules (judges %q): judged %v, scorer_type %s, notes:\n%s", extra, r.plan.Axes[0].Judged, r.out.Result.ScorerType, notes)
		}
	}
}

// TestMTKeepsParseFailures: judges that never answer in the rating schema
// leave MT without a score, and it says why and how often, not "MT needs at
// least one judge".
func TestMTKeepsParseFailures(t *testing.T) {
	url := judgeServer(t, "I would rather not rate this.")
	env, acts, _ := newActEnv()
	before := counterSum(t, "glossobench_judge_parse_failures_total", nil)
	r := runAxisStages(t, env, acts, "p", mtConfig(t, url, "", ""), "mt")
	res := r.out.Result
	// The metric counts the same replies, summed over the two judges.
	if got := counterSum(t, "glossobench_judge_parse_failures_total", nil) - before; got != 12 {
		t.Errorf("glossobench_judge_parse_failures_total went up by %v, want 12", got)
	}
	notes := strings.Join(res.Notes, "\n")
	if res.Score != nil || res.Metric == "skipped_no_judge" || strings.Contains(notes, "needs at least one judge") ||
		!strings.Contains(notes, "failed to parse") || res.Secondary["parse_fail"] != 12.0 {
		t.Errorf("metric %s, secondary %v, notes:\n%s", res.Metric, res.Secondary, notes)
	}
}

// resultJSON reads a run's result.json as a generic document.
func resultJSON(t *testing.T, ref RunRef) map[string]any {
	t.Helper()
	st, _ := store.Open(context.Background(), ref.StoreURI)
	data, err := st.Get(context.Background(), runfiles.ResultKey(ref.RunID))
	var doc map[string]any
	if err != nil || json.Unmarshal(data, &doc) != nil {
		t.Fatalf("result.json: %v", err)
	}
	return doc
}

// TestModelIdentityPinsTheWeights: the GGUF file's SHA-256 is in result.json
// and the leaderboard pins, so other weights behind the same path are another row.
func TestModelIdentityPinsTheWeights(t *testing.T) {
	weights := filepath.Join(t.TempDir(), "m.gguf")
	var pins []string
	for i, content := range []string{"weights one", "weights two"} {
		os.WriteFile(weights, []byte(content), 0o644)
		env, acts, _ := newActEnv()
		cfg := strings.Replace(testConfig(t, t.TempDir(), ""), `spec: "openai:http://127.0.0.1:1"`, `spec: "gguf:`+weights+`", revision: r1`, 1)
		run := fmt.Sprintf("id%d", i)
		ref := prepareRun(t, env, acts, run, cfg)
		if _, err := env.ExecuteActivity(acts.Aggregate, AggregateInput{RunRef: ref, Plan: Plan{ModelID: "m", BenchVersion: "glossobench-v1"}}); err != nil {
			t.Fatal(err)
		}
		id, _ := resultJSON(t, ref)["model_identity"].(map[string]any)
		sum := sha256.Sum256([]byte(content))
		if id["sha256"] != hex.EncodeToString(sum[:]) || id["file"] != "m.gguf" || id["revision"] != "r1" {
			t.Fatalf("model_identity %v", id)
		}
		pins = append(pins, fmt.Sprint(id["sha256"]))
	}
	if pins[0] == pins[1] {
		t.Fatal("swapped weights kept the pin")
	}
}

// TestResumeRefusesOtherWeights: rerunning a run id with other weights
// behind the same path (or another revision) would mix two models under one
// identity, so Prepare refuses it with a sentence; the same weights resume.
func TestResumeRefusesOtherWeights(t *testing.T) {
	weights := filepath.Join(t.TempDir(), "m.gguf")
	os.WriteFile(weights, []byte("weights one"), 0o644)
	cfg := strings.Replace(testConfig(t, t.TempDir(), ""), `spec: "openai:http://127.0.0.1:1"`, `spec: "gguf:`+weights+`", revision: r1`, 1)
	env, acts, _ := newActEnv()
	prepareRun(t, env, acts, "same", cfg)
	if _, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "same", ConfigYAML: cfg}); err != nil {
		t.Fatalf("the same weights do not resume: %v", err)
	}
	os.WriteFile(weights, []byte("weights two"), 0o644)
	_, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "same", ConfigYAML: cfg})
	if err == nil || !strings.Contains(err.Error(), "run same was started on other weights") || !strings.Contains(err.Error(), "pick another run id") {
		t.Fatalf("swapped weights under one run id: %v", err)
	}
	// A server that serves another model under the same URL.
	served := "model-a"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"data":[{"id":%q}]}`, served)
	}))
	t.Cleanup(srv.Close)
	cfg = strings.Replace(testConfig(t, t.TempDir(), ""), "openai:http://127.0.0.1:1", "openai:"+srv.URL, 1)
	prepareRun(t, env, acts, "served", cfg)
	served = "model-b"
	_, err = env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "served", ConfigYAML: cfg})
	if err == nil || !strings.Contains(err.Error(), "server model model-a, now model-b") {
		t.Fatalf("another server model under one run id: %v", err)
	}
}

// TestAllowNewModelStartsUnfinishedAxesOver: with AllowNewModel a resume
// on other weights goes on: the axis already scored (knowledge) is kept,
// the unfinished one (nlu, answered in part by the earlier weights) starts
// over with none of the earlier answers counting, the run measures the new
// weights from then on, and result.json's notes say which axis came from
// which model. Without it the resume is refused, naming the flag.
func TestAllowNewModelStartsUnfinishedAxesOver(t *testing.T) {
	weights := filepath.Join(t.TempDir(), "m.gguf")
	os.WriteFile(weights, []byte("weights one"), 0o644)
	data, _ := filepath.Abs("../testdata/data")
	nlu := "  nlu:\n    datasets:\n      - {name: b, path: " + data + "/belebele_ms_en/ms_belebele.jsonl, format: belebele, limit: 6}\n"
	cfg := strings.Replace(testConfig(t, t.TempDir(), nlu), `spec: "openai:http://127.0.0.1:1"`, `spec: "gguf:`+weights+`"`, 1)
	env, acts, b := newActEnv()
	_, ref, dd := prepareAndDedup(t, env, acts, "swap", cfg)
	shards := map[string]int{}
	for _, ax := range dd.Axes {
		shards[ax.Axis] = ax.Shards
	}
	for s := range shards["knowledge"] {
		if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "knowledge", Shard: s}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.ExecuteActivity(acts.Score, ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: "knowledge"}, Shards: shards["knowledge"]}); err != nil {
		t.Fatal(err)
	}
	nluShard := ShardInput{RunRef: ref, Axis: "nlu", Shard: 0}
	if _, err := env.ExecuteActivity(acts.Infer, nluShard); err != nil {
		t.Fatal(err)
	}

	os.WriteFile(weights, []byte("weights two"), 0o644)
	in := PrepareInput{RunID: "swap", ConfigYAML: cfg}
	if _, err := env.ExecuteActivity(acts.Prepare, in); err == nil || !strings.Contains(err.Error(), "--allow-new-model") {
		t.Fatalf("resume on other weights without the flag: %v", err)
	}
	in.AllowNewModel = true
	v, err := env.ExecuteActivity(acts.Prepare, in)
	if err != nil {
		t.Fatal(err)
	}
	var plan Plan
	v.Get(&plan)
	two := sha256.Sum256([]byte("weights two"))
	if plan.ModelIdentity.SHA256 != hex.EncodeToString(two[:]) || plan.Generation("nlu") != 1 || plan.Generation("knowledge") != 0 ||
		len(plan.ModelChanges) != 1 || !strings.Contains(plan.ModelChanges[0], "nlu started over") || !strings.Contains(plan.ModelChanges[0], "knowledge were scored on the earlier model") {
		t.Fatalf("plan after the change: identity %+v, generations nlu %d knowledge %d, notes %q", plan.ModelIdentity, plan.Generation("nlu"), plan.Generation("knowledge"), plan.ModelChanges)
	}
	requests := func() (n int) {
		for _, c := range b.seen {
			n += c
		}
		return n
	}
	asked := requests()
	v, err = env.ExecuteActivity(acts.Infer, nluShard)
	if err != nil {
		t.Fatal(err)
	}
	var r ShardResult
	v.Get(&r)
	if r.Reused != 0 || r.Done != r.Total || r.Total == 0 {
		t.Fatalf("nlu shard after the change: %+v, want every item answered again", r)
	}
	// The new model's answers are the axis's checkpoints from now on: a
	// further resume (the same weights, no flag needed) reuses them.
	if _, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "swap", ConfigYAML: cfg}); err != nil {
		t.Fatalf("resume on the new weights: %v", err)
	}
	v, err = env.ExecuteActivity(acts.Infer, nluShard)
	if err != nil {
		t.Fatal(err)
	}
	v.Get(&r)
	if r.Reused != r.Total {
		t.Fatalf("nlu shard resumed again: %+v, want all reused", r)
	}
	if requests() == asked {
		t.Fatal("the new model was never asked")
	}
	if _, err := env.ExecuteActivity(acts.Aggregate, AggregateInput{RunRef: ref, Plan: plan}); err != nil {
		t.Fatal(err)
	}
	doc := resultJSON(t, ref)
	id, _ := doc["model_identity"].(map[string]any)
	notes := fmt.Sprint(doc["summary"].(map[string]any)["notes"])
	if id["sha256"] != hex.EncodeToString(two[:]) || !strings.Contains(notes, "--allow-new-model") || !strings.Contains(notes, "nlu started over on the new model") {
		t.Fatalf("result.json: model_identity %v, notes %s", id, notes)
	}
	// A finished run is not resumed on a new model.
	os.WriteFile(weights, []byte("weights three"), 0o644)
	if _, err := env.ExecuteActivity(acts.Prepare, in); err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Fatalf("a finished run resumed on a third model: %v", err)
	}
}

// TestModelsMetaReadOnceAtPrepare: MB_MODELS_META as Prepare saw it decides
// self-judge exclusion at Judge time (on whatever worker) and is stamped as
// model_meta; a config's model.meta wins.
func TestModelsMetaReadOnceAtPrepare(t *testing.T) {
	url := judgeServer(t, `{"explanation": "fine", "rating": 7}`)
	cfg := mtConfig(t, url, "", "")
	cfg = strings.Replace(cfg, "family: other", "family: fam", 1)
	env, acts, _ := newActEnv()
	t.Setenv("MB_MODELS_META", `{"m": {"family": "fam", "model_class": "instruct", "params": "1B"}}`)
	ref := prepareRun(t, env, acts, "meta", cfg)
	os.Unsetenv("MB_MODELS_META") // another worker, another environment
	for s := 0; s < 1; s++ {
		if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "mt", Shard: s}); err != nil {
			t.Fatal(err)
		}
	}
	v, err := env.ExecuteActivity(acts.Judge, ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: "mt"}, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	var n StageNote
	v.Get(&n)
	if !strings.Contains(n.Note, "rated by k") || !strings.Contains(n.Note, "self-judge excluded (same family as the model): j") {
		t.Errorf("judge note %q", n.Note)
	}
	if _, err := env.ExecuteActivity(acts.Aggregate, AggregateInput{RunRef: ref, Plan: Plan{ModelID: "m"}}); err != nil {
		t.Fatal(err)
	}
	if meta := fmt.Sprint(resultJSON(t, ref)["model_meta"]); meta != "map[family:fam model_class:instruct params:1B]" {
		t.Errorf("model_meta %s", meta)
	}

	t.Setenv("MB_MODELS_META", `{"m": {"family": "fam"}}`)
	env, acts, _ = newActEnv()
	ref = prepareRun(t, env, acts, "meta2", strings.Replace(cfg, "id: m}", "id: m, meta: {family: own, model_class: base}}", 1))
	if _, err := env.ExecuteActivity(acts.Aggregate, AggregateInput{RunRef: ref, Plan: Plan{ModelID: "m"}}); err != nil {
		t.Fatal(err)
	}
	if meta := fmt.Sprint(resultJSON(t, ref)["model_meta"]); meta != "map[family:own model_class:base]" {
		t.Errorf("config meta does not win: %s", meta)
	}
}

// TestRegisterUnstatedInProfile: an axis whose data labels no register says
// so in its measurement profile instead of printing nothing.
func TestRegisterUnstatedInProfile(t *testing.T) {
	env, acts, _ := newActEnv()
	ref := prepareRun(t, env, acts, "reg", testConfig(t, t.TempDir(), ""))
	one := 0.5
	in := AggregateInput{RunRef: ref, Plan: Plan{ModelID: "m"}, Outcomes: []AxisOutcome{
		{Weight: 1, Tier: "public", Result: scorers.AxisResult{Axis: "knowledge", Score: &one, N: 1}},
		{Weight: 1, Tier: "public", Result: scorers.AxisResult{Axis: "nlu", Score: &one, N: 1, Secondary: map[string]any{"register_mix": map[string]float64{"HIGH": 1}}}},
	}}
	if _, err := env.ExecuteActivity(acts.Aggregate, in); err != nil {
		t.Fatal(err)
	}
	axes := resultJSON(t, ref)["axes"].(map[string]any)
	profile := func(axis string) map[string]any {
		return axes[axis].(map[string]any)["measurement_profile"].(map[string]any)
	}
	if r := profile("knowledge")["register"]; r != "unstated" {
		t.Errorf("knowledge register %v, want unstated", r)
	}
	if r := profile("nlu")["register"]; r != "HIGH" {
		t.Errorf("nlu register %v, want HIGH", r)
	}
}

// TestJudgeStopsInsideAChunkAtTheDeadline: a judge slower than the time
// left does not hold the stage past its deadline: the in-flight requests
// are cut, what every judge rated is checkpointed and kept, the stage ends
// without error and its note counts rated and unrated responses.
func TestJudgeStopsInsideAChunkAtTheDeadline(t *testing.T) {
	// Item 81 (Hawaii) is rated at once; every other rating request hangs
	// until the judge gives up on it. The client's flavour probe (GET /props,
	// GET /v1/models) is answered as a server without them answers it, 404,
	// so that it is the ratings that hang, not the probe every one waits for.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), "Hawaii") {
			<-r.Context().Done()
			return
		}
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, `{"explanation": "fine", "rating": 7}`)
	}))
	t.Cleanup(srv.Close)
	env, acts, _ := newActEnv()
	// The test environment gives an activity 10 minutes; stop 3 s into them.
	acts.JudgeWrapUp = 10*time.Minute - 3*time.Second
	began := time.Now()
	r := runAxisStages(t, env, acts, "slow", mtConfig(t, srv.URL, "", ""), "mt")
	if took := time.Since(began); took > time.Minute {
		t.Errorf("judging took %v past its deadline", took)
	}
	// Three questions of two turns: item 81's two turns rated, four unrated.
	if want := "judging stopped at the deadline: 2 responses rated by j, k and kept, 4 unrated"; !strings.Contains(r.judgeNote, want) {
		t.Errorf("judge note %q, want %q", r.judgeNote, want)
	}
	if r.out.Result.Score == nil {
		t.Errorf("no score from the kept ratings: %+v", r.out.Result)
	}
}

// TestJudgeNoteCountsEarlierAttempts: a Judge attempt that resumes after
// an earlier one (a retry after a lost heartbeat) rates only what is left,
// but its note is the stage's: it counts the responses the earlier attempt
// rated and saved too.
func TestJudgeNoteCountsEarlierAttempts(t *testing.T) {
	url := judgeServer(t, `{"explanation": "fine", "rating": 7}`)
	env, acts, _ := newActEnv()
	r := runAxisStages(t, env, acts, "again", mtConfig(t, url, "", ""), "mt")
	if want := "judge: 6 responses rated by j, k"; !strings.HasPrefix(r.judgeNote, want) {
		t.Fatalf("first attempt's note %q, want %q", r.judgeNote, want)
	}
	v, err := env.ExecuteActivity(acts.Judge, r.in)
	if err != nil {
		t.Fatal(err)
	}
	var n StageNote
	v.Get(&n)
	if want := "judge: 6 responses rated by j, k (6 by an earlier attempt)"; !strings.HasPrefix(n.Note, want) {
		t.Errorf("second attempt's note %q, want %q", n.Note, want)
	}
}
