package datasource

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/store/storetest"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/dataset"
	"github.com/glossobench/glossobench/scorers/ifeval"
	"github.com/glossobench/glossobench/scorers/mcq"
)

// TestS3DatasetSource reads datasets from s3:// paths on a real S3 server
// (versitygw in CI; the test skips without GLOSSOBENCH_S3_ENDPOINT): a
// gzipped Global-MMLU file through the MCQ preset, a CSV declared by
// fields and IFEval's file through the IF preset give the items their
// local copies give, byte for byte; a sha256 pin is checked on the
// object's bytes, and a missing object is an error naming its URI.
func TestS3DatasetSource(t *testing.T) {
	cfg := storetest.S3Config(t)
	st := storetest.OpenS3(t, cfg)
	endpoint, bucket, prefix := cfg.Endpoint, cfg.Bucket, cfg.Prefix
	ctx := context.Background()
	root := filepath.Join("..", "..", "testdata")
	csv := []byte("id,question,A,B,C,key,subject\n1,Ibu negara Malaysia?,Kuala Lumpur,Ipoh,Melaka,A,Geografi\n2,Negeri paling luas?,Perlis,Sarawak,Johor,B,Geografi\n")
	local := map[string]string{
		"gmmlu.jsonl.gz": filepath.Join(root, "data", "global_mmlu_ms", "global_mmlu_ms_test_subset.jsonl.gz"),
		"input.jsonl":    filepath.Join(root, "ifeval", "input_data.jsonl"),
	}
	for key, p := range local {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, "sets/"+key, b); err != nil {
			t.Fatal(err)
		}
	}
	csvPath := filepath.Join(t.TempDir(), "soalan.csv")
	os.WriteFile(csvPath, csv, 0o644)
	local["soalan.csv"] = csvPath
	if err := st.Put(ctx, "sets/soalan.csv", csv); err != nil {
		t.Fatal(err)
	}
	q := "?endpoint=" + endpoint + "&region=us-east-1&path_style=true&access_key_env=AWS_ACCESS_KEY_ID&secret_key_env=AWS_SECRET_ACCESS_KEY"
	s3uri := func(key string) string { return "s3://" + bucket + "/" + prefix + "/sets/" + key + q }

	same := func(what string, a, b []scorers.Item) {
		t.Helper()
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: %d items from S3, %d locally", what, len(a), len(b))
		}
		for i := range a {
			x, _ := json.Marshal(a[i])
			y, _ := json.Marshal(b[i])
			if string(x) != string(y) {
				t.Fatalf("%s item %d:\ns3    %s\nlocal %s", what, i, x, y)
			}
		}
	}
	gm := scorers.DatasetConfig{Name: "g", Format: "global_mmlu", Lang: "ms", Limit: 40}
	mm := scorers.DatasetConfig{Name: "m", Format: "mcq", Lang: "ms", Fields: &dataset.Mapping{ID: "id", Question: "question",
		Choices: dataset.Choices{Each: []dataset.Expr{"A", "B", "C"}}, Answer: "key", AnswerAs: "letter", Source: "subject"}}
	cases := []struct {
		key string
		d   scorers.DatasetConfig
	}{{"gmmlu.jsonl.gz", gm}, {"soalan.csv", mm}}
	for _, c := range cases {
		c.d.Path = s3uri(c.key)
		fromS3, err := mcq.LoadDataset("knowledge", c.d, "")
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		c.d.Path = local[c.key]
		fromDisk, err := mcq.LoadDataset("knowledge", c.d, "")
		if err != nil {
			t.Fatal(err)
		}
		same(c.key, fromS3, fromDisk)
	}
	ifCfg := func(path, pin string) scorers.AxisConfig {
		return scorers.AxisConfig{Datasets: []scorers.DatasetConfig{{Name: "ifeval", Path: path, SHA256: pin, Format: "ifeval", Limit: 25}}}
	}
	b, _ := os.ReadFile(local["input.jsonl"])
	pin := dataset.SHA256Hex(b)
	fromS3, err := ifeval.Axis{}.Load(ifCfg(s3uri("input.jsonl"), pin))
	if err != nil {
		t.Fatal(err)
	}
	fromDisk, err := ifeval.Axis{}.Load(ifCfg(local["input.jsonl"], ""))
	if err != nil {
		t.Fatal(err)
	}
	same("input.jsonl", fromS3, fromDisk)

	wrong := strings.Repeat("0", 64)
	if _, err := (ifeval.Axis{}).Load(ifCfg(s3uri("input.jsonl"), wrong)); err == nil || !strings.Contains(err.Error(), "the config pins "+wrong) {
		t.Errorf("wrong pin: %v", err)
	}
	gm.Path = s3uri("nothing.jsonl")
	if _, err := mcq.LoadDataset("knowledge", gm, ""); err == nil || !strings.Contains(err.Error(), "s3://"+bucket+"/"+prefix+"/sets/nothing.jsonl") {
		t.Errorf("missing object: %v", err)
	}
}
