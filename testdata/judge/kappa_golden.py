# Reference values for scorers/judge TestKappaGolden: Cohen's kappa between
# judges, from sklearn.metrics.cohen_kappa_score (Debian python3-sklearn).
# Run: /usr/bin/python3 testdata/judge/kappa_golden.py > testdata/judge/kappa_golden.json
import json, random
from sklearn.metrics import cohen_kappa_score

rng = random.Random(5)
labels = ["Harmful", "Refusal", "Safe"]
a = [rng.choice(labels) for _ in range(60)]
# b and c agree with a most of the time, so kappa is well above 0
b = [x if rng.random() < 0.7 else rng.choice(labels) for x in a]
c = [x if rng.random() < 0.5 else rng.choice(labels) for x in a]
ra = [rng.randint(0, 10) for _ in range(50)]
rb = [min(10, max(0, x + rng.choice([-2, -1, 0, 0, 1, 3]))) for x in ra]
out = {
    "harm": {"a": a, "b": b, "c": c,
             "ab": cohen_kappa_score(a, b, labels=labels),
             "ac": cohen_kappa_score(a, c, labels=labels),
             "bc": cohen_kappa_score(b, c, labels=labels)},
    "rating": {"a": ra, "b": rb,
               "ab": cohen_kappa_score(ra, rb, labels=list(range(11)), weights="quadratic")},
}
print(json.dumps(out, indent=1))
