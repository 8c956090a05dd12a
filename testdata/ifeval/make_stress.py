"""Writes stress_golden.jsonl: seeded random texts built from tricky pieces
(abbreviations, ellipses, quotes, markdown, non-ASCII letters and spaces),
each with NLTK's sentences and words, the \\w+ word count, and the verdict of
every official checker (official_checks.py) under fixed kwargs.

  /usr/bin/python3 testdata/ifeval/make_stress.py
"""
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_checks
import pyref

PIECES = [
    ".", "...", ". . .", "..", "!", "?", "?!", "--", "-", ",", ";", ":", "'", '"', "``", "''", "(", ")", "[", "]",
    "{", "}", "<", ">", "<<", ">>", "*", "**", "***", "******", "#", "@", "&", "$", "%", "\n", "\n\n", " ", "  ", "\t",
    "\u00a0", "\u2003", "\u200b", "Mr.", "Dr.", "U.S.", "e.g.", "i.e.", "etc.", "Inc.", "No.", "vs.", "a.m.", "J.",
    "3.5", "1,000", "-4", "42.", "1.", "2)", "cannot", "gonna", "wanna", "gimme", "'tis", "'twas", "don't", "I'm",
    "they'll", "O'Neil", "rock'n'roll", "«", "»", "“", "”", "‘", "’", "„", "…", "Hello", "WORLD", "the", "The",
    "river", "Power", "powerful", "Section", "SECTION", "Section 2", "P.S.", "p.s.", "P.P.S", "My answer is yes.",
    "<<Title>>", "[name]", "* item", "- item", "*bold*", "**strong**", "ünïcödé", "Straße", "İstanbul", "ǅemal",
    "ΣΟΦΙΑ", "日本語", "ภาษาไทย", "हिन्दी", "é", "e\u0301", "Ⅻ", "½", "٣", "_under_", "CAPS", "Any other questions?",
    '"quoted."', "(paren.)", "http://x.org/a?b=1", "me@mail.com", "{\"a\": 1}", "```json", "```", "NaN", "ALL CAPS HERE",
    "selamat pagi", "terima kasih", "this is english text", "Ceci est français", "\r", "\x0b", "\x1c",
]

CHECKS = [
    ("keywords:existence", {"keywords": ["river", "the"]}),
    ("keywords:frequency", {"keyword": "the", "frequency": 2, "relation": "at least"}),
    ("keywords:forbidden_words", {"forbidden_words": ["power", "hello"]}),
    ("keywords:forbidden_words", {"forbidden_words": ["ünïcödé"]}),
    ("keywords:letter_frequency", {"letter": "e", "let_frequency": 3, "let_relation": "less than"}),
    ("language:response_language", {"language": "en"}),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": "less than"}),
    ("length_constraints:number_sentences", {"num_sentences": 5, "relation": "at least"}),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}),
    ("length_constraints:number_words", {"num_words": 12, "relation": "at least"}),
    ("length_constraints:nth_paragraph_first_word", {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "hello"}),
    ("detectable_content:number_placeholders", {"num_placeholders": 1}),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}),
    ("detectable_format:number_bullet_lists", {"num_bullets": 1}),
    ("detectable_format:constrained_response", {}),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}),
    ("detectable_format:multiple_sections", {"section_spliter": "Section", "num_sections": 1}),
    ("detectable_format:json_format", {}),
    ("detectable_format:title", {}),
    ("combination:two_responses", {}),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Hello"}),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}),
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"}),
    ("change_case:english_capital", {}),
    ("change_case:english_lowercase", {}),
    ("punctuation:no_comma", {}),
    ("startend:quotation", {}),
]

rng = random.Random(20231107)
rows = []
for i in range(1500):
    n = rng.randint(1, 30)
    parts = []
    for _ in range(n):
        parts.append(rng.choice(PIECES))
        if rng.random() < 0.6:
            parts.append(" ")
    text = "".join(parts)
    ids = [c[0] for c in CHECKS]
    inp = {"instruction_id_list": ids, "kwargs": [c[1] for c in CHECKS]}
    rows.append({
        "text": text,
        "sentences": pyref.sentences(text),
        "words": pyref.word_tokenize(text),
        "nwords": len(re.findall(r"\w+", text)),
        "strict": official_checks.strict(inp, text),
        "loose": official_checks.loose(inp, text),
    })
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stress_golden.jsonl"), "w", encoding="utf-8") as f:
    f.write(json.dumps({"checks": [[c[0], c[1]] for c in CHECKS]}) + "\n")
    for r in rows:
        f.write(json.dumps(r, ensure_ascii=False) + "\n")
print(len(rows), "rows")
