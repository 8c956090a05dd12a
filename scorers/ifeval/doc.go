// Package ifeval is the IF (instruction following) axis: the verifiable
// instructions of IFEval (Zhou et al. 2023, arXiv:2311.07911) checked the way
// google-research's instruction_following_eval checks them, strictly and
// loosely, at prompt and instruction level.
//
// # Fidelity
//
// Each of the 25 instruction ids of instructions_registry.INSTRUCTION_DICT
// takes the same kwargs and applies the same rule as check_following,
// including its quirks (keywords are regular expressions, multiple_sections
// counts "at least", nth_paragraph_first_word indexes paragraphs before
// dropping empty ones, and so on). Python's re and str methods classify
// characters with Unicode properties; pyunicode.go spells those out, since
// Go's regexp classes are ASCII-only.
//
// The NLP pieces the checkers call are ports, not approximations:
//   - sentence counting (length_constraints:number_sentences) is NLTK 3.8's
//     Punkt sentence tokenizer (punkt.go) running on NLTK's pre-trained
//     English parameters (punkt_english.json);
//   - change_case:capital_word_frequency tokenizes with nltk.word_tokenize,
//     i.e. Punkt followed by NLTKWordTokenizer (wordtok.go);
//   - word counting (length_constraints:number_words) is what IFEval uses,
//     nltk's RegexpTokenizer(r"\w+"), not word_tokenize;
//   - language checks use a port of python-langdetect 1.0.9 (langdetect.go)
//     with langdetect's own 55 profiles. A port rather than lingua-go:
//     IFEval's verdicts are langdetect's verdicts, including its mistakes on
//     short or mixed texts, and only the same algorithm on the same profiles
//     reproduces them. langdetect samples n-grams at random; the official
//     code left the seed unset until recently (its HEAD now fixes it at 0),
//     so borderline texts could flip between runs. The port fixes seed 0 and
//     reproduces CPython's Mersenne Twister, so it returns exactly what
//     python-langdetect returns with seed 0 (profiles in sorted order).
//
// Tests compare against golden files that NLTK, python-langdetect and a
// transcription of the official checkers produced (testdata/ifeval), and port
// instructions_test.py. On the GPT-4 responses that ship with IFEval this
// package gives the paper's strict numbers (prompt 0.7689, instruction
// 0.8357).
//
// # Deliberate differences
//
// keywords:letter_frequency with a letter kwarg that is not a single letter
// ("#" and "!" in input_data.jsonl, keys 1122 and 1129): IFEval as published
// replaced it with random.choice(string.ascii_letters), so its verdict was
// random. Here the letter is drawn from a PCG generator seeded with an FNV
// hash of the prompt key and the instruction's position: the same prompt
// always checks the same letter. (google-research HEAD has since changed to
// count the character itself.)
//
// Missing or malformed kwargs are errors here; IFEval would silently draw
// random values for them.
//
// # SEA-IFEval
//
// SEA-IFEval rows (SEA-HELM) carry one instruction each. They are checked
// with the IFEval rules above, after renaming SEA-HELM's kwargs
// (section_title to section_spliter, response_language to language); the
// relation "exactly" is accepted; detectable_format:constrained_response
// accepts SEA-HELM's translated options for the prompt language; the two
// SEA-only ids (keywords:number_frequency, startend:first_word) follow
// SEA-HELM's instruction_checkers.py. SEA-HELM's own checkers differ from
// IFEval in several places (sentences counted by "***", fastText language
// id); those differences are not reproduced.
package ifeval
