#!/usr/bin/python3
"""Independent reference for scorers/checks/probes.Shuffle permutations.

Re-implements, from their definitions, Go's math/rand/v2 PCG (128-bit LCG,
DXSM output), FNV-1a 64, the stream derivation (seed, fnv64a(probe + NUL + id))
and the multiply-shift Fisher-Yates with identity redraw, and writes
probes_shuffle_golden.json, which scorers/checks/probes/probes_test.go compares against.
Run: /usr/bin/python3 testdata/dedup/probes_shuffle_reference.py
"""
import json, os

M64 = (1 << 64) - 1
MUL = (2549297995355413924 << 64) | 4865540595714422341
INC = (6364136223846793005 << 64) | 1442695040888963407
CHEAP = 0xda942042e4dd58b5


class PCG:
    def __init__(self, hi, lo):
        self.state = (hi << 64) | lo

    def uint64(self):
        self.state = (self.state * MUL + INC) & ((1 << 128) - 1)
        hi, lo = self.state >> 64, self.state & M64
        hi ^= hi >> 32
        hi = (hi * CHEAP) & M64
        hi ^= hi >> 48
        hi = (hi * (lo | 1)) & M64
        return hi


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & M64
    return h


def shuffle(item_id, n, gold, seed):
    r = PCG(seed, fnv1a64(b"shuffle" + b"\0" + item_id.encode()))
    while True:
        perm = list(range(n))
        for i in range(n - 1, 0, -1):
            j = (r.uint64() * (i + 1)) >> 64
            perm[i], perm[j] = perm[j], perm[i]
        if perm != list(range(n)):
            break
    return perm, perm.index(gold)


cases = []
for item_id, n, gold, seed in [
    ("global_mmlu/17", 4, 0, 1234),
    ("global_mmlu/17", 4, 0, 1235),
    ("belebele/zsm_Latn/3", 4, 2, 0),
    ("x", 2, 1, 7),
    ("tatabahasa/99", 5, 4, 2026),
    ("nli/1", 3, 0, 18446744073709551615),
]:
    perm, new_gold = shuffle(item_id, n, gold, seed)
    cases.append({"id": item_id, "n": n, "gold": gold, "seed": seed, "perm": perm, "new_gold": new_gold})

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probes_shuffle_golden.json")
with open(out, "w") as f:
    json.dump(cases, f, indent=1)
    f.write("\n")
print(json.dumps(cases))
