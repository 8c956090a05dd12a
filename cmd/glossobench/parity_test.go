package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/internal/llamatest"
	"github.com/glossobench/glossobench/scorers"
)

// TestQuickStartBackendParity runs the quick start on the tiny GGUF twice,
// through the embedded backend and through llama-server (the same config
// with only model.spec changed), and requires the same n and the same
// headline on every axis: one model file, any backend, the same numbers
// (DESIGN.md; issue 26 item 3). The tiny model is F32 and decodes greedily,
// where llama-server computes the embedded backend's logits bit for bit, so
// the scores must be equal, not close.
//
// It uses the llama-server at GLOSSOBENCH_LLAMA_SERVER_URL (CI's, which
// other test packages use at the same time), or starts one from
// GLOSSOBENCH_LLAMA_SERVER_BIN (as TestArchQuantMatchesLlamaServer does).
// The embedded model gets the server's window (?ctx= its n_ctx), so both
// fit prompts to the same number of tokens.
//
// Compared per axis: n, headline, truncation_rate, by_scoring; and MS,
// the ranking mean and the warnings. An item one run did not score fails
// the test with its reason (its recorded error, or that it has none) read
// from the run's store, and a note saying an axis stopped early, failed or
// was skipped fails it too; the stores of a failed test are kept and named.
//
// Fields that may legitimately differ, and why:
//   - run_id, config_hash, model_identity, store, axes.*.scores_key and the
//     store keys in axes.*.measurement_profile.leakage: they name the run,
//     the spec and where its files are, which differ by design;
//   - wall-clock matters (how long each stage took; a stop at the budget):
//     the llama-server run is several times slower (one slot, no prompt
//     cache), so the test raises max_wall_seconds until no axis stops;
//   - log-likelihoods: llama-server takes its softmax in float32, this
//     backend in float64 (about 1e-6 nats apart), so a cloze choice decided
//     by less than that could flip; mcq marks such items low-margin. None
//     does on the quick start, and the test would show it as a score;
//   - a cloze request that reaches the window: llama-server refuses a
//     prompt that fills n_ctx and stops forcing tokens once it is full, so
//     it is fitted to n_ctx-1 and reads one context token fewer (cut from
//     the left) than the embedded backend, which reads the whole window;
//     its log-likelihood differs slightly, the same items are scored, and
//     no choice flips on the quick start (a flip would show in the score);
//   - nothing of the judges: the judge is the embedded tiny model in both
//     runs (only model.spec changes), so MT and Safety compare the model's
//     answers under the same judge, and must match like the rest.
func TestQuickStartBackendParity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole quick start twice")
	}
	abs, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(abs, "models/tiny-llama/tiny-llama.gguf")
	url := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_URL")
	if url == "" {
		bin := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_BIN")
		if bin == "" {
			t.Skip("GLOSSOBENCH_LLAMA_SERVER_URL and GLOSSOBENCH_LLAMA_SERVER_BIN unset")
		}
		url = startTinyServer(t, bin, model)
	}
	nCtx := serverWindow(t, url)
	srv := testCluster(t)
	src, err := os.ReadFile("../../testdata/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := strings.ReplaceAll(string(src), "path: ", "path: "+abs+"/")
	base = strings.ReplaceAll(base, "gguf:models/", "gguf:"+abs+"/models/")
	// The budget is wall time, not the backend's doing: through llama-server
	// (one slot; prompts not cached, so each of an item's cloze requests
	// computes its whole prompt again) the quick start takes several times
	// as long as embedded, and on a loaded machine (CI: two test packages
	// beside the server on two cores) the knowledge axis outran its share of
	// max_wall_seconds 1800 (4 min) with one item in flight, which was then
	// not scored: issue 26's lost item. Two hours give each axis 17 min; a
	// stop at the budget still fails the test, by its note.
	const wall = "max_wall_seconds: 1800\n"
	if !strings.Contains(base, wall) {
		t.Fatalf("testdata/quickstart.yaml has no %q line", strings.TrimSpace(wall))
	}
	base = strings.Replace(base, wall, "max_wall_seconds: 7200\n", 1)
	type runOf struct {
		res   runfiles.Result
		store string // the local store, kept when the test fails
		id    string
		log   string // the run's and its worker's output
	}
	run := func(name, spec string) runOf {
		cfg := strings.Replace(base, "  spec: gguf:"+model+"\n", "  spec: "+spec+"\n", 1)
		if !strings.Contains(cfg, "  spec: "+spec+"\n") {
			t.Fatalf("the quick start's model.spec line was not found in testdata/quickstart.yaml")
		}
		r := runOf{store: keptDir(t, "parity-"+name+"-store-"), id: "parity-" + name}
		cfg += "store:\n  uri: " + r.store + "\n"
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		code, log := runWithWorker(t, srv, "--config", path, "--run-id", r.id, "--out", out)
		if code != 0 {
			t.Fatalf("%s run: exit %d\n%s", name, code, log)
		}
		r.log = log
		readJSON(t, filepath.Join(out, "result.json"), &r.res)
		return r
	}
	er := run("embedded", fmt.Sprintf("gguf:%s?ctx=%d", model, nCtx))
	sr := run("server", "openai:"+url)
	embedded, served := er.res, sr.res
	if len(embedded.Axes) != 7 {
		t.Errorf("embedded run has %d axes, want the quick start's 7", len(embedded.Axes))
	}
	// An item that one run did not score is named with its reason, read
	// from the run's store: the error recorded with it, or none recorded
	// (the axis stopped before it was answered; the notes say why).
	for _, r := range []runOf{er, sr} {
		for _, n := range r.res.Summary.Notes {
			if strings.Contains(n, " stopped early ") || strings.Contains(n, " failed: ") || strings.Contains(n, " skipped: ") {
				t.Errorf("%s run: %s", r.id, n)
			}
		}
	}
	for name, e := range embedded.Axes {
		s, ok := served.Axes[name]
		if !ok {
			t.Errorf("%s: missing from the llama-server run", name)
			continue
		}
		if e.N != s.N {
			t.Errorf("%s: n %d embedded, %d through llama-server; items not scored:\nembedded:\n%s\nllama-server:\n%s\nnotes:\nembedded: %q\nllama-server: %q",
				name, e.N, s.N, unscored(t, er.store, er.id, name), unscored(t, sr.store, sr.id, name), e.Notes, s.Notes)
		}
		if !sameScore(e.Score, s.Score) {
			t.Errorf("%s: headline %s embedded, %s through llama-server", name, parityScore(e.Score), parityScore(s.Score))
		}
		if e.TruncationRate != s.TruncationRate {
			t.Errorf("%s: truncation rate %v embedded, %v through llama-server", name, e.TruncationRate, s.TruncationRate)
		}
		eb, _ := json.Marshal(e.ByScoring)
		sb, _ := json.Marshal(s.ByScoring)
		if string(eb) != string(sb) {
			t.Errorf("%s: by_scoring %s embedded, %s through llama-server", name, eb, sb)
		}
	}
	if !sameScore(embedded.Summary.MSPublic, served.Summary.MSPublic) || !sameScore(embedded.Summary.MSRanking, served.Summary.MSRanking) {
		t.Errorf("MS %s / ranking %s embedded, %s / %s through llama-server", parityScore(embedded.Summary.MSPublic), parityScore(embedded.Summary.MSRanking),
			parityScore(served.Summary.MSPublic), parityScore(served.Summary.MSRanking))
	}
	if strings.Join(embedded.Summary.Warnings, "\n") != strings.Join(served.Summary.Warnings, "\n") {
		t.Errorf("warnings differ:\nembedded:\n%s\nllama-server:\n%s", strings.Join(embedded.Summary.Warnings, "\n"), strings.Join(served.Summary.Warnings, "\n"))
	}
	if t.Failed() {
		// The workers' warnings (retried activities, failed heartbeats)
		// say what happened to the stage that differs.
		for _, r := range []runOf{er, sr} {
			var lines []string
			for _, l := range strings.Split(r.log, "\n") {
				if strings.Contains(l, " WRN ") || strings.Contains(l, " ERR ") {
					lines = append(lines, l)
				}
			}
			t.Logf("%s run: %d warnings and errors in its output; the first 40:\n%s", r.id, len(lines), strings.Join(lines[:min(len(lines), 40)], "\n"))
		}
	}
}

// keptDir is a new folder that is removed when the test passes and kept,
// its path logged, when it fails, so a run's store can be read afterwards.
func keptDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kept for inspection: %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// unscored lists the items of an axis that a run in a local store did not
// score, one line each with why: the error recorded with its prediction,
// or that it has none.
func unscored(t *testing.T, store, run, axis string) string {
	t.Helper()
	shards, _ := filepath.Glob(filepath.Join(store, runfiles.ShardsPrefix(run, axis), "*"))
	var lines []string
	for _, dir := range shards {
		predicted := map[string]string{} // item id -> error
		parts, _ := filepath.Glob(filepath.Join(dir, runfiles.Answers+"*.jsonl"))
		for _, p := range parts {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			preds, err := runfiles.DecodeJSONL[scorers.Prediction](p, data)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range preds {
				predicted[pr.ItemID] = pr.Error
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, "items.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		items, err := runfiles.DecodeJSONL[scorers.Item]("items.jsonl", data)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			switch why, ok := predicted[it.ID]; {
			case !ok:
				lines = append(lines, fmt.Sprintf("  %s: no prediction recorded", it.ID))
			case why != "":
				lines = append(lines, fmt.Sprintf("  %s: %s", it.ID, why))
			}
		}
	}
	if len(lines) == 0 {
		return "  (none)"
	}
	return strings.Join(lines, "\n")
}

func sameScore(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func parityScore(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

// serverWindow is llama-server's per-slot context size (GET /props).
func serverWindow(t *testing.T, url string) int {
	t.Helper()
	r, err := http.Get(url + "/props")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var props struct {
		DefaultGenerationSettings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := json.NewDecoder(r.Body).Decode(&props); err != nil || props.DefaultGenerationSettings.NCtx <= 0 {
		t.Fatalf("GET %s/props: no n_ctx (%v)", url, err)
	}
	return props.DefaultGenerationSettings.NCtx
}

// startTinyServer runs llama-server on the tiny model with one slot (no
// batching across requests, which rounds differently) and the model's own
// window, and stops it when the test ends.
func startTinyServer(t *testing.T, bin, model string) string {
	t.Helper()
	url, stop := llamatest.Start(t, bin, model, 512, filepath.Join(t.TempDir(), "llama-server.log"))
	t.Cleanup(stop)
	return url
}
