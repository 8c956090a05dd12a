"""Packs python-langdetect's language profiles and normalisation tables into
scorers/ifeval/langdetect_data.json.gz, the data of the Go langdetect port.

Source: Debian python3-langdetect 1.0.9 (/usr/lib/python3/dist-packages/langdetect,
Apache-2.0, itself a port of Nakatani Shuyo's language-detection profiles).
Run with Debian's python: /usr/bin/python3 testdata/ifeval/make_langdetect_data.py
"""
import gzip, json, os, sys

import langdetect
from langdetect.utils import messages

base = os.path.dirname(langdetect.__file__)
profiles = {}
for name in sorted(os.listdir(os.path.join(base, "profiles"))):
    with open(os.path.join(base, "profiles", name), encoding="utf-8") as f:
        p = json.load(f)
    profiles[p["name"]] = {"freq": p["freq"], "n_words": p["n_words"]}
keys = ["NGram.LATIN1_EXCLUDE", "TO_NORMALIZE_VI_CHARS", "DMARK_CLASS"]
keys += ["NORMALIZED_VI_CHARS_%s" % m for m in ("0300", "0301", "0303", "0309", "0323")]
msgs = {k: messages.get_string(k) for k in keys}
with open(os.path.join(base, "utils", "messages.properties")) as f:
    kanji = [l.split("=", 1)[0] for l in f if l.startswith("NGram.KANJI_")]
from langdetect.utils.ngram import NGram
cjk = ["".join(c) for c in NGram.CJK_CLASS]
out = {"langs": sorted(profiles), "profiles": profiles, "messages": msgs, "cjk_classes": cjk}
dst = sys.argv[1] if len(sys.argv) > 1 else "scorers/ifeval/langdetect_data.json.gz"
with gzip.GzipFile(dst, "wb", mtime=0) as f:
    f.write(json.dumps(out, ensure_ascii=False, sort_keys=True).encode("utf-8"))
print(dst, len(profiles), "profiles")
