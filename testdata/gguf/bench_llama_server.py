#!/usr/bin/env python3
"""llama-server's prompt-processing and generation speed on given files, measured as
bench_compare.py measures it (pp: a 128-token prompt from an empty cache; tg: decoding
after a 16-token prompt; the best of its rounds), without backends/gguf beside it.

Usage: bench_llama_server.py LLAMA_SERVER_BINARY MODEL.gguf [MODEL.gguf ...]
(2 threads). The figures in BENCH.md from before 2026-12-02 were taken with this
script's earlier form, which printed the median of three rounds instead of the best."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_compare import llama_server

for model in sys.argv[2:]:
    pp, tg, rss = llama_server(sys.argv[1], model, 2)
    print(f"{model}\tpp128 {pp:.1f} tokens/s\ttg {tg:.1f} tokens/s\tpeak RSS {rss:.0f} MiB", flush=True)
