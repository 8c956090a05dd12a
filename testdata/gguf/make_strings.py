#!/usr/bin/env python3
"""Deterministic tokenizer test strings drawn from /work/shared/data (Malay, English,
Indonesian, Tagalog) plus synthetic digits, punctuation, emoji, whitespace runs and
special-token texts. Writes strings.jsonl next to this script (one {"text": ...} a line)."""
import gzip, json, os, random

DATA = "/work/shared/data"
rng = random.Random(20261129)

def strings_of(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings_of(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings_of(v)

def lines(path, limit=400):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= limit:
                break
            yield json.loads(line)

FILES = ["belebele_ms_en/ms_belebele.jsonl", "belebele_ms_en/en_belebele.jsonl",
         "nli_indonli/id_indonli_lay_1000sample.jsonl", "global_mmlu_ms/global_mmlu_ms_dev.jsonl.gz",
         "nlg_translation/flores200_devtest_en_to_ind_Latn.jsonl", "safety_seahelm_safeguard/ms_general.jsonl",
         "cultural_kalahi_tl/tl_kalahi_mc.jsonl", "sea_ifeval/id_sea_ifeval.jsonl", "mt_bench/question.jsonl"]

out = []
for name in FILES:
    pool = []
    for rec in lines(os.path.join(DATA, name)):
        pool += [s for s in strings_of(rec) if len(s) > 1]
    pool = sorted(set(pool))
    rng.shuffle(pool)
    for s in pool[:90]:
        # a whole field, a word-boundary slice, or a slice cut mid-word
        k = rng.random()
        if k < 0.4 or len(s) < 40:
            out.append(s[:600])
        elif k < 0.7:
            words = s.split(" ")
            a = rng.randrange(len(words))
            out.append(" ".join(words[a:a + rng.randint(1, 12)]))
        else:
            a = rng.randrange(len(s) - 10)
            out.append(s[a:a + rng.randint(1, 60)])

digits = ["0", "7", "42", "3.14159", "1,000,000", "2026-11-29", "RM12.50", "+60 12-345 6789", "0x1F", "1e-5",
          "100%", "12:30", "9999999999", "1/2", "Rp 15.000", "½", "٣", "١٢٣"]
punct = [".", ",", "!?", "...", "—", "–", "«»", "“quoted”", "'single'", "(brackets)", "[x]", "{y}", "a-b_c",
         "@user #tag", "$&*^%", "\\", "/path/to/file.txt", "https://example.com/a?b=c", "::", ";-)", "¿Qué?", "§ 3"]
emoji = ["😀", "👍🏽", "🇲🇾", "👨‍👩‍👧", "❤️", "🙏 terima kasih", "ok 👌", "🤖🤖🤖", "☕️ pagi", "✓", "★☆"]
space = [" ", "  ", "   x", "x   ", "\t", "\n", "\n\n", " \n ", "a  b", "a\tb", "a\n\nb", "  lead", "trail  ",
         "\r\n", "\u00a0nbsp", "\u3000ideographic", "mixed \t\n spaces", "      "]
special = ["<s>", "</s>", "<unk>", "<s>hello", "a</s>b", "<s><s>", " <s> x", "<0x41>", "▁", "▁▁a"]
other = ["Bahasa Melayu ialah bahasa rasmi Malaysia.", "Saya suka makan nasi lemak.", "Apa khabar?",
         "Selamat pagi, cikgu!", "Indonesia adalah negara kepulauan.", "Question: What is the capital of France?\nAnswer:",
         "Question: What is 2 plus 3?\nAnswer: 5", "The quick brown fox jumps over the lazy dog.", "naïve café résumé",
         "Ελληνικά", "Русский текст", "中文测试", "日本語のテキスト", "한국어", "ภาษาไทย", "Tiếng Việt có dấu",
         "العربية", "עברית", "हिन्दी", "தமிழ்"]
synth = digits + punct + emoji + space + special + other
out += synth
# combinations of the synthetic pieces with words
words = [w for s in out[:300] for w in s.split()][:2000]
while len(out) < 1150:
    parts = [rng.choice(synth) if rng.random() < 0.4 else rng.choice(words) for _ in range(rng.randint(1, 6))]
    sep = rng.choice([" ", "", "  ", "\n", " \t"])
    out.append(sep.join(parts))

seen, uniq = set(), []
for s in out:
    if s not in seen:
        seen.add(s)
        uniq.append(s)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "strings.jsonl"), "w", encoding="utf-8") as f:
    for s in uniq:
        f.write(json.dumps({"text": s}, ensure_ascii=False) + "\n")
print(len(uniq), "strings")
