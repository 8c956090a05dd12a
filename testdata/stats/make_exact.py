#!/usr/bin/python3
"""Writes exact.json: exact rank-correlation p-values for n = 3..9, with
and without ties, for stats.SpearmanExact and stats.KendallExactTies.

Run with Debian's python (numpy 1.24, scipy 1.10; apt-get install python3-scipy):
    /usr/bin/python3 testdata/stats/make_exact.py > testdata/stats/exact.json

Spearman: scipy.stats.permutation_test over all n! orderings of x against
y (data=(x,), permutation_type='pairings', the form scipy's documentation
gives for correlations), with spearmanr's statistic. Kendall without ties:
scipy.stats.kendalltau(method='exact'); with ties (which that method
refuses) permutation_test over all orderings with kendalltau's tau-b.
Both statistics are vectorized so that n = 9 (362,880 orderings) takes
seconds; n = 9 cases are computed two-sided only.
"""
import json

import numpy as np
import scipy
from scipy import stats

rng = np.random.default_rng(20261204)


def spearman_stat(y):
    ry = stats.rankdata(y)
    ry = ry - ry.mean()

    def stat(x, axis=-1):
        rx = stats.rankdata(x, axis=axis)
        rx = rx - rx.mean(axis=axis, keepdims=True)
        return (rx * ry).sum(axis=axis) / np.sqrt((rx * rx).sum(axis=axis) * (ry * ry).sum())
    return stat


def kendall_stat(y):
    y = np.asarray(y)
    sy = np.sign(y[:, None] - y[None, :])

    def stat(x, axis=-1):
        x = np.moveaxis(x, axis, -1)
        sx = np.sign(x[..., :, None] - x[..., None, :])
        return (sx * sy).sum(axis=(-2, -1)) / np.sqrt((sx * sx).sum(axis=(-2, -1)) * (sy * sy).sum())
    return stat


def perm_p(x, stat, alt):
    r = stats.permutation_test((np.asarray(x),), stat, permutation_type="pairings", vectorized=True,
                               n_resamples=np.inf, alternative=alt, batch=5040)
    return float(r.statistic), float(r.pvalue)


def grades(n, k):
    # A draw with at least two values (a constant has no correlation).
    while True:
        g = rng.integers(0, k, size=n)
        if len(set(g)) > 1:
            return g


ALTS = ("two-sided", "less", "greater")
cases = []


def add(name, x, y):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    n = len(x)
    ties = len(set(x)) < n or len(set(y)) < n
    alts = ALTS if n < 9 else ALTS[:1]
    case = {"name": name, "x": x, "y": y, "ties": ties, "spearman_p": {}, "kendall_p": {}}
    case["spearman"] = float(stats.spearmanr(x, y).statistic)
    case["kendall"] = float(stats.kendalltau(x, y).statistic)
    for alt in alts:
        rho, p = perm_p(x, spearman_stat(y), alt)
        assert abs(rho - case["spearman"]) < 1e-12, (name, rho, case["spearman"])
        case["spearman_p"][alt] = p
        if ties:
            tau, p = perm_p(x, kendall_stat(y), alt)
            assert abs(tau - case["kendall"]) < 1e-12, (name, tau, case["kendall"])
        else:
            p = float(stats.kendalltau(x, y, method="exact", alternative=alt).pvalue)
        case["kendall_p"][alt] = p
    cases.append(case)


for n in range(3, 10):
    # Without ties: a noisy monotone relation, and one at random.
    x = rng.permutation(n) + 1
    add(f"related_n{n}", x, np.argsort(np.argsort(x + rng.normal(scale=n / 3, size=n))) + 1)
    if n < 9:
        add(f"random_n{n}", rng.permutation(n) + 1, rng.permutation(n) + 1)
    # With ties: grades on a small scale, on one side and on both.
    add(f"ties_both_n{n}", grades(n, 3), grades(n, 4))
    if n < 9:
        add(f"ties_one_n{n}", rng.permutation(n) + 1, grades(n, 3))
add("perfect_n3", [1, 2, 3], [10, 20, 30])
add("perfect_n4", [1, 2, 3, 4], [4, 3, 2, 1])
add("perfect_n6", [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6])
add("one_pair_tied_n5", [1, 2, 3, 4, 5], [1, 2, 2, 4, 5])
add("all_but_two_tied_n7", [1, 2, 3, 4, 5, 6, 7], [0, 0, 0, 0, 0, 1, 1])

out = {"generator": "testdata/stats/make_exact.py",
       "versions": {"numpy": np.__version__, "scipy": scipy.__version__},
       "cases": cases}
json.dump(out, __import__("sys").stdout, indent=1)
print()
