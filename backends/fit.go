package backends

import "fmt"

// DefaultMaxTokens caps a generation whose GenRequest leaves MaxTokens at 0,
// on every backend alike.
const DefaultMaxTokens = 256

// The context policy. Every backend fits its requests to the model's window
// with these two functions, so one item gets the same tokens (and the same
// truncation count in the notes) whether the embedded runtime or a server
// answers it: the prompt loses tokens from its left, after the first (BOS),
// as lm-evaluation-harness does; with strict the request fails instead.

// FitGeneration fits a prompt of n tokens and a generation of up to
// maxTokens (0: DefaultMaxTokens) into window. The generation keeps at
// least half the window, or its whole cap when that is smaller; cut prompt
// tokens are dropped after the first, and maxGen is what remains for the
// answer (llama.cpp stops a generation when the window is full).
func FitGeneration(n, window, maxTokens int, strict bool) (cut, maxGen int, err error) {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	if n >= window && strict {
		return 0, 0, fmt.Errorf("prompt of %d tokens leaves no room in the context size %d (strict_context)", n, window)
	}
	if room := window - min(maxTokens, window/2); !strict && n > room {
		cut = n - room
	}
	return cut, min(maxTokens, window-(n-cut)), nil
}

// FitScore fits a log-likelihood request of nAll tokens, the first nCtx of
// them context, into window. The model reads all but the last token, so
// nAll-1 must fit; cut context tokens are dropped after the first.
func FitScore(nAll, nCtx, window int, strict bool) (cut int, err error) {
	if nAll-1 <= window {
		return 0, nil
	}
	if strict {
		return 0, fmt.Errorf("context and continuation take %d tokens, more than the context size %d (strict_context)", nAll, window)
	}
	cut = nAll - 1 - window
	if nCtx-cut < 2 {
		return 0, fmt.Errorf("the continuation alone takes %d tokens, more than the context size %d", nAll-nCtx, window)
	}
	return cut, nil
}

// CutLeft drops cut tokens after the first.
func CutLeft(toks []int, cut int) []int {
	if cut <= 0 {
		return toks
	}
	return append([]int{toks[0]}, toks[1+cut:]...)
}
