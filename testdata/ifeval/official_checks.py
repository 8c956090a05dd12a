"""check_following of the 25 active instructions of google-research
instruction_following_eval/instructions.py (commit 3f357bde), transcribed
line for line for reference runs, with evaluation_lib's strict and loose
evaluation. build_description's random defaults are not needed: every kwarg
is given in the data. Sentence splitting and word tokenizing use NLTK 3.8
(pyref.py); langdetect uses seed 0 (pyref.detect) -- the official code
leaves it unseeded.
"""
import collections
import json
import re

import pyref

LT, AL = "less than", "at least"


def cmp(rel, n, t):
    assert rel in (LT, AL), rel
    return n < t if rel == LT else n >= t


def lang_is(value, lang):
    got = pyref.detect(value)
    return True if got is None else got == lang


def check(iid, kw, value):
    kw = {k: v for k, v in kw.items() if v is not None}
    if iid == "keywords:existence":
        return all(re.search(k, value, flags=re.IGNORECASE) for k in sorted(kw["keywords"]))
    if iid == "keywords:frequency":
        return cmp(kw["relation"], len(re.findall(kw["keyword"].strip(), value, flags=re.IGNORECASE)), kw["frequency"])
    if iid == "keywords:forbidden_words":
        for word in sorted(set(kw["forbidden_words"])):
            if re.search(r"\b" + word + r"\b", value, flags=re.IGNORECASE):
                return False
        return True
    if iid == "keywords:letter_frequency":
        letter = kw["letter"].strip().lower()
        letters = collections.Counter(value.lower())
        return letters[letter] < kw["let_frequency"] if kw["let_relation"] == LT else letters[letter] >= kw["let_frequency"]
    if iid == "language:response_language":
        return lang_is(value, kw["language"])
    if iid == "length_constraints:number_sentences":
        return cmp(kw["relation"], len(pyref.sentences(value)), kw["num_sentences"])
    if iid == "length_constraints:number_paragraphs":
        paragraphs = re.split(r"\s?\*\*\*\s?", value)
        num = len(paragraphs)
        for index, paragraph in enumerate(paragraphs):
            if not paragraph.strip():
                if index == 0 or index == len(paragraphs) - 1:
                    num -= 1
                else:
                    return False
        return num == kw["num_paragraphs"]
    if iid == "length_constraints:number_words":
        return cmp(kw["relation"], len(re.findall(r"\w+", value)), kw["num_words"])
    if iid == "length_constraints:nth_paragraph_first_word":
        paragraphs = re.split(r"\n\n", value)
        num = len(paragraphs)
        for paragraph in paragraphs:
            if not paragraph.strip():
                num -= 1
        nth = kw["nth_paragraph"]
        if nth <= num:
            paragraph = paragraphs[nth - 1].strip()
            if not paragraph:
                return False
        else:
            return False
        first_word = ""
        word = paragraph.split()[0].strip().lstrip("'").lstrip('"')
        for letter in word:
            if letter in {".", ",", "?", "!", "'", '"'}:
                break
            first_word += letter.lower()
        return num == kw["num_paragraphs"] and first_word == kw["first_word"].lower()
    if iid == "detectable_content:number_placeholders":
        return len(re.findall(r"\[.*?\]", value)) >= kw["num_placeholders"]
    if iid == "detectable_content:postscript":
        marker = kw["postscript_marker"].strip()
        value = value.lower()
        if marker == "P.P.S":
            pat = r"\s*p\.\s?p\.\s?s.*$"
        elif marker == "P.S.":
            pat = r"\s*p\.\s?s\..*$"
        else:
            pat = r"\s*" + marker.lower() + r".*$"
        return bool(re.findall(pat, value, flags=re.MULTILINE))
    if iid == "detectable_format:number_bullet_lists":
        a = re.findall(r"^\s*\*[^\*].*$", value, flags=re.MULTILINE)
        b = re.findall(r"^\s*-.*$", value, flags=re.MULTILINE)
        return len(a) + len(b) == kw["num_bullets"]
    if iid == "detectable_format:constrained_response":
        value = value.strip()
        return any(o in value for o in ("My answer is yes.", "My answer is no.", "My answer is maybe."))
    if iid == "detectable_format:number_highlighted_sections":
        n = 0
        for h in re.findall(r"\*[^\n\*]*\*", value):
            if h.strip("*").strip():
                n += 1
        for h in re.findall(r"\*\*[^\n\*]*\*\*", value):
            if h.removeprefix("**").removesuffix("**").strip():
                n += 1
        return n >= kw["num_highlights"]
    if iid == "detectable_format:multiple_sections":
        pat = r"\s?" + kw["section_spliter"].strip() + r"\s?\d+\s?"
        return len(re.split(pat, value)) - 1 >= kw["num_sections"]
    if iid == "detectable_format:json_format":
        value = (value.strip().removeprefix("```json").removeprefix("```Json").removeprefix("```JSON")
                 .removeprefix("```").removesuffix("```").strip())
        try:
            json.loads(value)
        except ValueError:
            return False
        return True
    if iid == "detectable_format:title":
        for title in re.findall(re.compile(r"<<[^\n]+>>"), value):
            if title.lstrip("<").rstrip(">").strip():
                return True
        return False
    if iid == "combination:two_responses":
        valid = []
        responses = value.split("******")
        for index, response in enumerate(responses):
            if not response.strip():
                if index != 0 and index != len(responses) - 1:
                    return False
            else:
                valid.append(response)
        return len(valid) == 2 and valid[0].strip() != valid[1].strip()
    if iid == "combination:repeat_prompt":
        return value.strip().lower().startswith(kw["prompt_to_repeat"].strip().lower())
    if iid == "startend:end_checker":
        return value.strip().strip('"').lower().endswith(kw["end_phrase"].strip().lower())
    if iid == "change_case:capital_word_frequency":
        n = len([w for w in pyref.word_tokenize(value) if w.isupper()])
        return n < kw["capital_frequency"] if kw["capital_relation"] == LT else n >= kw["capital_frequency"]
    if iid == "change_case:english_capital":
        return value.isupper() and lang_is(value, "en")
    if iid == "change_case:english_lowercase":
        return value.islower() and lang_is(value, "en")
    if iid == "punctuation:no_comma":
        return not re.search(r"\,", value)
    if iid == "startend:quotation":
        value = value.strip()
        return len(value) > 1 and value[0] == '"' and value[-1] == '"'
    raise KeyError(iid)


def strict(inp, response):
    return [bool(response.strip() and check(i, kw, response)) for i, kw in zip(inp["instruction_id_list"], inp["kwargs"])]


def loose(inp, response):
    r = response.split("\n")
    rf = "\n".join(r[1:]).strip()
    rl = "\n".join(r[:-1]).strip()
    rb = "\n".join(r[1:-1]).strip()
    alls = [response, response.replace("*", ""), rf, rl, rb, rf.replace("*", ""), rl.replace("*", ""), rb.replace("*", "")]
    out = []
    for i, kw in zip(inp["instruction_id_list"], inp["kwargs"]):
        out.append(any(x.strip() and check(i, kw, x) for x in alls))
    return out
