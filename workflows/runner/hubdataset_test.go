package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/glossobench/glossobench/infra/datasource"
	"github.com/glossobench/glossobench/infra/datasource/hubtest"
	"github.com/glossobench/glossobench/workflows"
)

// TestLMEvalTaskOnTheHubThroughEvalRun runs lm-eval's own
// belebele_zsm_Latn.yaml, unedited, on the Hub's Parquet files of its
// dataset (facebook/belebele, config zsm_Latn, split test, two files on a
// stand-in Hub), named in the config by repository alone and pinned as a
// set: the cache is filled once, then the Hub is stopped and the run reads
// offline.
func TestLMEvalTaskOnTheHubThroughEvalRun(t *testing.T) {
	c := serverWithInstantWorkers(t)
	dir := t.TempDir()

	type row struct { // facebook/belebele's columns
		Passage  string `parquet:"flores_passage"`
		Question string `parquet:"question"`
		A1       string `parquet:"mc_answer1"`
		A2       string `parquet:"mc_answer2"`
		A3       string `parquet:"mc_answer3"`
		A4       string `parquet:"mc_answer4"`
		Correct  string `parquet:"correct_answer_num"`
	}
	shard := func(rows ...row) []byte {
		var b bytes.Buffer
		if err := parquet.Write(&b, rows); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	files := map[string][]byte{
		"zsm_Latn/test/0000.parquet": shard(
			row{"Ali pergi ke pasar.", "Ke mana Ali pergi?", "sekolah", "pasar", "rumah", "masjid", "2"},
			row{"Hari hujan.", "Bagaimana cuaca?", "panas", "berangin", "bersalji", "hujan", "4"}),
		"zsm_Latn/test/0001.parquet": shard(
			row{"Siti membaca buku.", "Apa yang Siti baca?", "buku", "surat", "majalah", "akhbar", "1"}),
		"ind_Latn/test/0000.parquet": shard(row{"x", "y", "a", "b", "c", "d", "1"}),
	}
	hub := hubtest.New(t, "facebook/belebele", files)
	pin := hubtest.SetPin(files, "zsm_Latn/test")
	cache := filepath.Join(dir, "hf-cache")
	uri := "hf://datasets/facebook/belebele@~parquet"
	// What glossobench fetch-dataset --config zsm_Latn --split test does.
	if _, sum, err := (&datasource.HF{Endpoint: hub.URL, Cache: cache}).FetchSet(context.Background(), uri, "zsm_Latn", "test", ""); err != nil || sum != pin {
		t.Fatalf("fetch: %s, %v (want %s)", sum, err, pin)
	}
	hub.Close()
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("GLOSSOBENCH_HF_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")

	task := filepath.Join(repoRoot(t), "testdata", "lmeval-tasks", "belebele", "belebele_zsm_Latn.yaml")
	cfg := fmt.Sprintf(`model: {spec: "openai:http://instant", id: instant}
store: {uri: %s}
run: {shard_size: 5, bootstrap_resamples: 50}
axes:
  nlu:
    scoring_mode: generate
    datasets:
      - path: %s
        sha256: %s
        format: lm-eval-task
        lm_eval_task: %s
`, filepath.Join(dir, "store"), uri, pin, task)
	res := runEval(t, c, workflows.EvalRunInput{Config: cfg, RunID: "hubtask"})
	r := readResult(t, res.Summary.ResultPath)
	if ax := r.Axes["nlu"]; ax.N != 3 || ax.Score == nil {
		t.Fatalf("nlu: n %d (want 3: both files of the split), score %v", ax.N, ax.Score)
	}
	items, err := os.ReadFile(filepath.Join(dir, "store", "runs", "hubtask", "nlu", "items.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"id":"belebele_zsm_Latn/3"`, `P: Siti membaca buku.\nQ: Apa yang Siti baca?\nA: buku`, `"id":"belebele_zsm_Latn/2"`} {
		if !bytes.Contains(items, []byte(want)) {
			t.Errorf("items.jsonl lacks %s", want)
		}
	}
	if bytes.Contains(items, []byte(`"x"`)) || strings.Count(string(items), "\n") != 3 {
		t.Errorf("items.jsonl holds other than the split's 3 rows:\n%s", items)
	}
}
