package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/datasource/hubtest"
)

// TestFetchDatasetSet: fetch-dataset --config --split prints the set's
// pin (computed here from its definition) for a Hub dataset's split, and
// import-task --data with the task's repository writes config and split.
func TestFetchDatasetSet(t *testing.T) {
	files := map[string][]byte{"zsm_Latn/test/0000.parquet": []byte("PAR1 one"), "zsm_Latn/test/0001.parquet": []byte("PAR1 two")}
	hub := hubtest.New(t, "facebook/belebele", files)
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("GLOSSOBENCH_HF_CACHE", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "")
	uri := "hf://datasets/facebook/belebele@~parquet"
	var out, errb bytes.Buffer
	if code := fetchDatasetMain([]string{uri, "--config", "zsm_Latn", "--split", "test"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := hubtest.SetPin(files, "zsm_Latn/test") + "  " + uri + " config zsm_Latn split test (2 Parquet files)\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	out.Reset()
	errb.Reset()
	if code := fetchDatasetMain([]string{"--config", "zsm_Latn", uri}, &out, &errb); code != 2 {
		t.Errorf("--config without --split: exit %d", code)
	}
	out.Reset()
	errb.Reset()
	if code := importTaskMain([]string{"lm-eval", "../../testdata/lmeval-tasks/belebele/belebele_zsm_Latn.yaml", "--data", uri}, &out, &errb); code != 0 {
		t.Fatalf("import-task exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"path: " + uri, "config: zsm_Latn", "split: test"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("import-task wrote\n%s\nwithout %q", out.String(), w)
		}
	}
	if !strings.Contains(errb.String(), "glossobench fetch-dataset --config zsm_Latn --split test "+uri) {
		t.Errorf("import-task stderr: %s", errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := importTaskMain([]string{"lm-eval", "../../testdata/lmeval-tasks/belebele/belebele_zsm_Latn.yaml", "--data", "hf://datasets/facebook/flores@~parquet"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), `dataset_path "facebook/belebele"`) {
		t.Errorf("import-task, another repository: exit %d, %s", code, errb.String())
	}
}
