#!/usr/bin/env python3
"""Writes sea_text.jsonl: Malay, Jawi, Thai, Vietnamese, Tamil and Chinese
texts for the tokenizer comparison with llama.cpp (TestTokenizeSEAMatchesLlamaCpp).

Every text but the Jawi ones is cut from the project's shared data
(../shared/data, whose SOURCE.txt files name the upstream datasets): Malay
from Belebele (ms), the others from paragraphs of IFEval's GPT-4 responses and
prompts and SEA-HELM safeguard rows that are in those scripts. The shared data
holds no Malay in Jawi script, so two Jawi sentences written for this test
stand in (source "written"), beside Arabic-script paragraphs from IFEval.
Run from the repository root: python3 testdata/gguf/make_sea_text.py
"""
import json, re

data = "../shared/data/"
scripts = {
    "th": re.compile("[\u0e00-\u0e7f]"),
    "ta": re.compile("[\u0b80-\u0bff]"),
    "vi": re.compile("[ơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđĐ]"),
    "ar": re.compile("[\u0600-\u06ff]"),
    "zh": re.compile("[\u4e00-\u9fff]"),
}
out = []
for i, line in enumerate(open(data + "belebele_ms_en/ms_belebele.jsonl", encoding="utf-8")):
    if i >= 4:
        break
    row = json.loads(line)
    out.append({"lang": "ms", "source": "belebele_ms_en/ms_belebele.jsonl", "text": row["prompts"][0]["text"]})

def paragraphs(path, fields):
    for line in open(data + path, encoding="utf-8"):
        row = json.loads(line)
        for f in fields:
            v = row.get(f)
            if isinstance(v, list):
                v = " ".join(p.get("text", "") for p in v if isinstance(p, dict))
            if isinstance(v, str):
                for p in v.split("\n"):
                    yield p

counts = {k: 0 for k in scripts}
want = {"th": 5, "ta": 5, "vi": 5, "ar": 3, "zh": 4}
for path, fields in [("ifeval/responses_gpt4_aligned.jsonl", ["prompt", "response"]),
                     ("safety_seahelm_safeguard/ms_general.jsonl", ["prompts", "responses"])]:
    for p in paragraphs(path, fields):
        for lang, rx in scripts.items():
            if counts[lang] < want[lang] and len(rx.findall(p)) >= (3 if lang == "zh" else 10) and len(p) < 1500:
                out.append({"lang": lang, "source": path, "text": p})
                counts[lang] += 1
                break
for s in ["سلامت ڤاڬي، اڤ خبر؟ ساي ترچاري کدای بوکو د کوالا لومڤور.",
          "بهاس ملايو دتوليس دڠن توليسن جاوي سجق زمان برزمان، دان ماسيه دݢوناکن هاري اين."]:
    out.append({"lang": "jawi", "source": "written", "text": s})
with open("testdata/gguf/sea_text.jsonl", "w", encoding="utf-8") as f:
    for r in out:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print({k: sum(1 for r in out if r["lang"] == k) for k in ["ms", "jawi", *scripts]})
