#!/usr/bin/python3
"""Build testdata/audit/mmlu_audit.csv.gz from the shared MMLU test split.

The paper's audit 4 ("MMLU, stand-in label"): one row per item, the label
a stand-in (is the gold answer option A?), the source tag the subject (57).
Measurements are simple length counts (whitespace tokens), since no model is
scored: question tokens, total option tokens, longest option tokens, and the
number of options.
"""
import csv, gzip, os

src = "/work/shared/data/mmlu_test/mmlu_test.csv.gz"
here = os.path.dirname(os.path.abspath(__file__))
with gzip.open(src, "rt", newline="") as f, \
     gzip.open(os.path.join(here, "mmlu_audit.csv.gz"), "wt", newline="", compresslevel=9) as out:
    w = csv.writer(out)
    w.writerow(["subject", "gold_is_a", "question_tokens", "option_tokens", "longest_option_tokens", "options"])
    for r in csv.DictReader(f):
        opts = [r[c] for c in "ABCD"]
        ntok = [len(o.split()) for o in opts]
        w.writerow([r["subject"], "yes" if r["answer"] == "A" else "no",
                    len(r["question"].split()), sum(ntok), max(ntok), len(opts)])
