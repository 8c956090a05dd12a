#!/usr/bin/python3
"""GlossoBench's out-of-fold random forest beside scikit-learn's, on the MMLU audit.

The paper's audit 4 shape: 14,042 MMLU test items, 57 subjects, the token
and option counts of testdata/audit/mmlu_audit.csv.gz, stand-in label "gold
is option A". Both sides grow the headline forest (measurements and the
subject one-hot) and the measurements-only forest, 100 trees each, on 5
stratified folds, on the same number of cores, with no tag shuffles, no
bootstrap interval and no source fingerprint, and score the out-of-fold
ratings by ROC AUC. The script prints wall and CPU seconds side by side and
the two AUCs of each view.

    apt-get install -y python3-sklearn   # Debian's scikit-learn, if missing
    /usr/bin/python3 testdata/audit/bench_forest.py [--cores 2] [--repeat 3]

It builds the glossobench binary first (go build), and times only the
audit itself (its child-process CPU time, and wall time). The machine
should be otherwise idle: take the best of --repeat runs.
"""

import argparse
import csv
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import sklearn
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "mmlu_audit.csv.gz")
MEASUREMENTS = ["question_tokens", "option_tokens", "longest_option_tokens", "options"]


def load():
    with gzip.open(DATA, "rt", newline="") as f:
        rows = list(csv.DictReader(f))
    subjects = sorted({r["subject"] for r in rows})
    index = {s: k for k, s in enumerate(subjects)}
    x = np.array([[float(r[m]) for m in MEASUREMENTS] for r in rows])
    onehot = np.zeros((len(rows), len(subjects)))
    for i, r in enumerate(rows):
        onehot[i, index[r["subject"]]] = 1
    y = np.array([r["gold_is_a"] in ("yes", "1", "true") for r in rows], dtype=int)
    return x, onehot, y


def sklearn_side(cores, trees, folds, seed):
    x, onehot, y = load()
    full = np.hstack([x, onehot])
    t0, c0 = time.perf_counter(), time.process_time()
    out = {}
    split = list(StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(x, y))
    for name, feats in (("headline", full), ("measurements_only", x)):
        oof = np.zeros(len(y))
        for k, (train, test) in enumerate(split):
            m = RandomForestClassifier(n_estimators=trees, n_jobs=cores, random_state=seed + k)
            m.fit(feats[train], y[train])
            oof[test] = m.predict_proba(feats[test])[:, 1]
        out[name] = roc_auc_score(y, oof)
    return time.perf_counter() - t0, time.process_time() - c0, out


def glossobench_side(binary, cores, trees, folds, seed):
    cmd = [binary, "audit", "--data", DATA, "--label", "gold_is_a", "--source", "subject",
           "--measurements", ",".join(MEASUREMENTS), "--detector", "rf", "--trees", str(trees),
           "--folds", str(folds), "--seed", str(seed), "--shuffles", "0", "--bootstrap", "0",
           "--fingerprint-trees", "-1", "--json"]
    env = dict(os.environ, GOMAXPROCS=str(cores))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rep = json.loads(res.stdout)
    return wall, cpu, {"headline": rep["headline"], "measurements_only": rep["measurements_only"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="runs per side; the best wall time is kept")
    ap.add_argument("--binary", help="a built glossobench binary (default: go build one)")
    a = ap.parse_args()

    binary = a.binary
    if not binary:
        binary = os.path.join(tempfile.mkdtemp(), "glossobench")
        subprocess.run(["go", "build", "-o", binary, "./cmd/glossobench"], cwd=ROOT, check=True)

    print(f"MMLU audit: 14,042 rows, 57 subjects, {len(MEASUREMENTS)} measurements; "
          f"{a.trees} trees, {a.folds} folds, {a.cores} cores; headline and measurements-only forests")
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    best = {}
    for side in ("glossobench", f"scikit-learn {sklearn.__version__}"):
        runs = []
        for _ in range(a.repeat):
            if side == "glossobench":
                runs.append(glossobench_side(binary, a.cores, a.trees, a.folds, a.seed))
            else:
                runs.append(sklearn_side(a.cores, a.trees, a.folds, a.seed))
        best[side] = min(runs, key=lambda r: r[0])
    print(f"{'':28} {'wall s':>8} {'CPU s':>8} {'headline AUC':>13} {'meas.-only AUC':>15}")
    for side, (wall, cpu, auc) in best.items():
        print(f"{side:28} {wall:8.2f} {cpu:8.2f} {auc['headline']:13.4f} {auc['measurements_only']:15.4f}")
    (gw, gc, ga), (sw, sc, sa) = best.values()
    print(f"speed-up (scikit-learn ÷ glossobench): wall {sw / gw:.2f}×, CPU {sc / gc:.2f}×")
    print(f"AUC difference: headline {ga['headline'] - sa['headline']:+.4f}, "
          f"measurements-only {ga['measurements_only'] - sa['measurements_only']:+.4f}")
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    sys.exit(main())
