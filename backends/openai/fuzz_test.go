package openai

import (
	"encoding/json"
	"math"
	"testing"
)

// FuzzParseEcho feeds arbitrary server answers to the echo parser: it must
// return a result or an error, never panic, and never a positive or NaN sum.
func FuzzParseEcho(f *testing.F) {
	f.Add([]byte(`{"choices":[{"logprobs":{"tokens":["a","bc","d","!"],"token_logprobs":[null,-1,-2,-3],"top_logprobs":[null,{"bc":-1},{"d":-2},{"!":-3}],"text_offset":[0,1,3,4]}}],"usage":{"prompt_tokens":3}}`), -1, 2)
	f.Add([]byte(`{"choices":[{"logprobs":{"tokens":["a","b"],"token_logprobs":[null,-1]}}]}`), 1, 1)
	f.Add([]byte(`{"choices":[{"logprobs":{"tokens":["x"],"token_logprobs":[-1],"text_offset":[9]}}],"usage":{"prompt_tokens":9}}`), -1, 5)
	f.Add([]byte(`{"choices":[{"logprobs":{"tokens":["a","b"],"token_logprobs":[null,-1],"text_offset":[5,2]}}]}`), -1, 0)
	f.Add([]byte(`{"choices":[]}`), 0, 1)
	f.Add([]byte(`<html>`), 1, 1)
	f.Fuzz(func(t *testing.T, raw []byte, nCtx, contLen int) {
		res, err := parseEcho(raw, nCtx, contLen)
		if err != nil {
			return
		}
		if math.IsNaN(res.LogProb) || res.LogProb > 0 || len(res.TokenLogProbs) == 0 {
			t.Errorf("parseEcho(%s) = %+v", raw, res)
		}
	})
}

// FuzzParseLlamaProbs does the same for llama-server's /completion answer.
func FuzzParseLlamaProbs(f *testing.F) {
	seed := func(v any) []byte { b, _ := json.Marshal(v); return b }
	f.Add(seed(map[string]any{"completion_probabilities": []any{
		map[string]any{"id": 426, "logprob": -0.1, "top_logprobs": []any{map[string]any{"id": 426, "logprob": -0.1}}},
		map[string]any{"id": 478, "logprob": -0.05, "top_logprobs": []any{map[string]any{"id": 9, "logprob": -0.01}}},
	}}), 426, 478)
	f.Add([]byte(`{"completion_probabilities":[{"id":1,"prob":0.5}]}`), 1, 2)
	f.Add([]byte(`{"content":"x"}`), 1, 2)
	f.Add([]byte(`[1,2]`), 0, 0)
	f.Fuzz(func(t *testing.T, raw []byte, a, b int) {
		lps, _, err := parseLlamaProbs(raw, []int{a, b})
		if err != nil {
			return
		}
		if len(lps) != 2 || math.IsNaN(lps[0]+lps[1]) || lps[0] > 0 || lps[1] > 0 {
			t.Errorf("parseLlamaProbs(%s) = %v", raw, lps)
		}
	})
}
