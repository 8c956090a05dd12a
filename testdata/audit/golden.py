#!/usr/bin/python3
"""Reference values for stats/auc.go, stats/logreg.go and stats/forest.go.

Run with Debian's python3-sklearn (1.2.1):  /usr/bin/python3 testdata/audit/golden.py
It writes testdata/audit/golden.json: inputs and sklearn's outputs.
"""
import json, os
import numpy as np
from sklearn.metrics import roc_auc_score, average_precision_score
from sklearn.linear_model import LogisticRegression
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_predict
import sklearn

rng = np.random.RandomState(7)
out = {"sklearn": sklearn.__version__, "ranking": [], "ovr": [], "logreg": [], "forest": []}

def ranking_case(name, y, s, w=None):
    c = {"name": name, "labels": [bool(v) for v in y], "scores": [float(v) for v in s],
         "roc_auc": roc_auc_score(y, s), "average_precision": average_precision_score(y, s)}
    if w is not None:
        c["weights"] = [float(v) for v in w]
        c["weighted_roc_auc"] = roc_auc_score(y, s, sample_weight=w)
    out["ranking"].append(c)

for n in (5, 40, 200):
    y = rng.rand(n) < 0.3
    y[0], y[1] = True, False
    ranking_case("continuous_%d" % n, y, rng.randn(n) + y)
    # heavy ties: scores on a coarse grid
    ranking_case("ties_%d" % n, y, np.round(rng.rand(n) * 3 + y, 0) / 3)
    ranking_case("weighted_%d" % n, y, np.round(rng.randn(n) + y, 1), rng.rand(n) * 2)
ranking_case("constant", np.array([1, 0, 0, 1, 0]), np.ones(5))

# one-vs-rest macro AUC, probabilities from a random softmax
for n, k in ((30, 3), (120, 5)):
    cls = rng.randint(0, k, size=n)
    cls[:k] = np.arange(k)
    logits = rng.randn(n, k)
    logits[np.arange(n), cls] += 1.0
    p = np.exp(logits); p /= p.sum(axis=1, keepdims=True)
    out["ovr"].append({"classes": cls.tolist(), "probs": p.tolist(),
                       "macro_auc": roc_auc_score(cls, p, multi_class="ovr", average="macro")})

# logistic regression: the optimum (newton-cg, tol 1e-10; lbfgs at tol 1e-10
# still stops on its ftol with gradients near 1e-3) and sklearn's default fit
# (lbfgs, tol 1e-4), which the Go fit only matches roughly.
for n, p_, c in ((80, 3, 1.0), (300, 6, 1.0), (150, 4, 0.1)):
    X = rng.randn(n, p_) * rng.choice([0.5, 1, 3], size=p_)
    beta = rng.randn(p_)
    y = (X @ beta + 0.5 * rng.randn(n)) > 0.2
    m = LogisticRegression(C=c, solver="newton-cg", tol=1e-10, max_iter=10000).fit(X, y)
    d = LogisticRegression(C=c).fit(X, y)
    out["logreg"].append({"x": X.tolist(), "y": y.tolist(), "C": c,
                          "coef": m.coef_[0].tolist(), "intercept": float(m.intercept_[0]),
                          "default_coef": d.coef_[0].tolist(), "default_intercept": float(d.intercept_[0])})

# random forest: out-of-fold AUC on a noisy problem; not bit-comparable,
# only the AUC level is compared (sklearn's forests differ by seed too).
n = 1500
X = rng.randn(n, 5)
src = rng.randint(0, 6, size=n)
y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * src + rng.randn(n)) > 1.2
onehot = np.eye(6)[src]
Xf = np.c_[X, onehot]
aucs = []
for seed in range(5):
    skf = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    pr = cross_val_predict(RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1),
                           Xf, y, cv=skf, method="predict_proba")[:, 1]
    aucs.append(roc_auc_score(y, pr))
out["forest"].append({"x": X.tolist(), "source": src.tolist(), "y": y.tolist(),
                      "oof_auc_mean": float(np.mean(aucs)), "oof_auc_sd": float(np.std(aucs))})

# An end-to-end audit: four sources with different yes-rates, two
# measurements on a 0-1 scale. The fixed ratings follow the paper's recipes;
# the logistic-regression views are out of fold on the stored folds, with
# the source one-hot beside the measurements in the headline view.
n = 600
src = rng.randint(0, 4, size=n)
src_rate = np.array([0.9, 0.75, 0.5, 0.2])
y = rng.rand(n) < src_rate[src]
m1 = np.clip(0.5 + 0.15 * rng.randn(n) + 0.1 * y, 0, 1)
m2 = np.round(rng.rand(n), 1)
X = np.c_[m1, m2]
yes = np.array([y[src == k].sum() for k in range(4)])
cnt = np.array([(src == k).sum() for k in range(4)])
rate = yes / cnt
mean = X.mean(axis=1)
headline = 0.5 * rate[src] + 0.5 * mean
target = y.mean()
w = np.where(y, target / rate[src], (1 - target) / (1 - rate[src]))
level = headline - np.array([headline[src == k].mean() for k in range(4)])[src]
folds = np.zeros(n, dtype=int)
for f, (_, test) in enumerate(StratifiedKFold(n_splits=5, shuffle=True, random_state=3).split(X, y)):
    folds[test] = f
def oof(F):
    p = np.zeros(n)
    for f in range(5):
        tr, te = folds != f, folds == f
        p[te] = LogisticRegression(solver="newton-cg", tol=1e-10, max_iter=10000).fit(F[tr], y[tr]).predict_proba(F[te])[:, 1]
    return p
onehot = np.eye(4)[src]
out["audit"] = {
    "source": src.tolist(), "y": y.tolist(), "x": X.tolist(), "folds": folds.tolist(),
    "source_only": roc_auc_score(y, rate[src]),
    "mean_half_headline": roc_auc_score(y, headline),
    "mean_half_measurements_only": roc_auc_score(y, mean),
    "single": [roc_auc_score(y, X[:, j]) for j in range(2)],
    "headline_average_precision": average_precision_score(y, headline),
    "reweighted": roc_auc_score(y, headline, sample_weight=w),
    "level": roc_auc_score(y, level),
    "per_source": [roc_auc_score(y[src == k], headline[src == k]) for k in range(4)],
    "logreg_headline": roc_auc_score(y, oof(np.c_[X, onehot])),
    "logreg_measurements_only": roc_auc_score(y, oof(X)),
}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "golden.json"), "w") as f:
    json.dump(out, f)
print("wrote golden.json; forest oof auc", np.mean(aucs), np.std(aucs))
