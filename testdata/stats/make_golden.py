#!/usr/bin/python3
"""Writes golden.json: reference values for the Go tests in stats/.

Run with Debian's python (numpy 1.24, scipy 1.10, scikit-learn 1.2):
    /usr/bin/python3 testdata/stats/make_golden.py > testdata/stats/golden.json
"""
import itertools
import json
import sys

import numpy as np
import scipy
import sklearn
from scipy import optimize, stats
from sklearn.metrics import cohen_kappa_score

rng = np.random.default_rng(20261129)
out = {"generator": "testdata/stats/make_golden.py",
       "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__}}


def num(v):
    v = float(v)
    return None if np.isnan(v) else v


# Rank correlations: no ties, ties, integer grades, sizes around the exact/asymptotic switch.
corr = []
def add_corr(name, x, y):
    x = [float(v) for v in x]
    y = [float(v) for v in y]
    s = stats.spearmanr(x, y)
    k = stats.kendalltau(x, y)
    case = {"name": name, "x": x, "y": y, "spearman": num(s.statistic), "spearman_p": num(s.pvalue),
            "kendall": num(k.statistic), "kendall_p": num(k.pvalue)}
    for alt in ("less", "greater"):
        case["spearman_p_" + alt] = num(stats.spearmanr(x, y, alternative=alt).pvalue)
        case["kendall_p_" + alt] = num(stats.kendalltau(x, y, alternative=alt).pvalue)
    if len(set(x)) == len(x) and len(set(y)) == len(y):
        case["kendall_p_asymptotic"] = num(stats.kendalltau(x, y, method="asymptotic").pvalue)
        case["kendall_p_exact"] = num(stats.kendalltau(x, y, method="exact").pvalue)
    corr.append(case)

for n in (3, 4, 5, 7, 10, 20, 33, 34, 50, 120, 200):
    x = rng.normal(size=n)
    add_corr(f"normal_n{n}", x, 0.5 * x + rng.normal(size=n))
for n in (5, 12, 40, 300):
    add_corr(f"grades_n{n}", rng.integers(0, 5, size=n), rng.integers(0, 4, size=n))
add_corr("ties_one_side", [1, 2, 3, 4, 5, 6, 7, 8], [1, 1, 2, 2, 3, 3, 4, 4])
add_corr("negative", [1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 1, 2])
# test_against_R_lt_171b/c inputs (np.random.seed(0)), forced exact.
np.random.seed(0)
x = np.random.rand(100); y = np.random.rand(100)
add_corr("R_lt_171b", x, y)
# The n=500 draws of scipy's test_normal_draws / test_kendalltau (seed 7546);
# scipy's published values: rho 0.28659685838743354, p 6.579862219051161e-11,
# tau 0.19291382765531062, p 1.1337095377742629e-10.
np.random.seed(7546)
x = np.array([np.random.normal(loc=1, scale=1, size=500),
              np.random.normal(loc=1, scale=1, size=500)])
x = np.dot(np.linalg.cholesky([[1.0, 0.3], [0.3, 1.0]]), x)
add_corr("scipy_normal_draws_7546", x[0], x[1])
add_corr("near_edge_n60", np.arange(60), np.r_[np.arange(58), 59, 58])
out["correlations"] = corr

# Exact permutation p-values (every ordering enumerated) for the Monte-Carlo tests.
def exact_spearman_perm_p(x, y):
    rho = stats.spearmanr(x, y).statistic
    hits = total = 0
    for perm in itertools.permutations(y):
        r = stats.spearmanr(x, perm).statistic
        hits += abs(r) >= abs(rho) * (1 - 1e-12)
        total += 1
    return rho, hits / total

perm = []
for n in (5, 6, 7):
    x = list(rng.normal(size=n)); y = list(np.array(x) + rng.normal(size=n))
    rho, p = exact_spearman_perm_p(x, y)
    perm.append({"x": x, "y": y, "rho": rho, "p_exact": p})
out["spearman_permutation"] = perm

def exact_signflip_p(d):
    obs = abs(np.mean(d))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        hits += abs(np.mean(np.array(signs) * d)) >= obs * (1 - 1e-12)
    return hits / 2 ** len(d)

paired = []
for n in (8, 12):
    a = list(rng.uniform(size=n)); b = list(np.array(a) - 0.15 + rng.normal(scale=0.2, size=n))
    paired.append({"a": a, "b": b, "diff": float(np.mean(np.array(a) - np.array(b))),
                   "p_exact": exact_signflip_p(np.array(a) - np.array(b))})
out["paired_permutation"] = paired

# Quantiles, numpy's default (linear, Hyndman-Fan type 7).
qs = [0, 0.01, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 0.99, 1]
quant = []
for n in (1, 2, 3, 10, 101):
    x = sorted(float(v) for v in rng.normal(size=n))
    quant.append({"sorted": x, "q": qs, "want": [float(v) for v in np.quantile(x, qs)]})
out["quantiles"] = quant

# Cohen's kappa.
kappa = []
for n, k in ((30, 2), (100, 3), (250, 5)):
    a = rng.integers(0, k, size=n)
    b = np.where(rng.uniform(size=n) < 0.6, a, rng.integers(0, k, size=n))
    case = {"a": [int(v) for v in a], "b": [int(v) for v in b]}
    for w in (None, "linear", "quadratic"):
        case[str(w).lower()] = float(cohen_kappa_score(a, b, weights=w))
    kappa.append(case)
out["kappa"] = kappa

# Bradley-Terry: maximum likelihood by BFGS on the log-likelihood, an
# independent route to the estimate the Go MM iteration finds.
players = ["p%d" % i for i in range(6)]
true = np.linspace(-1.5, 1.5, 6)
matches = []
for _ in range(400):
    i, j = rng.choice(6, size=2, replace=False)
    pr = 1 / (1 + np.exp(true[j] - true[i]))
    u = rng.uniform()
    score = 1.0 if u < pr * 0.9 else (0.5 if u < pr * 0.9 + 0.1 else 0.0)
    matches.append({"a": players[i], "b": players[j], "score": score})

def negll(theta):
    t = np.r_[0.0, theta]
    ll = 0.0
    for m in matches:
        i, j = players.index(m["a"]), players.index(m["b"])
        pij = 1 / (1 + np.exp(t[j] - t[i]))
        ll += m["score"] * np.log(pij) + (1 - m["score"]) * np.log(1 - pij)
    return -ll

res = optimize.minimize(negll, np.zeros(5), method="BFGS", options={"gtol": 1e-10})
theta = np.r_[0.0, res.x]
theta -= theta.mean()  # geometric mean strength 1
bt = {p: float(1000 + 400 * t / np.log(10)) for p, t in zip(players, theta)}

# Sequential Elo in the given order, K=32, 1000 start, scale 400.
elo = {}
for m in matches:
    ra, rb = elo.get(m["a"], 1000.0), elo.get(m["b"], 1000.0)
    e = 1 / (1 + 10 ** ((rb - ra) / 400))
    elo[m["a"]] = ra + 32 * (m["score"] - e)
    elo[m["b"]] = rb - 32 * (m["score"] - e)
out["ratings"] = {"matches": matches, "bradley_terry": bt, "elo_in_order": elo}

json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
