package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// TestCommandsOnEveryArchitecture runs loglik, generate and run on a
// Llama 3, a Qwen 2, a Gemma 3 and a Phi-3 GGUF alike: random one-layer
// models with their families' own vocabularies, written by the gguf
// package's TestWriteArchModels (llama.cpp's ggml-vocab files, from the
// npm package .ci unpacks).
func TestCommandsOnEveryArchitecture(t *testing.T) {
	if testing.Short() {
		t.Skip("writes four models and runs an evaluation on each")
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestWriteArchModels$", "-v", "../../backends/gguf/")
	cmd.Env = append(os.Environ(), "GLOSSOBENCH_WRITE_ARCH_MODELS="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("writing the models: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("no models written:\n%s", out)
	}
	data, _ := filepath.Abs("../../testdata/data/global_mmlu_ms/global_mmlu_ms_test_subset.jsonl.gz")
	srv := testCluster(t)
	for _, name := range []string{"llama-llama-bpe", "qwen2-qwen2", "gemma3-gemma-4", "phi3-phi-3"} {
		model := "gguf:" + filepath.Join(dir, name+".gguf")
		t.Run(name, func(t *testing.T) {
			got, code := captureStdout(t, func() int {
				return runLoglik([]string{"--model", model, "--json", "--context", "Soalan: Apakah ibu negara Malaysia?\nJawapan:", "--continuation", " Kuala Lumpur"})
			})
			var ll struct {
				LogProb       float64   `json:"logprob"`
				TokenLogProbs []float64 `json:"token_logprobs"`
			}
			if err := json.Unmarshal([]byte(got), &ll); code != 0 || err != nil || len(ll.TokenLogProbs) == 0 || !(ll.LogProb < 0) || math.IsInf(ll.LogProb, 0) {
				t.Errorf("loglik: exit %d, %v, output %q", code, err, got)
			}
			if _, code := captureStdout(t, func() int {
				return runGenerate([]string{"--model", model, "--prompt", "Soalan: Apakah ibu negara Malaysia?\nJawapan:", "--max-tokens", "4"})
			}); code != 0 {
				t.Errorf("generate: exit %d", code)
			}
			cfg := "model:\n  spec: " + model + "\n  id: " + name + "\n  chat_format: qa\n" +
				"run:\n  max_wall_seconds: 600\n  shard_size: 10\n  bootstrap_resamples: 100\n  seed: 1\n" +
				"axes:\n  knowledge:\n    scoring_mode: both\n    datasets:\n      - name: global_mmlu_ms\n        path: " + data +
				"\n        format: global_mmlu\n        lang: ms\n        limit: 10\n        license: Apache-2.0\n" +
				"store:\n  uri: " + t.TempDir() + "\n"
			outDir := t.TempDir()
			code, log := runWithWorker(t, srv, "--config", writeTemp(t, "run.yaml", cfg), "--run-id", "arch-"+name, "--out", outDir)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, log)
			}
			var res runfiles.Result
			if err := runfiles.DecodeJSON("result.json", []byte(readFile(t, filepath.Join(outDir, "result.json"))), &res); err != nil || res.Axes["knowledge"].Score == nil {
				t.Errorf("run: result.json %v, knowledge %+v", err, res.Axes["knowledge"].AxisResult)
			}
		})
	}
}
