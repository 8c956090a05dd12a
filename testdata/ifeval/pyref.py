"""Reference helpers shared by the golden-file scripts: NLTK 3.8's English
Punkt tokenizer rebuilt from punkt_english.json (nltk_data may be absent),
nltk.word_tokenize on top of it, and python-langdetect with a fixed seed and
profiles loaded in sorted order (the Go port's configuration).

Run with Debian's python (/usr/bin/python3, python3-nltk 3.8, python3-langdetect 1.0.9).
"""
import json
import os

import nltk
import nltk.tokenize
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from langdetect.detector_factory import DetectorFactory, PROFILES_DIRECTORY

HERE = os.path.dirname(os.path.abspath(__file__))


def _punkt():
    with open(os.path.join(HERE, "..", "..", "scorers", "ifeval", "punkt_english.json")) as f:
        d = json.load(f)
    p = PunktParameters()
    p.abbrev_types = set(d["abbrev_types"])
    p.collocations = set(tuple(c) for c in d["collocations"])
    p.sent_starters = set(d["sent_starters"])
    for k, v in d["ortho_context"].items():
        p.ortho_context[k] = v
    return PunktSentenceTokenizer(p)


PUNKT = _punkt()
# nltk.word_tokenize calls the module-level sent_tokenize, which would load
# english.pickle; route it to the same parameters.
nltk.tokenize.sent_tokenize = lambda text, language="english": PUNKT.tokenize(text)


def sentences(text):
    return PUNKT.tokenize(text)


def word_tokenize(text):
    return nltk.tokenize.word_tokenize(text)


def _factory():
    f = DetectorFactory()
    profiles = []
    for name in sorted(os.listdir(PROFILES_DIRECTORY)):
        with open(os.path.join(PROFILES_DIRECTORY, name), encoding="utf-8") as fh:
            profiles.append(fh.read())
    f.load_json_profile(profiles)
    f.set_seed(0)
    return f


FACTORY = _factory()


def detect(text):
    """langdetect.detect with seed 0; None when langdetect raises."""
    d = FACTORY.create()
    d.append(text)
    try:
        return d.detect()
    except Exception:
        return None
