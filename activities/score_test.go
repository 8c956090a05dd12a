package activities

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"go.temporal.io/sdk/temporal"
)

// Scoring streams an axis shard by shard: the same axis cut into shards of 4
// items and into one shard gives the same axis result (score, CI, notes,
// registers, translation delta) and the same stored item scores.
func TestScoreIsTheSameShardedOrWhole(t *testing.T) {
	data, _ := filepath.Abs("../testdata/data")
	cfg := func(shardSize int) string {
		return fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
run: {shard_size: %d, checkpoint_every: 3, bootstrap_resamples: 300}
axes:
  nlu:
    scoring_mode: both
    datasets:
      - {name: en, path: %s/belebele_ms_en/en_belebele.jsonl, format: belebele, lang: en, limit: 21, register: HIGH}
      - {name: ms, path: %s/belebele_ms_en/ms_belebele.jsonl, format: belebele, lang: ms, limit: 21, translation_of: en}
      - {name: i, path: %s/nli_indonli/id_indonli_lay_1000sample.jsonl, format: indonli, limit: 9, register: LOW}
`, t.TempDir(), shardSize, data, data, data)
	}
	run := func(shardSize int) (outcome, scores []byte, shards int) {
		env, acts, _ := newActEnv()
		ref := prepareRun(t, env, acts, "s", cfg(shardSize))
		st, err := acts.store(t.Context(), ref.StoreURI)
		if err != nil {
			t.Fatal(err)
		}
		var dd DedupResult
		if err := getJSON(t.Context(), st, runfiles.DedupKey("s"), &dd); err != nil {
			t.Fatal(err)
		}
		shards = len(dd.Axes[0].Shards)
		for s := range shards {
			if _, err := env.ExecuteActivity(acts.Infer, ShardInput{RunRef: ref, Axis: "nlu", Shard: s}); err != nil {
				t.Fatal(err)
			}
		}
		v, err := env.ExecuteActivity(acts.Score, ScoreInput{AxisInput: AxisInput{RunRef: ref, Axis: "nlu"}, Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		var out AxisOutcome
		v.Get(&out)
		if out.Usage != nil {
			// Wall time, not a score: an item descheduled for a
			// millisecond on a loaded machine adds one.
			out.Usage.LatencyMS = 0
		}
		if outcome, err = json.Marshal(out); err != nil {
			t.Fatal(err)
		}
		if scores, err = st.Get(t.Context(), runfiles.ScoresKey("s", "nlu")); err != nil {
			t.Fatal(err)
		}
		return outcome, scores, shards
	}
	wholeOut, wholeScores, one := run(1000)
	shardOut, shardScores, many := run(4)
	if one != 1 || many != 13 {
		t.Fatalf("%d and %d shards, want 1 and 13", one, many)
	}
	var whole AxisOutcome
	json.Unmarshal(wholeOut, &whole)
	r := whole.Result
	if r.N != 51 || r.CI95 == nil || len(r.TranslationDelta) != 1 || r.TranslationDelta[0].Pairs != 21 || r.Secondary["register_mix"] == nil {
		t.Fatalf("the whole-axis result lacks what this test compares: %s", wholeOut)
	}
	if !bytes.Equal(wholeOut, shardOut) {
		t.Errorf("axis result differs:\nwhole   %s\nsharded %s", wholeOut, shardOut)
	}
	if !bytes.Equal(wholeScores, shardScores) || bytes.Count(wholeScores, []byte("\n")) != 51 {
		t.Errorf("item scores differ (%d and %d bytes)", len(wholeScores), len(shardScores))
	}
}

// A malformed row deep in a streamed dataset fails Prepare with a
// non-retryable error naming the file and line, and leaves no items object
// behind: a half-spooled axis is never stored.
func TestPrepareRefusesABadRowMidStream(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.jsonl")
	var rows bytes.Buffer
	for i := range 30 {
		fmt.Fprintf(&rows, `{"question": "q%d", "A": "a", "B": "b", "C": "c", "D": "d", "answer": "A"}`+"\n", i)
	}
	rows.WriteString(`{"question": "q", "A": "a", "B": "b", "answer": "A"}` + "\n")
	if err := os.WriteFile(p, rows.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	storeDir := t.TempDir()
	cfg := fmt.Sprintf(`model: {spec: "openai:http://127.0.0.1:1", id: m}
store: {uri: %s}
axes:
  knowledge:
    datasets: [{name: d, path: %s, format: global_mmlu}]
`, storeDir, p)
	env, acts, _ := newActEnv()
	_, err := env.ExecuteActivity(acts.Prepare, PrepareInput{RunID: "bad", ConfigYAML: cfg})
	var app *temporal.ApplicationError
	if err == nil || !strings.Contains(err.Error(), p+":31") || !strings.Contains(err.Error(), "axes.knowledge") ||
		!errors.As(err, &app) || !app.NonRetryable() {
		t.Fatalf("err = %v; want a non-retryable error naming axes.knowledge and %s:31", err, p)
	}
	st, _ := acts.store(t.Context(), storeDir)
	if ok, err := st.Exists(t.Context(), runfiles.ItemsKey("bad", "knowledge")); ok || err != nil {
		t.Fatalf("items object stored after a failed Prepare: %v, %v", ok, err)
	}
}
