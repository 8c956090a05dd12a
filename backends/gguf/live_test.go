package gguf

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/backends"
)

// liveServer returns the llama-server URL from GLOSSOBENCH_LLAMA_SERVER_URL
// (a server started on testdata/models/tiny-llama/tiny-llama.gguf), or skips.
func liveServer(t *testing.T) string {
	u := os.Getenv("GLOSSOBENCH_LLAMA_SERVER_URL")
	if u == "" {
		t.Skip("GLOSSOBENCH_LLAMA_SERVER_URL not set")
	}
	return strings.TrimRight(u, "/")
}

func postJSON(t *testing.T, url string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s: %s", url, resp.Status, msg)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

func liveTokenize(t *testing.T, url, text string, bos bool) []int {
	var r struct {
		Tokens []int `json:"tokens"`
	}
	postJSON(t, url+"/tokenize", map[string]any{"content": text, "add_special": bos}, &r)
	if r.Tokens == nil {
		r.Tokens = []int{}
	}
	return r.Tokens
}

// liveNext returns llama-server's log-probabilities of every next token
// after prefix (n_probs = the vocabulary) and its argmax. The prompt cache is
// off so the prefix runs in one batch from an empty cache: with reuse, the
// server's numbers shift by ~1e-3 with whatever it computed before. The
// reported probabilities are the raw logits' softmax; a logit bias makes the
// one token the server generates a letter, since llama-server fails a
// request whose generated text is not valid UTF-8 (a lone byte token, which
// random-weight models often pick).
func liveNext(t *testing.T, url string, prefix []int, vocab int) (map[int]float64, int) {
	var r struct {
		Probs []struct {
			Top []struct {
				ID      int     `json:"id"`
				LogProb float64 `json:"logprob"`
			} `json:"top_logprobs"`
		} `json:"completion_probabilities"`
	}
	postJSON(t, url+"/completion", map[string]any{"prompt": prefix, "n_predict": 1, "n_probs": vocab,
		"temperature": 0, "cache_prompt": false, "samplers": []string{"top_k"}, "top_k": 1,
		"logit_bias": [][]any{{"e", 1e4}}}, &r)
	if len(r.Probs) == 0 || len(r.Probs[0].Top) == 0 {
		t.Fatalf("no completion_probabilities from %s", url)
	}
	out := map[int]float64{}
	for _, p := range r.Probs[0].Top {
		out[p.ID] = p.LogProb
	}
	return out, r.Probs[0].Top[0].ID
}

// TestLiveLlamaServer compares tokenization, per-token log-probabilities and
// greedy generation with a running llama-server on the tiny model.
func TestLiveLlamaServer(t *testing.T) {
	url := liveServer(t)
	m := openTiny(t, Options{})
	bad := 0
	for _, c := range readJSONL[tokCase](t, "strings.jsonl") {
		for _, bos := range []bool{true, false} {
			want := liveTokenize(t, url, c.Text, bos)
			got := m.Tokenizer().Encode(c.Text, bos)
			if got == nil {
				got = []int{}
			}
			if !slices.Equal(got, want) {
				if bad++; bad <= 10 {
					t.Errorf("Encode(%q, bos=%v) = %v, llama-server %v", c.Text, bos, got, want)
				}
			}
		}
	}
	for _, c := range readJSONL[llCase](t, "loglik.jsonl") {
		whole := liveTokenize(t, url, c.Context+c.Continuation, true)
		n := len(liveTokenize(t, url, c.Context, true))
		res, err := m.LogLikelihood(bg, []backends.LLRequest{{ID: "x", Context: c.Context, Continuation: c.Continuation}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res[0].Tokens, whole[n:]) {
			t.Errorf("%q+%q: tokens %v, llama-server %v", c.Context, c.Continuation, res[0].Tokens, whole[n:])
			continue
		}
		greedy := true
		for i := n; i < len(whole); i++ {
			lps, best := liveNext(t, url, whole[:i], m.cfg.Vocab)
			greedy = greedy && best == whole[i]
			if got, want := res[0].TokenLogProbs[i-n], lps[whole[i]]; math.Abs(got-want) > 1e-3 {
				t.Errorf("%q+%q token %d: logprob %.5f, llama-server %.5f", c.Context, c.Continuation, i-n, got, want)
			}
		}
		if greedy != res[0].IsGreedy {
			t.Errorf("%q+%q: greedy %v, llama-server %v", c.Context, c.Continuation, res[0].IsGreedy, greedy)
		}
	}
	for _, c := range readJSONL[genCase](t, "generate.jsonl") {
		var r struct {
			Content string `json:"content"`
		}
		postJSON(t, url+"/completion", map[string]any{"prompt": c.Prompt, "n_predict": c.NPredict, "temperature": 0,
			"samplers": []string{"top_k"}, "top_k": 1}, &r)
		g, err := m.Generate(bg, []backends.GenRequest{{Prompt: c.Prompt, MaxTokens: c.NPredict}})
		if err != nil {
			t.Fatal(err)
		}
		if g[0].Text != r.Content {
			t.Errorf("Generate(%q) = %q, llama-server %q", c.Prompt, g[0].Text, r.Content)
		}
	}
}
