"""Writes the golden files of scorers/ifeval's tests.

  gpt4_outcomes.jsonl     per prompt: strict and loose follow_instruction_list of
                          the official checkers (official_checks.py) on the GPT-4
                          responses shipped with IFEval (responses_gpt4_aligned.jsonl)
  tokenize_golden.jsonl   per text: nltk sent_tokenize (Punkt, English) and
                          nltk.word_tokenize
  langdetect_golden.jsonl per text: langdetect.detect with seed 0 (null = exception)

Run from the repository root with Debian's python:
  /usr/bin/python3 testdata/ifeval/make_golden.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import official_checks
import pyref

D = os.path.dirname(os.path.abspath(__file__))


def jl(name):
    with open(os.path.join(D, name), encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def write(name, rows):
    with open(os.path.join(D, name), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


inputs = jl("input_data.jsonl")
responses = {r["prompt"]: r["response"] for r in jl("responses_gpt4_aligned.jsonl")}
outcomes = []
for inp in inputs:
    resp = responses[inp["prompt"]]
    outcomes.append({"key": inp["key"], "instruction_id_list": inp["instruction_id_list"],
                     "strict": official_checks.strict(inp, resp), "loose": official_checks.loose(inp, resp)})
write("gpt4_outcomes.jsonl", outcomes)

# Every prompt checked against the next prompt's response, to exercise the
# checkers on responses that mostly do not follow the instructions.
resp_list = [responses[inp["prompt"]] for inp in inputs]
shifted = []
for i, inp in enumerate(inputs):
    resp = resp_list[(i + 1) % len(inputs)]
    shifted.append({"key": inp["key"], "instruction_id_list": inp["instruction_id_list"],
                    "strict": official_checks.strict(inp, resp), "loose": official_checks.loose(inp, resp)})
write("gpt4_shifted_outcomes.jsonl", shifted)

n = len(outcomes)
ps = sum(all(o["strict"]) for o in outcomes) / n
pl = sum(all(o["loose"]) for o in outcomes) / n
ni = sum(len(o["strict"]) for o in outcomes)
ist = sum(sum(o["strict"]) for o in outcomes) / ni
il = sum(sum(o["loose"]) for o in outcomes) / ni
print("prompt strict %.4f inst strict %.4f prompt loose %.4f inst loose %.4f" % (ps, ist, pl, il))

EDGE = [
    "", "Hello.", "Mr. Smith went to Washington. He arrived at 5 p.m. on Tuesday.",
    "The U.S. economy grew 3.5 percent. Analysts expected less.", "Wait... what? No!! Really?!",
    "(This is in parens.) And this follows.", '"Quoted sentence." Another one.', "He said 'hi.' Then left.",
    "Dr. J. R. R. Tolkien wrote it. It sold well.", "Visit www.example.com. It is great.",
    "First line\n\nSecond paragraph. With two sentences.", "e.g. this is an example. i.e. another.",
    "I can't, won't, and shouldn't do it. Gimme a break; I'm gonna wanna go.", "Cannot stop. 'Tis true.",
    "Prices: $3.88, 45% off -- really!", "«Bonjour» said “she”. ‘Yes’ she replied.", "A -- B --- C... D. . . E",
    "1. First item\n2. Second item\n3. Third item.", "U.S.A. is big. The end.", "No. 5 is here. Fig. 3 shows it.",
    "word_with_underscores and CAPS. HELLO WORLD. I AM HERE.", "ünïcödé wörds. Ça va? Oui!", "Tabs\tand\u00a0nbsp. Next.",
    "*bold* text. **more bold**. ***", "Ends with colon:", "a,b,c: d,e", "She said, \"Go.\" He went.",
    "12.5 million. 3,000 people. -4.5 degrees.", "Sent one.Sent two. Sent three!Sent four?", "( [ { < > } ] )",
]
texts, seen = [], set()
for t in EDGE + [r["response"] for r in jl("responses_gpt4_aligned.jsonl")] + [i["prompt"] for i in inputs]:
    if t not in seen:
        seen.add(t)
        texts.append(t)
write("tokenize_golden.jsonl", [{"text": t, "sentences": pyref.sentences(t), "words": pyref.word_tokenize(t)} for t in texts])

LANG = [
    "This is clearly an English sentence about the weather today.",
    "Ini adalah kalimat dalam bahasa Indonesia tentang cuaca hari ini.",
    "Ini ialah ayat dalam bahasa Melayu tentang cuaca pada hari ini.",
    "Ceci est une phrase en français sur la météo d'aujourd'hui.",
    "Dies ist ein deutscher Satz über das heutige Wetter.",
    "Esta es una oración en español sobre el clima de hoy.",
    "Questa è una frase in italiano sul tempo di oggi.",
    "Это предложение на русском языке о погоде сегодня.",
    "यह आज के मौसम के बारे में हिंदी में एक वाक्य है।",
    "これは今日の天気についての日本語の文です。",
    "이것은 오늘 날씨에 관한 한국어 문장입니다.",
    "这是一个关于今天天气的中文句子。",
    "Đây là một câu tiếng Việt về thời tiết hôm nay.",
    "นี่คือประโยคภาษาไทยเกี่ยวกับสภาพอากาศวันนี้",
    "هذه جملة باللغة العربية عن الطقس اليوم.",
    "Hii ni sentensi ya Kiswahili kuhusu hali ya hewa leo.",
    "Tämä on suomenkielinen lause tämän päivän säästä.",
    "ఇది ఈ రోజు వాతావరణం గురించి తెలుగులో ఒక వాక్యం.",
    "இது இன்றைய வானிலை பற்றிய தமிழ் வாக்கியம்.",
    "এটি আজকের আবহাওয়া সম্পর্কে একটি বাংলা বাক্য।",
    "THIS IS AN ENGLISH SENTENCE IN CAPITAL LETTERS ONLY.",
    "contact me at someone@example.com or https://example.com/page?x=1 for more details about english text",
    "12345 67890 !!! ???", "", "   ",
]
ltexts = LANG + [r["response"] for r in jl("responses_gpt4_aligned.jsonl")]
for f in ("en_sea_ifeval.jsonl", "id_sea_ifeval.jsonl"):
    ltexts += [r["prompts"][0]["text"] for r in jl(f)]
write("langdetect_golden.jsonl", [{"text": t, "lang": pyref.detect(t)} for t in ltexts])
