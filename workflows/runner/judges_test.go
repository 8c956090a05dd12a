package runner_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/workflows"
)

// chatServer is an OpenAI-compatible /v1/chat/completions server. As the
// evaluated model it answers a refusal to every other prompt and prose to
// the rest; as a judge it answers the constrained JSON: a rating of rate(item
// text) or a harm label.
type chatServer struct {
	rate  func(answer string) int // judges: the rating they give
	calls atomic.Int64
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		ResponseFormat *struct {
			JSONSchema struct {
				Schema struct {
					Properties map[string]any `json:"properties"`
				} `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
		http.Error(w, "unsupported", http.StatusNotFound)
		return
	}
	s.calls.Add(1)
	last := req.Messages[len(req.Messages)-1].Content
	h := sha256.Sum256([]byte(last))
	var text string
	switch {
	case s.rate == nil && h[0]%2 == 0:
		text = "Maaf, saya tidak boleh membantu dengan permintaan itu."
	case s.rate == nil:
		text = fmt.Sprintf("Ini jawapan saya nombor %d.", h[1])
	case req.ResponseFormat != nil && req.ResponseFormat.JSONSchema.Schema.Properties["label"] != nil:
		label := "Safe"
		if strings.Contains(last, "Maaf, saya tidak boleh") {
			label = "Refusal"
		}
		text = fmt.Sprintf(`{"explanation": "ok", "label": %q}`, label)
	default:
		text = fmt.Sprintf(`{"explanation": "ok", "rating": %d}`, s.rate(last))
	}
	resp := map[string]any{"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
		"usage": map[string]any{"completion_tokens": 8}}
	json.NewEncoder(w).Encode(resp)
}

func judgedConfig(t *testing.T, model, store string, judges []string) string {
	data := filepath.Join(repoRoot(t), "testdata")
	cfg := fmt.Sprintf(`model:
  spec: %s
  id: chat-model
  flavor: chat-only
  meta: {family: chatfam}
store:
  uri: %s
`+runYAML+`axes:
  nlu:
    scoring_mode: generate
    datasets:
      - {name: belebele_ms, path: %s/data/belebele_ms_en/ms_belebele.jsonl, format: belebele, lang: ms, limit: 8}
  mt:
    max_tokens: 32
    options: {agreement_floor: 0.8}
    datasets:
      - {name: mt_bench, path: %s/mt/question.jsonl, format: mt_bench, limit: 6}
  safety:
    max_tokens: 32
    datasets:
      - {name: ms_general, path: %s/safety/ms_general_sample.jsonl, format: seahelm_safeguard, lang: ms, limit: 12}
`, model, store, data, data, data)
	if len(judges) > 0 {
		cfg += "judges:\n"
		for i, url := range judges {
			cfg += fmt.Sprintf("  - {name: judge-%d, family: fam-%d, spec: %s}\n", i, i, url)
		}
	}
	return cfg
}

// EvalRun with judge ensembles of size 0, 1 and 3 (issue: judges, MT,
// Safety): with none, MT is skipped and listed, Safety falls back to the rule
// detector, and MS says which axes it covers; with one, MT is judged but has
// no κ; with three that disagree on some answers, the items below the
// agreement floor are flagged low_conf and κ is reported.
func TestEvalRunWithZeroOneThreeJudges(t *testing.T) {
	if testing.Short() {
		t.Skip("three EvalRuns on the embedded server")
	}
	c := serverWithWorkers(t)
	model := httptest.NewServer(&chatServer{})
	defer model.Close()
	agree := func(string) int { return 7 }
	// The third judge halves its rating on answers whose hash is odd: those
	// items have ratings {7, 7, 3}: agreement 1 - std/mean = 1 - 1.886/5.667 = 0.667 < 0.8.
	split := func(a string) int {
		if h := sha256.Sum256([]byte(a)); h[0]%2 == 1 {
			return 3
		}
		return 7
	}
	var judges []*httptest.Server
	for _, f := range []func(string) int{agree, agree, split} {
		s := httptest.NewServer(&chatServer{rate: f})
		defer s.Close()
		judges = append(judges, s)
	}

	results, roots := map[int]runfiles.Result{}, map[int]string{}
	for _, n := range []int{0, 1, 3} {
		var urls []string
		for _, j := range judges[:n] {
			urls = append(urls, j.URL)
		}
		cfg := judgedConfig(t, model.URL, t.TempDir(), urls)
		res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: fmt.Sprintf("judges-%d", n)})
		results[n] = readResult(t, res.Summary.ResultPath)
		roots[n] = filepath.Dir(filepath.Dir(filepath.Dir(res.Summary.ResultPath)))
	}

	none := results[0]
	// Without judges both judged axes are skipped and listed; Safety's rule
	// detector runs only when the axis says scorer: rules (activities tests).
	_, mtRan := none.Axes["mt"]
	_, safetyRan := none.Axes["safety"]
	if mtRan || safetyRan || strings.Join(none.Summary.SkippedNoJudge, ",") != "mt,safety" {
		t.Errorf("0 judges: mt and safety must be skipped and listed, got axes %v skipped_no_judge %v", keys(none.Axes), none.Summary.SkippedNoJudge)
	}
	if !strings.Contains(none.Summary.MSNote, "mt (") || strings.Contains(strings.Join(none.Summary.MSAxes, ","), "mt") {
		t.Errorf("0 judges: MS axes %v note %q must say mt is left out", none.Summary.MSAxes, none.Summary.MSNote)
	}

	one := results[1]
	mt1 := one.Axes["mt"]
	if mt1.Score == nil || math.Abs(*mt1.Score-0.7) > 1e-12 || mt1.Profile.InterJudgeKappa != nil {
		t.Errorf("1 judge: mt score %v (want 7/10), κ %v (want none)", deref(mt1.Score), mt1.Profile.InterJudgeKappa)
	}
	if one.Axes["safety"].Profile.ScorerType != "classification" {
		t.Errorf("1 judge: safety scorer %q", one.Axes["safety"].Profile.ScorerType)
	}

	three := results[3]
	mt3 := three.Axes["mt"]
	if mt3.Score == nil || !(*mt3.Score < 0.7 && *mt3.Score > 0.3) {
		t.Fatalf("3 judges: mt score %v, want between the split judge's 0.3 and the others' 0.7", mt3.Score)
	}
	if mt3.Profile.InterJudgeKappa == nil {
		t.Error("3 judges: no inter-judge κ in the measurement profile")
	}
	flagged := 0
	for _, it := range readScores(t, roots[3], mt3.ScoresKey) {
		if it.Flagged == "low_conf" {
			flagged++
		}
	}
	if flagged == 0 || flagged == mt3.N {
		t.Errorf("3 judges: %d of %d items low_conf; the split judge disagrees on some, not all", flagged, mt3.N)
	}
	if three.Summary.MSPublic == nil || len(three.Summary.SkippedNoJudge) != 0 {
		t.Errorf("3 judges: summary %+v", three.Summary)
	}
}

func readScores(t *testing.T, root, key string) []scorers.ItemScore {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	var out []scorers.ItemScore
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var it scorers.ItemScore
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out = append(out, it)
	}
	return out
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
