package concord

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// peerData is where the inputs package keeps other tools' published
// results (each folder's SOURCE.txt names the repository and commit).
var peerData = filepath.Join("..", "inputs", "testdata")

// TestPublishedLMEvalPerplexityRanksLowFirst correlates, through the
// reader correlate uses, two columns of lm-eval 0.4's own output for five
// mamba2 models: lambada_openai accuracy against its perplexity. Both
// order the models by size (perplexity 16.83 ... 4.10, accuracy 0.439 ...
// 0.696); read in the direction the file's higher_is_better gives
// (perplexity: false), that is full agreement, ρ = τ = 1. Ranked as if a
// higher perplexity were better it read ρ = -1, "divergent".
func TestPublishedLMEvalPerplexityRanksLowFirst(t *testing.T) {
	dir := filepath.Join(peerData, "lmeval-v04")
	acc, err := ReadExternalInstrument(dir, Peer{Task: "lambada_openai"})
	if err != nil {
		t.Fatal(err)
	}
	ppl, err := ReadExternalInstrument(dir, Peer{Task: "lambada_openai", Metric: "perplexity"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Correlate(acc, ppl)
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 5 || math.Abs(rep.Spearman-1) > 1e-12 || math.Abs(rep.Kendall-1) > 1e-12 || rep.Verdict != "converged" {
		t.Errorf("n %d ρ %v τ %v verdict %s; want 5 models, 1, 1, converged", rep.N, rep.Spearman, rep.Kendall, rep.Verdict)
	}
	if rep.ExternalDirection != "lower is better" || rep.OursDirection != "higher is better" {
		t.Errorf("directions %q / %q", rep.OursDirection, rep.ExternalDirection)
	}
	if r := rep.Models[0]; r.ModelID != "state-spaces/mamba2-2.7b" || r.External != 4.097492285251355 || r.RankExternal != 1 {
		t.Errorf("first row %+v: want mamba2-2.7b, perplexity 4.097, external rank 1", r)
	}
	var b strings.Builder
	rep.Print(&b)
	if !strings.Contains(b.String(), "rank direction: ours higher is better, external lower is better") {
		t.Errorf("printout lacks the rank direction:\n%s", b.String())
	}
}

// TestPublishedHELMInferenceTimeRanksLowFirst correlates, through the
// reader correlate uses, two columns of one published HELM table: the
// observed inference time (lower_is_better) against HELM's own mean win
// rate over that table, which HELM computed from those times. Read in
// their directions they agree fully (ρ = τ = 1); ranked the same way
// they would read ρ = -1.
func TestPublishedHELMInferenceTimeRanksLowFirst(t *testing.T) {
	p := filepath.Join(peerData, "helm-mmlu-llama3", "targeted_evaluations.json")
	winRate, err := ReadExternalInstrument(p, Peer{Task: "Efficiency (Detailed)"})
	if err != nil {
		t.Fatal(err)
	}
	secs, err := ReadExternalInstrument(p, Peer{Task: "Efficiency (Detailed)", Metric: "MMLU - Observed inference time (s)"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Correlate(winRate, secs)
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 5 || math.Abs(rep.Spearman-1) > 1e-12 || math.Abs(rep.Kendall-1) > 1e-12 || rep.Verdict != "converged" || rep.ExternalDirection != "lower is better" {
		t.Errorf("n %d ρ %v τ %v verdict %s external %q; want 5, 1, 1, converged, lower is better", rep.N, rep.Spearman, rep.Kendall, rep.Verdict, rep.ExternalDirection)
	}
	if r := rep.Models[0]; r.ModelID != "Together AI Llama 3 (8B)" || r.RankExternal != 1 {
		t.Errorf("first row %+v", r)
	}
}

// TestPublishedSEAHELMUndatedFolder reads a folder of SEA-HELM results
// files of the undated name through correlate's reader (recognised as
// SEA-HELM, the model from each file name): Indonesian against Malay
// knowledge over four models, which both order E4B < gpt-oss-20b < 26B <
// 31B (59.77 ... 78.77; 53.52 ... 77.33): ρ = 1.
func TestPublishedSEAHELMUndatedFolder(t *testing.T) {
	dir := filepath.Join(peerData, "seahelm-gemma4")
	id, err := ReadExternalInstrument(dir, Peer{Task: "id.knowledge.total"})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ReadExternalInstrument(dir, Peer{Task: "ms.knowledge.total"})
	if err != nil {
		t.Fatal(err)
	}
	if id.Name != "seahelm id.knowledge.total" {
		t.Errorf("read as %q", id.Name)
	}
	rep, err := Correlate(id, ms)
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != 4 || math.Abs(rep.Spearman-1) > 1e-12 || rep.Models[0].ModelID != "gemma-4-31B-it" || rep.Models[0].Ours != 78.77348484848484 {
		t.Errorf("n %d ρ %v first %+v", rep.N, rep.Spearman, rep.Models[0])
	}
	// The default, the overall total, counts 74 failed tasks as 0.
	if _, err := ReadExternalInstrument(dir, Peer{}); err == nil || !strings.Contains(err.Error(), "field total: 74 tasks under it failed in this run") {
		t.Errorf("overall total: %v", err)
	}
}
