// Package gguf runs small Llama-architecture language models stored as GGUF
// files in pure Go, so GlossoBench can evaluate and test with a real model and
// no server.
//
// It reads GGUF v2/v3 (F32, F16, Q8_0 and Q4_0 tensors), tokenizes with the
// SentencePiece BPE vocabulary stored in the file exactly as llama.cpp does,
// and computes the llama forward pass (RMSNorm, rotary embeddings in
// llama.cpp's interleaved-pair layout, grouped-query attention, SwiGLU) with
// a KV cache. The file is memory-mapped; weights are never copied.
//
// A *Model implements backends.Backend: exact per-token log-likelihoods,
// greedy or seeded sampling with stop strings, and chat formatting.
package gguf
