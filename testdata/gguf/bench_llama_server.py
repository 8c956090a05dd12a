#!/usr/bin/env python3
"""Measure llama-server's prompt-processing and generation speed on the same files and
workload as backends/gguf's BenchmarkPromptProcessing / BenchmarkGeneration
(pp: a 128-token prompt from an empty cache; tg: decoding after a 16-token prompt).

Usage: bench_llama_server.py LLAMA_SERVER_BINARY MODEL.gguf [MODEL.gguf ...]
The random dim-768 models are written by `go test -bench . ./backends/gguf/` to
$TMPDIR/glossobench-gguf-bench/. Starts its own server on port 18089 with -t 2."""
import json, statistics, subprocess, sys, time, urllib.error, urllib.request

PORT = 18089
URL = f"http://127.0.0.1:{PORT}"
TEXT = ("Once upon a time, Tom had a red cat. The cat sat on the mat. One day the cat saw a dog. Selamat pagi, apa khabar? "
        "Saya suka makan nasi lemak. Question: What is the capital of France?\nAnswer: Paris\nQuestion: What is 12 plus 7?\n"
        "Answer: 19\nCount: 2, 4, 6, 8, 10, 12\nThe opposite of hot is cold. The capital of Egypt is Cairo. "
        "Anna and the fox went home and they were happy.")

def post(path, body):
    req = urllib.request.Request(URL + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{path}: {e.code} {e.read()[:300]!r}") from None

def bench(binary, model):
    srv = subprocess.Popen([binary, "-m", model, "--host", "127.0.0.1", "--port", str(PORT), "-t", "2", "-tb", "2",
                            "-c", "1024", "-np", "1", "--no-warmup"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(URL + "/health") as r:
                    if r.status == 200:
                        break
            except Exception:
                time.sleep(0.5)
        toks = post("/tokenize", {"content": TEXT, "add_special": True})["tokens"]
        while len(toks) < 128:
            toks += toks[1:]
        pp, tg = [], []
        for _ in range(4):
            r = post("/completion", {"prompt": toks[:128], "n_predict": 1, "cache_prompt": False, "temperature": 0})
            pp.append(r["timings"]["prompt_per_second"])
            # Random weights babble; banning the byte tokens keeps the text valid UTF-8, which the
            # server insists on.
            r = post("/completion", {"prompt": toks[:16], "n_predict": 112, "cache_prompt": False, "temperature": 0,
                                     "ignore_eos": True, "logit_bias": [[i, False] for i in range(3, 259)]})
            tg.append(r["timings"]["predicted_per_second"])
        return statistics.median(pp[1:]), statistics.median(tg[1:])
    finally:
        srv.terminate()
        srv.wait()

for model in sys.argv[2:]:
    pp, tg = bench(sys.argv[1], model)
    print(f"{model}\tpp128 {pp:.1f} tokens/s\ttg {tg:.1f} tokens/s", flush=True)
