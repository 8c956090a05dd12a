#!/usr/bin/python3
"""Builds the chrF golden file testdata/chrf/golden.jsonl.

sacrebleu cannot be installed here (no PyPI, not in Debian), so this script is
an independent, deliberately plain re-statement of sacrebleu 2.x's CHRF
(metrics/chrf.py + metrics/helpers.py) with collections.Counter, written from
reading that code. Before it writes anything it checks itself against
sacrebleu's own published test vectors (test/test_chrf.py and the README
example), so a transcription slip fails loudly here instead of silently
agreeing with the Go code.

The segment pairs are real FLORES-200 devtest sentences (SEA-HELM en->ind_Latn
labels, see ../nlg/SOURCE.txt) with deterministic perturbations as
hypotheses, so that scores are spread out rather than near 0 or 100.

Run: /usr/bin/python3 testdata/chrf/make_golden.py   (from the repository root)
"""
import json
import os
import random
from collections import Counter

PUNCT = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def words(sent):
    out = []
    for w in sent.split():
        if len(w) == 1:
            out.append(w)
        elif w[-1] in PUNCT:
            out += [w[:-1], w[-1]]
        elif w[0] in PUNCT:
            out += [w[0], w[1:]]
        else:
            out.append(w)
    return out


def ngram_counters(sent, nc, nw, keep_space):
    line = sent if keep_space else ''.join(sent.split())
    counters = [Counter(line[i:i + n] for i in range(len(line) - n + 1)) for n in range(1, nc + 1)]
    toks = words(sent)
    for n in range(1, nw + 1):
        counters.append(Counter(' '.join(toks[i:i + n]) for i in range(len(toks) - n + 1)))
    return counters


def fscore(stats, order, beta, eps_smoothing):
    eps = 1e-16
    factor = beta ** 2
    score, ap, ar, eff = 0.0, 0.0, 0.0, 0
    for i in range(order):
        h, r, m = stats[3 * i:3 * i + 3]
        p = m / h if h > 0 else eps
        c = m / r if r > 0 else eps
        d = factor * p + c
        score += ((1 + factor) * p * c / d) if d > 0 else eps
        if h > 0 and r > 0:
            ap += p
            ar += c
            eff += 1
    if eps_smoothing:
        return 100 * score / order
    if eff == 0:
        return 0.0
    ap /= eff
    ar /= eff
    if ap + ar:
        s = (1 + factor) * ap * ar
        s /= (factor * ap) + ar
        return 100 * s
    return 0.0


def segment_stats(hyp, refs, nc, nw, beta, lc, keep_space, eps_smoothing):
    if lc:
        hyp = hyp.lower()
        refs = [r.lower() for r in refs]
    hc = ngram_counters(hyp, nc, nw, keep_space)
    best, best_f = None, -1.0
    for ref in refs:
        rc = ngram_counters(ref, nc, nw, keep_space)
        st = []
        for h, r in zip(hc, rc):
            inter = h & r
            st += [sum(h.values()) if r else 0, sum(r.values()), sum(inter.values())]
        f = fscore(st, nc + nw, beta, eps_smoothing)
        if f > best_f:
            best, best_f = st, f
    return best


def corpus(hyps, ref_streams, nc=6, nw=0, beta=2, lc=False, keep_space=False, eps_smoothing=False):
    total = [0] * (3 * (nc + nw))
    for i, hyp in enumerate(hyps):
        refs = [s[i] for s in ref_streams if s[i] != '']
        st = segment_stats(hyp, refs, nc, nw, beta, lc, keep_space, eps_smoothing)
        total = [a + b for a, b in zip(total, st)]
    return fscore(total, nc + nw, beta, eps_smoothing), total


def self_check():
    # sacrebleu test/test_chrf.py: eps smoothing, beta 3, chrF.
    eps_cases = [
        (["abcdefg"], ["hijklmnop"], 0.0), (["a"], ["b"], 0.0), ([""], ["b"], 0.0),
        ([""], ["ref"], 0.0), ([""], ["reference"], 0.0), (["aa"], ["ab"], 8.3333),
        (["a", "b"], ["a", "c"], 8.3333), (["a"], ["a"], 16.6667), (["a b c"], ["a b c"], 50.0),
        (["a b c"], ["abc"], 50.0),
        ([" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."],
         ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."], 63.361730),
        ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
         ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 64.1302698),
        (["Niemand hat die Absicht, eine Mauer zu errichten"], ["Niemand hat die Absicht, eine Mauer zu errichten"], 100.0),
    ]
    for h, r, want in eps_cases:
        got, _ = corpus(h, [r], 6, 0, 3, eps_smoothing=True)
        assert abs(got - want) < 1e-4, (h, r, got, want)
    eff_cases = [(["a"], ["a"], 100.0), ([""], ["reference"], 0.0), (["a b c"], ["a b c"], 100.0),
                 (["a b c"], ["abc"], 100.0), ([""], ["c"], 0.0), (["a", "b"], ["a", "c"], 50.0), (["aa"], ["ab"], 25.0)]
    for h, r, want in eff_cases:
        got, _ = corpus(h, [r], 6, 0, 3)
        assert abs(got - want) < 1e-4, (h, r, got, want)
    ws_cases = [
        (["Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."],
         ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 67.3481606),
        (["risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."],
         ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."], 65.2414427),
    ]
    for h, r, want in ws_cases:
        got, _ = corpus(h, [r], 6, 0, 3, keep_space=True)
        assert abs(got - want) < 1e-4, (h, r, got, want)
    sent_cases = [
        ('Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.',
         ['Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.'], 39.14078509),
        ('Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.',
         ['A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři.'], 31.22557079),
        ('Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.',
         ['Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.'], 57.15704367),
    ]
    for h, r, want in sent_cases:
        got, _ = corpus([h], [[x] for x in r], eps_smoothing=True)
        assert abs(got - want) < 1e-4, (h, got, want)
    # README: CHRF() on two reference streams prints "chrF2 = 59.73".
    refs = [['The dog bit the man.', 'It was not unexpected.', 'The man bit him first.'],
            ['The dog had bit the man.', 'No one was surprised.', 'The man had bitten the dog.']]
    sys_ = ['The dog bit the man.', "It wasn't surprising.", 'The man had just bitten him.']
    got, _ = corpus(sys_, refs)
    assert f'{got:.2f}' == '59.73', got
    # sacrebleu through the Hugging Face "chrf" metric (its documented
    # examples): chrF, chrF++ and lowercased chrF++, the only published
    # word-order-2 values found.
    hf_h = ["The relationship between cats and dogs is not exactly friendly.",
            "a good bookshop is just a genteel black hole that knows how to read."]
    hf_r = [["The relationship between dogs and cats is not exactly friendly.",
             "A good bookshop is just a genteel Black Hole that knows how to read."]]
    for kw, want in ((dict(), 84.64214891738334), (dict(nw=2), 82.87263732906315),
                     (dict(nw=2, lc=True), 92.12853119829202)):
        got, _ = corpus(hf_h, hf_r, **kw)
        assert abs(got - want) < 1e-9, (kw, got, want)


def perturb(rng, s):
    toks = s.split()
    out = []
    for t in toks:
        x = rng.random()
        if x < 0.08:
            continue  # drop
        if x < 0.14:
            t = t.upper()
        elif x < 0.20:
            t = t.lower()
        elif x < 0.24 and len(t) > 3:
            k = rng.randrange(len(t))
            t = t[:k] + t[k + 1:]  # typo
        out.append(t)
        if rng.random() < 0.05:
            out.append(rng.choice([',', 'yang', '(', ')', '"', '-']))
    if len(out) > 3 and rng.random() < 0.5:
        k = rng.randrange(len(out) - 1)
        out[k], out[k + 1] = out[k + 1], out[k]
    sep = rng.choice([' ', ' ', ' ', '  ', ' \u00a0'])
    return sep.join(out)


# Characters that exercise the edge cases: Python-only whitespace (U+001C..F),
# Unicode spaces, ASCII punctuation at word edges, Greek capital sigma (final
# form when lowered), dotted capital I (lowers to two code points), Kelvin and
# Ohm signs, combining accents, astral characters.
RANDOM_POOL = (list('abcAB Σ.,!?()"\'-') + [' ', ' ', ' ', '\t', '\x1c', '\x1f', '\xa0', '\u2003', '\u3000', '\x85',
               'Σ', 'Α', 'σ', 'İ', 'I', '\u0301', '\u212a', '\u2126', 'ß', '\u1e9e', 'é', 'É', '日', '本', '\U0001F600', '«', '»'])


def random_pairs(n):
    rng = random.Random(7)
    def text():
        return ''.join(rng.choice(RANDOM_POOL) for _ in range(rng.randrange(0, 25)))
    pairs = []
    for _ in range(n):
        refs = [text() or 'x' for _ in range(rng.choice([1, 1, 2, 3]))]
        hyp = text()
        if rng.random() < 0.6:  # a close variant of a reference, so matches happen
            hyp = list(rng.choice(refs))
            for _ in range(rng.randrange(0, 4)):
                k = rng.randrange(len(hyp) + 1)
                hyp[k:k + rng.randrange(0, 2)] = [rng.choice(RANDOM_POOL)]
            hyp = ''.join(hyp)
        pairs.append((hyp, refs))
    return pairs


def write_random(root):
    configs = [
        dict(name='chrf++', nc=6, nw=2, beta=2),
        dict(name='chrf++_lc', nc=6, nw=2, beta=2, lc=True),
        dict(name='chrf_space_lc', nc=6, nw=0, beta=2, lc=True, keep_space=True),
        dict(name='chrf++_eps_beta3', nc=6, nw=2, beta=3, eps_smoothing=True),
    ]
    with open(os.path.join(root, 'golden_random.jsonl'), 'w', encoding='utf-8') as out:
        for hyp, refs in random_pairs(200):
            rec = {'hyp': hyp, 'refs': refs, 'scores': {}}
            for cfg in configs:
                kw = {k: v for k, v in cfg.items() if k != 'name'}
                score, stats = corpus([hyp], [[r] for r in refs], **kw)
                rec['scores'][cfg['name']] = {'config': cfg, 'score': score, 'stats': stats}
            out.write(json.dumps(rec, ensure_ascii=False, separators=(',', ':')) + '\n')


def main():
    self_check()
    root = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(root, '..', 'nlg', 'flores200_devtest_en_to_ind_Latn.sample.jsonl')
    refs = [json.loads(l)['label'] for l in open(src, encoding='utf-8')]
    rng = random.Random(20240601)
    hyps = [perturb(rng, r) for r in refs]
    refs2 = [perturb(rng, r) for r in refs]
    hyps[3] = ''  # an empty hypothesis scores 0 but keeps its reference counts
    refs2[5] = ''  # a missing second reference: nrefs:var
    configs = [
        dict(name='chrf', nc=6, nw=0, beta=2),
        dict(name='chrf++', nc=6, nw=2, beta=2),
        dict(name='chrf++_lc', nc=6, nw=2, beta=2, lc=True),
        dict(name='chrf_space', nc=6, nw=0, beta=2, keep_space=True),
        dict(name='chrf++_eps', nc=6, nw=2, beta=2, eps_smoothing=True),
        dict(name='chrf++_beta1_nw3', nc=4, nw=3, beta=1),
    ]
    with open(os.path.join(root, 'golden.jsonl'), 'w', encoding='utf-8') as out:
        for cfg in configs:
            kw = {k: v for k, v in cfg.items() if k != 'name'}
            for streams, tag in (([refs], '1ref'), ([refs, refs2], '2ref')):
                score, stats = corpus(hyps, streams, **kw)
                sent = [corpus([h], [[s[i]] for s in streams], **kw)[0] for i, h in enumerate(hyps)]
                out.write(json.dumps({'config': cfg, 'refs': tag, 'corpus': score, 'stats': stats,
                                      'sentence': sent}, ensure_ascii=False) + '\n')
    with open(os.path.join(root, 'hyps.txt'), 'w', encoding='utf-8') as f:
        f.write(''.join(h + '\n' for h in hyps))
    with open(os.path.join(root, 'refs.txt'), 'w', encoding='utf-8') as f:
        f.write(''.join(r + '\n' for r in refs))
    with open(os.path.join(root, 'refs2.txt'), 'w', encoding='utf-8') as f:
        f.write(''.join(r + '\n' for r in refs2))
    write_random(root)
    print('self-check passed; wrote golden.jsonl for', len(hyps), 'segments and golden_random.jsonl')


if __name__ == '__main__':
    main()
