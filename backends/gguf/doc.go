// Package gguf runs small language models stored as GGUF files in pure Go,
// so GlossoBench can evaluate and test with a real model and no server.
//
// It reads GGUF v2/v3 (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and the
// K-quants Q2_K to Q6_K), tokenizes exactly as llama.cpp does (SentencePiece
// BPE, byte-level BPE with the pre-tokenizer tokenizer.ggml.pre names, and
// Gemma 4's tokenizer), and computes the forward pass of six architectures,
// llama, qwen2, qwen3, phi3, gemma2 and gemma3 (the list model.go accepts),
// with a KV cache: RMSNorm, rotary embeddings in llama.cpp's normal or NEOX
// layout (with Llama 3, linear and YaRN scaling), grouped-query attention,
// SwiGLU, or for Gemma GeGLU with logit soft-capping and sliding-window
// layers. The file is memory-mapped; weights are never copied.
// docs/GGUF.md lists what each architecture adds and how each part is
// checked against llama.cpp.
//
// A *Model implements backends.Backend: exact per-token log-likelihoods,
// greedy or seeded sampling with stop strings, output constrained to a
// request's JSON Schema (as llama-server's json_schema; see backends/grammar),
// and chat formatting.
package gguf
