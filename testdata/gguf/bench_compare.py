#!/usr/bin/env python3
"""backends/gguf against llama-server, side by side, in one command.

Writes the dim-1024 random-weight llama (F32, by the project's own GGUF writer:
TestWriteBenchModel), quantises it to Q8_0 and Q4_K_M with llama-quantize, then runs
both engines on each file ROUNDS times, interleaved (llama-server, backends/gguf,
llama-server, ...), at THREADS threads, and prints the best figure of each engine with
the ratio, and each engine's peak RSS (the process's maximum resident set, from wait4).

Workload, the same for both: pp128 = a 128-token prompt from an empty cache;
tg = decoding one token at a time after a 16-token prompt (llama-server: 112 tokens
in one request, timings from its `timings` field; backends/gguf:
BenchmarkPromptProcessing and BenchmarkGeneration).

Usage (from the repository root):
    /usr/bin/python3 testdata/gguf/bench_compare.py [--rounds 3] [--threads 2] [--dir DIR]
        [--server PATH] [--quantize PATH] [--types F32,Q8_0,Q4_K_M]
Defaults: llama-server and llama-quantize 3.21.1 from $HOME/.cache/glossobench, DIR
$TMPDIR/glossobench-gguf-bench, port 18110.
"""
import argparse, json, os, re, subprocess, sys, tempfile, time, urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PORT = 18110
URL = f"http://127.0.0.1:{PORT}"
# The same text as backends/gguf's benchPrompt, tokenised by the server.
TEXT = ("Once upon a time, Tom had a red cat. The cat sat on the mat. One day the cat saw a dog. Selamat pagi, apa khabar? "
        "Saya suka makan nasi lemak. Question: What is the capital of France?\nAnswer: Paris\nQuestion: What is 12 plus 7?\n"
        "Answer: 19\nCount: 2, 4, 6, 8, 10, 12\nThe opposite of hot is cold. The capital of Egypt is Cairo. "
        "Anna and the fox went home and they were happy.")


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def post(path, body):
    req = urllib.request.Request(URL + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{path}: {e.code} {e.read()[:300]!r}") from None


def wait_rss(p):
    """Waits for p and returns its peak RSS in MiB."""
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return ru.ru_maxrss / 1024


def llama_server(binary, model, threads):
    srv = subprocess.Popen([binary, "-m", model, "--host", "127.0.0.1", "--port", str(PORT), "-t", str(threads),
                            "-tb", str(threads), "-c", "1024", "-np", "1", "--no-warmup"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
        for _ in range(3):
            r = post("/completion", {"prompt": toks[:128], "n_predict": 1, "cache_prompt": False, "temperature": 0})
            pp.append(r["timings"]["prompt_per_second"])
            # Random weights babble; banning the byte tokens keeps the text valid UTF-8.
            r = post("/completion", {"prompt": toks[:16], "n_predict": 112, "cache_prompt": False, "temperature": 0,
                                     "ignore_eos": True, "logit_bias": [[i, False] for i in range(3, 259)]})
            tg.append(r["timings"]["predicted_per_second"])
    finally:
        srv.terminate()
        rss = wait_rss(srv)
    return max(pp[1:]), max(tg[1:]), rss


def gguf(testbin, model, threads):
    env = dict(os.environ, GLOSSOBENCH_BENCH_MODELS=model, GLOSSOBENCH_BENCH_THREADS=str(threads))
    out, rss = {}, 0.0
    for bench, n in (("PromptProcessing", "4x"), ("Generation", "112x")):
        p = subprocess.Popen([testbin, "-test.run", "^$", "-test.bench", "^Benchmark" + bench + "$",
                              "-test.benchtime", n], cwd=os.path.join(ROOT, "backends", "gguf"), env=env,
                             stdout=subprocess.PIPE, text=True)
        text = p.stdout.read()
        rss = max(rss, wait_rss(p))
        m = re.search(r"([\d.]+) tokens/s", text)
        if not m:
            sys.exit(f"{bench} on {model}: no tokens/s in the output:\n{text}")
        out[bench] = float(m.group(1))
    return out["PromptProcessing"], out["Generation"], rss


def main():
    cache = os.path.expanduser("~/.cache/glossobench/llama-server-3.21.1")
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "glossobench-gguf-bench"))
    ap.add_argument("--server", default=os.path.join(cache, "llama-server"))
    ap.add_argument("--quantize", default=os.path.join(cache, "llama-quantize"))
    ap.add_argument("--types", default="Q8_0,Q4_K_M")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    f32 = os.path.join(a.dir, "random1024-f32.gguf")
    if not os.path.exists(f32):
        run(["go", "test", "-run", "^TestWriteBenchModel$", "-count=1", "./backends/gguf/"], cwd=ROOT,
            env=dict(os.environ, GLOSSOBENCH_WRITE_BENCH_MODEL=f32), stdout=subprocess.DEVNULL)
    models = []
    for t in a.types.split(","):
        path = os.path.join(a.dir, f"random1024-{t.lower()}.gguf")
        if t != "F32" and not os.path.exists(path):
            run([a.quantize, f32, path, t, "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        models.append((t, path))
    testbin = os.path.join(a.dir, "gguf.test")
    run(["go", "test", "-c", "-o", testbin, "./backends/gguf/"], cwd=ROOT)

    load0 = open("/proc/loadavg").read().split()[:3]
    t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    best = {}
    for r in range(a.rounds):
        for t, path in models:
            for eng, fn in (("llama-server", lambda: llama_server(a.server, path, a.threads)),
                            ("backends/gguf", lambda: gguf(testbin, path, a.threads))):
                pp, tg, rss = fn()
                print(f"round {r + 1} {t:7} {eng:13} pp128 {pp:9.1f}  tg {tg:7.1f} tokens/s  peak RSS {rss:6.0f} MiB",
                      file=sys.stderr, flush=True)
                b = best.setdefault((t, eng), [0, 0, 0])
                b[0], b[1], b[2] = max(b[0], pp), max(b[1], tg), max(b[2], rss)
    load1 = open("/proc/loadavg").read().split()[:3]
    print(f"\n{t0}, {a.threads} threads, best of {a.rounds} interleaved rounds; "
          f"load average {' '.join(load0)} at the start, {' '.join(load1)} at the end\n")
    print("| model | llama-server pp128 | backends/gguf pp128 | ratio | llama-server tg | backends/gguf tg | ratio "
          "| llama-server peak RSS | backends/gguf peak RSS | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for t, path in models:
        s, g = best[(t, "llama-server")], best[(t, "backends/gguf")]
        size = os.path.getsize(path) / 2**20
        print(f"| random dim 1024 × 12, {t} ({size:.0f} MiB) | {s[0]:,.1f} | {g[0]:,.1f} | {g[0] / s[0]:.0%} "
              f"| {s[1]:,.1f} | {g[1]:,.1f} | {g[1] / s[1]:.0%} | {s[2]:,.0f} MiB | {g[2]:,.0f} MiB | {g[2] / s[2]:.2f}× |")


if __name__ == "__main__":
    main()
