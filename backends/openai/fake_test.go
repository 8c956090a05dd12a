package openai

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// newTestClient points a client at srv with short backoffs.
func newTestClient(t testing.TB, srv *httptest.Server, cfg Config) *Client {
	t.Helper()
	cfg.BaseURL = srv.URL + "/v1"
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.api.BackoffBase = time.Millisecond
	c.api.BackoffMax = 5 * time.Millisecond
	t.Cleanup(func() { c.Close() })
	return c
}

func decodeBody(t testing.TB, r *http.Request, v any) {
	t.Helper()
	data, err := io.ReadAll(r.Body)
	if err != nil {
		t.Error(err)
		return
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Errorf("request to %s is not JSON: %v: %s", r.URL.Path, err, data)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// fakeWords tokenizes like a toy BPE: each token is a run of non-spaces with
// its leading spaces, and punctuation stands alone.
func fakeWords(s string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == ' ' || r == '\n':
			if cur.Len() > 0 && !strings.HasSuffix(cur.String(), " ") && !strings.HasSuffix(cur.String(), "\n") {
				flush()
			}
			cur.WriteRune(r)
		case strings.ContainsRune("?:.,", r):
			flush()
			toks = append(toks, string(r))
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return toks
}

// fakeLogprob is the deterministic logprob the fake servers give a token.
func fakeLogprob(tok string) float64 {
	return -0.01 * float64(utf8.RuneCountInString(tok)+len(tok))
}

// vllmEcho is a vLLM-like /v1/completions handler: with echo it returns
// "<s>" (null logprob; its text is not in the prompt, so offsets are shifted
// as vLLM's are), the prompt's tokens and one generated token. notGreedy
// tokens get a better alternative in top_logprobs. With tokenize it also
// serves vLLM's /tokenize.
func vllmEcho(t testing.TB, notGreedy map[string]bool, tokenize bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if tokenize && r.URL.Path == "/tokenize" {
			var req struct {
				Prompt           string `json:"prompt"`
				AddSpecialTokens bool   `json:"add_special_tokens"`
			}
			decodeBody(t, r, &req)
			if !req.AddSpecialTokens {
				t.Error("/tokenize without add_special_tokens")
			}
			writeJSON(w, map[string]any{"count": 1 + len(fakeWords(req.Prompt)), "max_model_len": 4096, "tokens": []int{}})
			return
		}
		if r.URL.Path != "/v1/completions" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Prompt    string `json:"prompt"`
			Echo      bool   `json:"echo"`
			Logprobs  int    `json:"logprobs"`
			MaxTokens int    `json:"max_tokens"`
		}
		decodeBody(t, r, &req)
		if !req.Echo || req.Logprobs < 1 {
			t.Errorf("echo request has echo=%v logprobs=%d", req.Echo, req.Logprobs)
		}
		toks := append(append([]string{"<s>"}, fakeWords(req.Prompt)...), "<gen>")
		var (
			lps    []*float64
			tops   []map[string]float64
			offs   []int
			offset int
		)
		for i, tok := range toks {
			offs = append(offs, offset)
			offset += utf8.RuneCountInString(tok)
			if i == 0 {
				lps = append(lps, nil)
				tops = append(tops, nil)
				continue
			}
			v := fakeLogprob(tok)
			lps = append(lps, &v)
			top := map[string]float64{tok: v}
			if notGreedy[tok] {
				top["<better>"] = v / 2
			}
			tops = append(tops, top)
		}
		writeJSON(w, map[string]any{
			"choices": []any{map[string]any{
				"text": req.Prompt + "<gen>",
				"logprobs": map[string]any{
					"tokens": toks, "token_logprobs": lps, "top_logprobs": tops, "text_offset": offs,
				},
				"finish_reason": "length",
			}},
			"usage": map[string]any{"prompt_tokens": len(toks) - 1, "completion_tokens": 1},
		})
	}
}

// fakeLlama is a llama-server-like handler: /props, /tokenize (BOS=1, one
// token per byte, id = byte+10) and /completion honouring a token grammar,
// leaving out tokens that end inside a UTF-8 character as the real server
// does, and answering the client's one-character probe with a top-k list.
// Like llama-server (measured against the bundled build), /completion
// refuses a prompt that fills the window, n_ctx (512 unless set), and
// stops a generation once prompt and generated tokens fill it.
type fakeLlama struct {
	t        testing.TB
	nCtx     int
	mu       sync.Mutex
	prompts  [][]int
	noProbs  bool // answer /completion without completion_probabilities
	postProb bool // answer with post-sampling "prob" fields
	ignoreGr bool // sample other tokens than the grammar forces
}

func fakeTokenize(s string, bos bool) []int {
	var toks []int
	if bos {
		toks = append(toks, 1)
	}
	for i := 0; i < len(s); i++ {
		toks = append(toks, int(s[i])+10)
	}
	return toks
}

// fakeTokLogprob gives token id a deterministic logprob (the fake model
// ignores its context). The best is -1/8, for multiples of 17 such as 340.
func fakeTokLogprob(id int) float64 { return -float64(id%17+1) / 8 }

const fakeVocab = 300

func (f *fakeLlama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	switch r.URL.Path {
	case "/props":
		writeJSON(w, map[string]any{"default_generation_settings": map[string]any{"n_ctx": 512}, "build_info": "fake"})
	case "/tokenize":
		var req struct {
			Content    string `json:"content"`
			AddSpecial bool   `json:"add_special"`
			WithPieces bool   `json:"with_pieces"`
		}
		decodeBody(t, r, &req)
		ids := fakeTokenize(req.Content, req.AddSpecial)
		if !req.WithPieces {
			writeJSON(w, map[string]any{"tokens": ids})
			return
		}
		var toks []any
		for _, id := range ids {
			var p any = "<s>"
			if id >= 10 {
				b := byte(id - 10)
				p = string([]byte{b})
				if b >= 0x80 {
					p = []int{int(b)}
				}
			}
			toks = append(toks, map[string]any{"id": id, "piece": p})
		}
		writeJSON(w, map[string]any{"tokens": toks})
	case "/completion":
		var req struct {
			Prompt            []int   `json:"prompt"`
			NPredict          int     `json:"n_predict"`
			NProbs            int     `json:"n_probs"`
			PostSamplingProbs bool    `json:"post_sampling_probs"`
			Grammar           string  `json:"grammar"`
			Temperature       float64 `json:"temperature"`
		}
		decodeBody(t, r, &req)
		if req.PostSamplingProbs || req.NProbs < 1 {
			t.Errorf("/completion: post_sampling_probs=%v n_probs=%d", req.PostSamplingProbs, req.NProbs)
		}
		f.mu.Lock()
		f.prompts = append(f.prompts, req.Prompt)
		f.mu.Unlock()
		nCtx := cmp.Or(f.nCtx, 512)
		if len(req.Prompt) >= nCtx {
			w.WriteHeader(400)
			writeJSON(w, map[string]any{"error": map[string]any{"code": 400, "type": "exceed_context_size_error",
				"message": fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", len(req.Prompt), nCtx)}})
			return
		}
		if f.noProbs {
			writeJSON(w, map[string]any{"content": "x", "stop_type": "limit"})
			return
		}
		if req.Grammar == "root ::= [a-zA-Z0-9]" {
			// Probe: generate "a", list the top n_probs tokens.
			var top []any
			for k := range 17 {
				for id := k; id < fakeVocab && len(top) < req.NProbs; id += 17 {
					top = append(top, map[string]any{"id": id, "logprob": fakeTokLogprob(id)})
				}
			}
			writeJSON(w, map[string]any{"content": "a", "completion_probabilities": []any{
				map[string]any{"id": int('a') + 10, "logprob": fakeTokLogprob(int('a') + 10), "top_logprobs": top},
			}})
			return
		}
		forced, err := parseForcingGrammar(req.Grammar)
		if err != nil {
			w.WriteHeader(400)
			writeJSON(w, map[string]any{"error": map[string]any{"code": 400, "message": err.Error()}})
			return
		}
		for _, id := range forced {
			if id-10 >= 0x80 {
				// The real server cannot force a token that is not whole UTF-8.
				w.WriteHeader(500)
				writeJSON(w, map[string]any{"error": map[string]any{"code": 500, "message": "got exception: Unexpected empty grammar stack after accepting piece"}})
				return
			}
		}
		if req.NPredict != len(forced) {
			t.Errorf("/completion: n_predict %d for %d forced tokens", req.NPredict, len(forced))
		}
		var probs []any
		var text []byte
		for _, id := range forced[:min(len(forced), nCtx-len(req.Prompt))] {
			text = append(text, byte(id-10))
			v := fakeTokLogprob(id)
			if f.ignoreGr {
				id++
			}
			key := "logprob"
			if f.postProb {
				key = "prob"
			}
			probs = append(probs, map[string]any{
				"id": id, "token": "t", key: v,
				"top_logprobs": []any{map[string]any{"id": 340, "logprob": fakeTokLogprob(340)}},
			})
		}
		writeJSON(w, map[string]any{"content": string(text), "completion_probabilities": probs, "stop_type": "limit"})
	default:
		http.NotFound(w, r)
	}
}

// parseForcingGrammar inverts forcingGrammar, so the fake server checks the
// exact text the client sends.
func parseForcingGrammar(g string) ([]int, error) {
	rest, ok := strings.CutPrefix(g, "root ::=")
	if !ok {
		return nil, fmt.Errorf("grammar %q has no root rule", g)
	}
	var ids []int
	for _, f := range strings.Fields(rest) {
		s, ok := strings.CutPrefix(f, "<[")
		if !ok {
			return nil, fmt.Errorf("bad token %q", f)
		}
		s, ok = strings.CutSuffix(s, "]>")
		if !ok {
			return nil, fmt.Errorf("bad token %q", f)
		}
		id, err := strconv.Atoi(s)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}
