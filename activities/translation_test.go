package activities

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

// A dataset declared translation_of another gets the paired
// translated-minus-original difference in its axis result, computed from the
// same per-item scores the axis publishes.
func TestScorePublishesTranslationDelta(t *testing.T) {
	env, acts, _ := newActEnv()
	data, _ := filepath.Abs("../testdata/data")
	cfg := fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: 100, bootstrap_resamples: 500}
axes:
  nlu:
    scoring_mode: generate
    datasets:
      - {name: belebele_en, path: %s/belebele_ms_en/en_belebele.jsonl, format: belebele, lang: en, limit: 30}
      - {name: belebele_ms, path: %s/belebele_ms_en/ms_belebele.jsonl, format: belebele, lang: ms, limit: 30, translation_of: belebele_en}
`, t.TempDir(), data, data)
	ref, out := scoreOneShard(t, env, acts, "tr", cfg, "nlu")
	if len(out.Result.TranslationDelta) != 1 {
		t.Fatalf("translation_delta %+v, notes %v", out.Result.TranslationDelta, out.Result.Notes)
	}
	d := out.Result.TranslationDelta[0]
	var en, ms float64
	st, _ := acts.store(t.Context(), ref.StoreURI)
	rows, _ := st.Get(t.Context(), runfiles.ScoresKey("tr", "nlu"))
	for _, line := range strings.Split(strings.TrimSpace(string(rows)), "\n") {
		var it scorers.ItemScore
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(it.ItemID, "belebele_en/") {
			en += it.Score
		} else {
			ms += it.Score
		}
	}
	// The test backend always answers A, and Belebele en/ms share their
	// gold letters row for row: a translation that moves nothing.
	if d.Original != "belebele_en" || d.Translated != "belebele_ms" || d.Pairs != 30 || d.Unpaired != 0 {
		t.Fatalf("delta %+v", d)
	}
	if math.Abs(d.ScoreOrig-en/30) > 1e-12 || math.Abs(d.ScoreTrans-ms/30) > 1e-12 || d.Delta != d.ScoreTrans-d.ScoreOrig || d.CI95[0] > d.Delta || d.CI95[1] < d.Delta {
		t.Fatalf("delta %+v against scores en %v ms %v", d, en/30, ms/30)
	}
	if en == 0 {
		t.Fatal("no English item right: the test says nothing")
	}
}
