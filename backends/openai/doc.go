// Package openai is the backend for OpenAI-compatible HTTP inference servers:
// vLLM, SGLang, llama.cpp's llama-server and hosted APIs.
//
// Generation goes through /v1/chat/completions (GenRequest.Messages) or
// /v1/completions (GenRequest.Prompt).
//
// Log-likelihood has two routes, because servers differ:
//
//   - vLLM and SGLang echo the prompt with per-token logprobs on
//     /v1/completions (echo=true, logprobs=1, max_tokens=1). The
//     continuation's tokens are those after the context's token count from
//     the server's /tokenize, as lm-evaluation-harness splits them; without
//     /tokenize, they are found by the returned text offsets.
//   - llama-server refuses echo. There the context and context+continuation
//     are tokenized with /tokenize (BOS added as the server would), and
//     /completion is asked to generate exactly the continuation's tokens,
//     forced by a token-level GBNF grammar (root ::= <[id]> <[id]> ...),
//     with n_probs=1 and post_sampling_probs off so that each forced token's
//     logprob is the model's raw softmax, not a probability after sampling.
//     Byte tokens, which that grammar cannot force, are read from a top-k
//     list instead (see llama.go).
//
// The caller's split of context and continuation is kept as given (no
// moving of trailing spaces), as in backends/gguf, so both backends score
// the same token spans.
//
// Reproducibility: llama-server batches concurrent requests together, and
// llama.cpp rounds differently by batch shape (about 1e-4 nats per token on
// the test model). For bit-identical reruns use Concurrency 1 or run the
// server with one slot (-np 1). Prompt caching is turned off for
// log-likelihood requests for the same reason.
//
// A server that cannot give log-likelihoods yields backends.ErrUnsupported,
// never a made-up number.
//
// Requests are retried with exponential backoff and full jitter on 429, 5xx
// (except 501), timeouts and refused or reset connections, honouring
// Retry-After. The API key is read from the environment variable the config
// names; it is never written to errors.
package openai
