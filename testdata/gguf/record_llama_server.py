#!/usr/bin/env python3
"""Record llama-server reference values for backends/gguf tests.

Usage: record_llama_server.py http://127.0.0.1:18080
(llama-server -m testdata/models/tiny-llama/tiny-llama.gguf --host 127.0.0.1 --port 18080 -t 1)

Writes, next to this script:
  tokenize.jsonl  {"text", "bos": /tokenize add_special=true, "nobos": add_special=false} per strings.jsonl line
  loglik.jsonl    {"context", "continuation", "tokens", "token_logprobs", "logprob", "is_greedy"}:
                  the sequence is /tokenize(context+continuation, BOS) split after /tokenize(context, BOS);
                  each continuation token's log-prob is read from /completion on the exact prefix
                  (prompt given as token ids, n_predict 1, n_probs = vocabulary size, so the whole
                  pre-sampling distribution comes back)
  generate.jsonl  {"prompt", "n_predict", "content", "tokens"}: greedy /completion (temperature 0)
"""
import json, os, sys, urllib.request

URL = sys.argv[1].rstrip("/")
HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = 512

def post(path, body):
    req = urllib.request.Request(URL + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())

def tokenize(text, bos):
    return post("/tokenize", {"content": text, "add_special": bos})["tokens"]

def next_logprobs(prefix):
    # cache_prompt off: every prefix runs from an empty cache in one batch, which makes the numbers
    # independent of what the server computed before (its KV reuse changes the f16 rounding).
    r = post("/completion", {"prompt": prefix, "n_predict": 1, "n_probs": VOCAB, "temperature": 0,
                             "cache_prompt": False, "samplers": ["top_k"], "top_k": 1})
    probs = r["completion_probabilities"][0]
    top = probs["top_logprobs"]
    return {t["id"]: t["logprob"] for t in top}, top[0]["id"]

with open(os.path.join(HERE, "strings.jsonl"), encoding="utf-8") as f:
    texts = [json.loads(l)["text"] for l in f]
with open(os.path.join(HERE, "tokenize.jsonl"), "w", encoding="utf-8") as f:
    for t in texts:
        f.write(json.dumps({"text": t, "bos": tokenize(t, True), "nobos": tokenize(t, False)}, ensure_ascii=False) + "\n")

Q = "Question: What is the capital of {}?\nAnswer:"
PAIRS = [(Q.format("France"), " Paris"), (Q.format("France"), " Rome"), (Q.format("France"), " Berlin"),
         (Q.format("France"), " Madrid"), (Q.format("Italy"), " Rome"), (Q.format("Japan"), " Tokyo"),
         (Q.format("Japan"), " Paris"), (Q.format("Kenya"), " Nairobi"), (Q.format("Malaysia"), " Kuala Lumpur"),
         ("Question: What is 2 plus 3?\nAnswer:", " 5"), ("Question: What is 2 plus 3?\nAnswer:", " 6"),
         ("Question: What is 12 plus 7?\nAnswer:", " 19"), ("Question: What is the opposite of hot?\nAnswer:", " cold"),
         ("Question: What is the opposite of hot?\nAnswer:", " big"), ("3 + 4 =", " 7"), ("Count: 2, 4, 6, 8,", " 10, 12"),
         ("Once upon a time, Tom had a red cat.", " The cat sat on the mat."),
         ("The capital of Egypt is", " Cairo."), ("", "Hello world"), ("", "Question:"),
         ("Ibu negara Malaysia ialah", " Kuala Lumpur."), ("Saya suka makan", " nasi lemak 🍛"),
         ("Indonesia adalah negara", " kepulauan terbesar di dunia."), ("Soalan: Apakah 2 tambah 2?\nJawapan:", " 4"),
         ("A  B\t C", "\n\n  D"), ("Numbers: 1234567890", " and 3.14159"),
         ("The opposite of big is", " small.\nThe opposite of fast is slow."),
         ("Question: What is the capital of Spain?\nAnswer: Madrid\nQuestion: What is the capital of Peru?\nAnswer:", " Lima")]
with open(os.path.join(HERE, "loglik.jsonl"), "w", encoding="utf-8") as f:
    for ctx, cont in PAIRS:
        whole = tokenize(ctx + cont, True)
        n = len(tokenize(ctx, True))
        lps, greedy = [], True
        for i in range(n, len(whole)):
            lp, best = next_logprobs(whole[:i])
            lps.append(lp[whole[i]])
            greedy = greedy and best == whole[i]
        f.write(json.dumps({"context": ctx, "continuation": cont, "tokens": whole[n:], "token_logprobs": lps,
                            "logprob": sum(lps), "is_greedy": greedy}, ensure_ascii=False) + "\n")

PROMPTS = [Q.format("France"), Q.format("Germany"), "Question: What is 5 plus 9?\nAnswer:", "Once upon a time,",
           "The opposite of up is", "Count: 3, 6, 9,", "Selamat pagi", ""]
with open(os.path.join(HERE, "generate.jsonl"), "w", encoding="utf-8") as f:
    for p in PROMPTS:
        r = post("/completion", {"prompt": p, "n_predict": 24, "temperature": 0, "cache_prompt": False,
                                 "samplers": ["top_k"], "top_k": 1, "return_tokens": True})
        f.write(json.dumps({"prompt": p, "n_predict": 24, "content": r["content"], "tokens": r.get("tokens")},
                           ensure_ascii=False) + "\n")
print("recorded", len(texts), "tokenizations,", len(PAIRS), "log-likelihoods,", len(PROMPTS), "generations")
