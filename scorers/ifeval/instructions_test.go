package ifeval

import (
	"strings"
	"testing"
)

// This file ports google-research instruction_following_eval/instructions_test.py
// (commit 45e91051) for the 25 registered instructions. The tests of
// classes that are not in the registry (constrained_start, rephrase,
// key_sentences, rephrase_paragraph) and test_get_instruction_args (random
// description building) have no counterpart here.

const (
	lessThan = "less than"
	atLeast  = "at least"
)

type checkCase struct {
	name     string
	id       string
	kwargs   map[string]any
	response string
	want     bool
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		ch, err := NewChecker(c.id, c.kwargs, CheckerOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := ch.Check(c.response); got != c.want {
			t.Errorf("%s: Check(%.60q) = %v, want %v", c.name, c.response, got, c.want)
		}
	}
}

func kw(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		v := kv[i+1]
		switch x := v.(type) {
		case int:
			v = float64(x)
		case []string:
			l := make([]any, len(x))
			for j, s := range x {
				l[j] = s
			}
			v = l
		}
		m[kv[i].(string)] = v
	}
	return m
}

func TestResponseLanguage(t *testing.T) {
	runCases(t, []checkCase{
		{"english", "language:response_language", kw("language", "en"), "The response is English", true},
		{"multilanguage es", "language:response_language", kw("language", "es"), "Desayunamos en McDonald's hoy", true},
		{"multilanguage en", "language:response_language", kw("language", "en"), "Today we visit the Louvre", true},
	})
}

func TestNumberSentences(t *testing.T) {
	id := "length_constraints:number_sentences"
	runCases(t, []checkCase{
		{"1", id, kw("relation", lessThan, "num_sentences", 4), "xx,x. xx,x! xx/x. x{x}x?", false},
		{"2", id, kw("relation", lessThan, "num_sentences", 5), "xxxx. xx,x! xxxx. x(x)x?", true},
		{"3", id, kw("relation", atLeast, "num_sentences", 4), "xxxx. xx,x! xx|x. x&x x?", true},
		{"4", id, kw("relation", atLeast, "num_sentences", 5), "xx-x. xx,x! xx}x. x,xx?", false},
	})
}

func TestNumberPlaceholders(t *testing.T) {
	id := "detectable_content:number_placeholders"
	runCases(t, []checkCase{
		{"1", id, kw("num_placeholders", 5), "Sure, here is a short template with 5 placeholders:\n" +
			"[Name]\n[Email]\n[Phone]\n[Address]\n[Website]\n" +
			"This template can be used for a variety of purposes, such " +
			"ascreating a contact list, sending out surveys, or creating " +
			"a sign-up form.", true},
		{"2", id, kw("num_placeholders", 7), "My [adjective] [noun] is [adjective] [noun]. I [verb] and [verb].", false},
	})
}

const (
	bullet1 = `
  A Markdown bullet point is a way of formatting text to create a list. To
  create a bullet point, start each line with an asterisk (*). For example:
  * This is a bullet point.
  *(no space required)Another bullet point.
  * (no newline ending required)Another bullet point.
  markdown bullet points are often used to create to-do lists or to list items
  in a step-by-step guide.`
	bullet2 = `
  Check that inline asterisk (*), *, will not be counted. Only * that starts a
  bullet list will be counted:
    * This is a bullet point.
    * Another bullet point.
    . dot is not counted`
	bullet3 = `
  Here are three bullets starting with asterisk:
  * I am a large language model, also known as a conversational AI.
  * I am trained on a massive amount of text data, and I am able to communicate.
  * I am still under development, but I am learning new things every day.`
	bullet4 = `
  Here are three markdown bullets:
  - I am a large language model, also known as a conversational AI.
  - I am trained on a massive amount of text data, and I am able to communicate.
  -I am still under development, but I am learning new things every day.`
	bullet5 = `
  Paragraph 1
  ***
  Paragraph 2
  ***
  Paragraph 3
  * only one bullet point
  `
)

func TestNumberBulletLists(t *testing.T) {
	id := "detectable_format:number_bullet_lists"
	runCases(t, []checkCase{
		{"1", id, kw("num_bullets", 3), bullet1, true},
		{"2", id, kw("num_bullets", 2), bullet2, true},
		{"3", id, kw("num_bullets", 3), bullet3, true},
		{"4", id, kw("num_bullets", 3), bullet4, true},
		{"5", id, kw("num_bullets", 1), bullet5, true},
	})
}

func TestConstrainedResponse(t *testing.T) {
	id := "detectable_format:constrained_response"
	runCases(t, []checkCase{
		{"1", id, nil, "\n My answer is no.\n", true},
		{"2", id, nil, "My answer is no.   ", true},
		{"3", id, nil, `
  My answer is no. I am still under development and I am always learning and
  improving. I am not the best chatbot in the world, but I am striving to be
  the best that I can be.`, true},
	})
}

func TestNumberHighlights(t *testing.T) {
	id := "detectable_format:number_highlighted_sections"
	runCases(t, []checkCase{
		{"1", id, kw("num_highlights", 2), `
  To highlight text with Markdown, you can use the * character before and after
  the text you want to highlight. For example, if you want to highlight the
  word ` + "`hello`" + `, you would type:*hello*, You can also use the ** character to
  create bold text. For example, if you want to bold the word ` + "`hello`" + `, you
  would type: **hello** `, true},
		{"2", id, kw("num_highlights", 2), `
  Sure, here are the numerical methods for solving partial differential
  equations highlighted with Markdown:
  *Finite difference methods
  *Finite element methods*
  *Boundary element methods
  *Monte Carlo methods
  I hope this helps!`, false},
		{"3", id, kw("num_highlights", 4), `
  There is allowed to be *two different* highlighted *sections in the same*
  line. **This is also true** for **double markdown highlights.**
  `, true},
	})
}

func TestSectionChecker(t *testing.T) {
	id := "detectable_format:multiple_sections"
	runCases(t, []checkCase{
		{"Section 3", id, kw("section_spliter", "Section", "num_sections", 3), `
  Your response must have multiple sections. Mark the beginning of each section
  with "Section X", such as:
  Section 1
  [content of section 1]
  Section 2
  [content of section 2]`, false},
		{"SECTION 2", id, kw("section_spliter", "SECTION", "num_sections", 2), `SECTION 1
  [content of section 1]
  SECTION 2
  [content of section 2]`, true},
	})
}

func TestParagraphChecker(t *testing.T) {
	id := "length_constraints:number_paragraphs"
	runCases(t, []checkCase{
		{"1", id, kw("num_paragraphs", 3), `
  paragraph 1
  ***
  paragraph 2
  ***
  paragraph 3`, true},
		{"2", id, kw("num_paragraphs", 3), `
          ***
  paragraph 1
          ***
      paragraph 2
          ***
      paragraph 3`, true},
		{"3", id, kw("num_paragraphs", 3), `
  paragraph 1
          ***
      paragraph 2
          ***
      paragraph 3
          ***`, true},
		{"4", id, kw("num_paragraphs", 2), `
  paragraph 1
          ***
      paragraph 2
          ***
          ***`, false},
	})
}

func TestPostscriptChecker(t *testing.T) {
	id := "detectable_content:postscript"
	m1 := `
  I will do my best to follow your instructions and always start my responses
  with "My response is:". I will try to be as consistent as possible, but
  please be patient with me if I make a mistake. I am still under development,
  and I am always learning new things.

  P.S. I hope this is what you were looking for.`
	m2 := `
  Sure, here is my response with a postscript starting with P.P.S.:

  My response is: I hope this answers your question.

  P.P.S. I am always happy to answer any other questions you may have.

  Do you have any other questions for me?`
	m3 := `
  The radius of a unit circle is 1. However, I can give you a funny and wrong
  answer: the radius of a unit circle is 0. This is because a unit circle is a
  circle with a radius of 1, and if the radius is 0, then the circle has no
  size and is just a point. (not starting a new line) P.S. I hope you enjoyed
  my joke!`
	m4 := `
  If the length of a square is one, the area of the square will also be one.
  p.p.s what if the entire response was lower case letters?
  `
	m5 := `
  The mysteries of space and time are mysterious.
  P. S. Sometimes there are even spaces between P. and S..
  `
	runCases(t, []checkCase{
		{"P.S.", id, kw("postscript_marker", "P.S."), m1, true},
		{"PS:", id, kw("postscript_marker", "PS:"), m1, false},
		{"P.P.S", id, kw("postscript_marker", "P.P.S"), m2, true},
		{"P.S. inline", id, kw("postscript_marker", "P.S."), m3, true},
		{"p.p.s lower", id, kw("postscript_marker", "P.P.S"), m4, true},
		{"P. S.", id, kw("postscript_marker", "P.S."), m5, true},
	})
}

func TestKeywordChecker(t *testing.T) {
	id := "keywords:existence"
	keywords := []string{"romantic", "river", "Mona Lisa"}
	runCases(t, []checkCase{
		{"1", id, kw("keywords", keywords), `
  Paris is a city of beauty and romance. The romantic river Seine winds its way
  through the city, past iconic landmarks like the Eiffel Tower and the Louvre
  Museum, where the Mona Lisa resides. Whether you're taking a boat cruise down
  the river or simply strolling along the banks, you're sure to be captivated
  by the city's charm.`, true},
		{"2", id, kw("keywords", keywords), `
  Paris is a city of beauty, romance, and history. It is home to some of the
  most iconic landmarks in the world, including the Eiffel Tower, the Louvre
  Museum, and the Notre Dame Cathedral. The city is also known for its romantic
  river cruises, its delicious food, and its stylish people.
  `, false},
	})
}

func TestKeywordFrequencyChecker(t *testing.T) {
	id := "keywords:frequency"
	m1 := "\n  keyword, Keyword, KEYWORD\n  "
	m2 := "\n    *keyword\n    *Keyword\n    *KEYWORD\n  "
	runCases(t, []checkCase{
		{"1", id, kw("keyword", "  keyword ", "frequency", 4, "relation", lessThan), m1, true},
		{"2", id, kw("keyword", "  keyword ", "frequency", 3, "relation", atLeast), m1, true},
		{"3", id, kw("keyword", "KEYWORD", "frequency", 4, "relation", atLeast), m2, false},
	})
}

func TestNumWordsChecker(t *testing.T) {
	id := "length_constraints:number_words"
	m1 := "\n  d3sCRi7 lArge lAnguagE M0del w1tH 20 w0RdS."
	m2 := "\n  L4RGE L4NGU4GE M0DEL: AI syst3m th4t und3rstands, g3n3r4tes, or tr4nsforms\n  l4ngu4g3 b4s3d on pr3vious l3arning & d4t4."
	runCases(t, []checkCase{
		{"1", id, kw("num_words", 8, "relation", lessThan), m1, true},
		{"2", id, kw("num_words", 16, "relation", lessThan), m2, false},
		{"3", id, kw("num_words", 16, "relation", atLeast), m2, true},
	})
}

func TestParagraphFirstWord(t *testing.T) {
	id := "length_constraints:nth_paragraph_first_word"
	t1 := "\n  paragraph 1\n\n  I paragraph 2\n\n  paragraph 3"
	t2 := "\n  paragraph 1\n\n  I paragraph 2"
	t3 := "\n  paragraph 1\n\n  fail paragraph 2\n\n  paragraph 3"
	t4 := `
  Wow this is a very long response.

  I can't believe there is more than three paragraphs.

  Really more than three? No way!

  I can't believe it but I guess I am living proof.

  Haha, you go that right.`
	t5 := strings.Replace(t4, "Really more than three? No way!", `"Really?! more than three? No way!"`, 1)
	t6 := strings.Replace(t4, "Really more than three? No way!", "Rea!lly more than three? No way!", 1)
	a := kw("num_paragraphs", 3, "nth_paragraph", 2, "first_word", "I")
	runCases(t, []checkCase{
		{"1", id, a, t1, true},
		{"2", id, a, t2, false},
		{"3", id, a, t3, false},
		{"4", id, kw("num_paragraphs", 5, "nth_paragraph", 5, "first_word", "haha"), t4, true},
		{"5", id, kw("num_paragraphs", 5, "nth_paragraph", 3, "first_word", "Really"), t5, true},
		{"6", id, kw("num_paragraphs", 5, "nth_paragraph", 3, "first_word", "Really"), t6, false},
	})
}

func TestForbiddenWords(t *testing.T) {
	id := "keywords:forbidden_words"
	m1 := `
  The Nazis came to power in 1933 through a combination of legal and illegal
  means. Hitler was appointed chancellor by President Paul von Hindenburg, and
  the Nazis quickly consolidated their power by passing a series of laws that
  restricted the rights of opposition parties and individuals. By 1934, Hitler
  had become dictator of Germany.
  `
	m2 := `
  Dinosaurs were a diverse group of reptiles that dominated the Earth for over
  160 million years. They came in all shapes and sizes, from the tiny
  Compsognathus to the massive Argentinosaurus. Dinosaurs were the most
  successful land animals on Earth until they went extinct about 66 million
  years ago. The exact cause of their extinction is still unknown, but it
  is thought to have been a combination of factors, including an asteroid
  impact and climate change.
  `
	m3 := `
  GPT, or Generative Pre-trained Transformer, is a family of neural network
  models that uses the transformer architecture. GPT models are trained on a
  massive dataset of text and code, and can be used for a variety of tasks,
  including text generation, translation, and question answering. GPT models
  have been shown to be very effective at these tasks, and are being used by
  a variety of companies and organizations like Google.
  `
	w1 := kw("forbidden_words", []string{"HOUSE", "POWER", "BECOME"})
	w2 := kw("forbidden_words", []string{"GOOGLE", "TEXT"})
	w3 := kw("forbidden_words", []string{"GENE", "TRANSFORM"})
	runCases(t, []checkCase{
		{"1/1", id, w1, m1, false}, {"1/2", id, w1, m2, true}, {"1/3", id, w1, m3, true},
		{"2/1", id, w2, m1, true}, {"2/2", id, w2, m2, true}, {"2/3", id, w2, m3, false},
		{"3/3", id, w3, m3, true},
	})
}

func TestTwoResponses(t *testing.T) {
	id := "combination:two_responses"
	runCases(t, []checkCase{
		{"1", id, nil, "\n  This is response 1.\n  ******\n  This is response 2.\n  ", true},
		{"2", id, nil, "\n  This is response 1.\n  ******\n  This is response 1.\n  ", false},
		{"3", id, nil, "\n  This is response 1.\n  ******\n  This is response 2.\n  ******\n  This is response 3.\n  ", false},
		{"4", id, nil, "\n  ******\n  Response 1.\n  ******\n  ******\n  Response 2.\n  ******\n  ", false},
		{"5", id, nil, "\n  ******\n  Response 1\n  ******\n  Response 2\n  ******\n  ", true},
	})
}

func TestPromptRepeatAnswer(t *testing.T) {
	id := "combination:repeat_prompt"
	a := kw("prompt_to_repeat", "Write a CL description.")
	runCases(t, []checkCase{
		{"1", id, a, "Write a CL description. Hi, Le and TJ, please\n  check this out. Thanks.\n  ", true},
		{"2", id, a, "Hi, Le and TJ. Write a CL description. Thanks.\n  ", false},
	})
}

func TestEndChecker(t *testing.T) {
	id := "startend:end_checker"
	runCases(t, []checkCase{
		{"1", id, kw("end_phrase", "\n  Any more questions?\n  "), "\n  The answer is 7. Any more questions?\n  ", true},
		{"2", id, kw("end_phrase", "\n  This is the end.\n  "), "\n  At the end of this prompt I am required to say that this is the end.\n  ", true},
		{"3", id, kw("end_phrase", "\n  This will fail.\n  "), "\n  This will fail. Paris is cool.\n  ", false},
	})
}

func TestTitleChecker(t *testing.T) {
	id := "detectable_format:title"
	runCases(t, []checkCase{
		{"1", id, nil, "\n  <<Song of Joy>>\n  La la la. Happy song.\n  ", true},
		{"2", id, nil, "\n  Is it fine for title to be at the end?\n  <<This is the title>>\n  ", true},
		{"3", id, nil, "\n  << >>\n  There is no title.\n  ", false},
		{"4", id, nil, "\n  <<This is not a title.\n  This is a paragraph.>>\n  ", false},
	})
}

func TestLetterFrequencyChecker(t *testing.T) {
	id := "keywords:letter_frequency"
	m2 := "\n  asdfghjkl!!aA\n  "
	runCases(t, []checkCase{
		{"T", id, kw("letter", "T", "let_frequency", 4, "let_relation", atLeast), "\n  There is the T. Four T's.\n  ", true},
		{"a", id, kw("letter", "a", "let_frequency", 4, "let_relation", lessThan), m2, true},
		{"p", id, kw("letter", "p", "let_frequency", 4, "let_relation", atLeast), m2, false},
	})
	// Upstream's test_letter_frequency_checker_rejects_invalid_explicit_args:
	// a negative frequency is an error. (A multi-character letter is also an
	// error upstream; here it gets the seeded letter, see chooseLetter.)
	if _, err := NewChecker(id, kw("letter", "a", "let_frequency", -1, "let_relation", atLeast), CheckerOptions{}); err == nil {
		t.Error("negative let_frequency accepted")
	}
}

// TestLetterFrequencyNonLetter pins this package's documented rule where
// upstream HEAD's test_letter_frequency_checker_accepts_punctuation counts
// "#" itself: a non-letter is replaced by a letter drawn from the seed, the
// same letter every time for the same seed.
func TestLetterFrequencyNonLetter(t *testing.T) {
	for seed := uint64(0); seed < 50; seed++ {
		l := chooseLetter("#", seed)
		if l < 'a' || l > 'z' || chooseLetter("#", seed) != l || chooseLetter(nil, seed) != l || chooseLetter("ab", seed) != l {
			t.Fatalf("seed %d: letter %q not a stable lower-case ASCII letter", seed, l)
		}
		c, err := NewChecker("keywords:letter_frequency", kw("letter", "#", "let_frequency", 3, "let_relation", atLeast), CheckerOptions{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Repeat(string(l), 3) + " ###"
		if !c.Check(s) || c.Check("###") {
			t.Fatalf("seed %d: checker does not count the drawn letter %q", seed, l)
		}
	}
	seen := map[rune]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		seen[chooseLetter("!", seed)] = true
	}
	if len(seen) < 20 {
		t.Errorf("only %d distinct letters over 200 seeds", len(seen))
	}
}

func TestEnglishCapitalChecker(t *testing.T) {
	id := "change_case:english_capital"
	runCases(t, []checkCase{
		{"1", id, nil, "\n  THIS IS AN ENGLISH SENTENCE. EVERY LETTER IS CAPITALIZED!!! AMAZING.\n  ", true},
		{"2", id, nil, "\n  Every Word Is Capitalized.\n  ", false},
	})
}

func TestEnglishLowercaseChecker(t *testing.T) {
	id := "change_case:english_lowercase"
	runCases(t, []checkCase{
		{"1", id, nil, "\n  every letter is lowercase.\n  ", true},
		{"2", id, nil, "\n  Almost every letter is lowercase.\n  ", false},
	})
}

func TestComma(t *testing.T) {
	id := "punctuation:no_comma"
	runCases(t, []checkCase{
		{"1", id, nil, "\n  Every sentence is short. There is no need for a comma.\n  ", true},
		{"2", id, nil, "\n  Since the start of time, people have always found a way to punctuate.\n  ", false},
	})
}

func TestCapitalWordFrequency(t *testing.T) {
	id := "change_case:capital_word_frequency"
	m1 := "\n  HERE there are THREE FUlly CAPITAL words.\n  "
	m2 := "\n  THERE are Four FULLY CAPITAL WORDS. Many Others Are Only Partially So.\n  "
	runCases(t, []checkCase{
		{"1", id, kw("capital_frequency", 3, "capital_relation", atLeast), m1, true},
		{"2", id, kw("capital_frequency", 5, "capital_relation", lessThan), m2, true},
		{"3", id, kw("capital_frequency", 4, "capital_relation", lessThan), m2, false},
	})
}

func TestQuotation(t *testing.T) {
	id := "startend:quotation"
	runCases(t, []checkCase{
		{"1", id, nil, "\n  \"This entire message is wrapped in double quotation marks.\"\n  ", true},
		{"2", id, nil, "\n  \"This message is wrapped in double quotation marks.\" But not everything.\n  ", false},
	})
}

func TestJSONFormat(t *testing.T) {
	id := "detectable_format:json_format"
	runCases(t, []checkCase{
		{"plain", id, nil, `{"a": [1, 2.5e3, -0.1, true, null, "x\u00e9"]}`, true},
		{"fenced", id, nil, "```json\n{\"a\": 1}\n```", true},
		{"python literals", id, nil, `[NaN, Infinity, -Infinity]`, true},
		{"trailing comma", id, nil, `{"a": 1,}`, false},
		{"extra data", id, nil, `{"a": 1} and more`, false},
		{"prose", id, nil, "Here is the JSON: {}", false},
		{"leading zero", id, nil, `01`, false},
	})
}

func TestRegistryHas25Instructions(t *testing.T) {
	ids := InstructionIDs()
	if len(ids) != 25 {
		t.Errorf("%d instruction ids, want 25: %v", len(ids), ids)
	}
}

func TestCheckerErrors(t *testing.T) {
	for _, c := range []struct {
		id     string
		kwargs map[string]any
		want   string
	}{
		{"keywords:nonexistent", nil, "unknown instruction id"},
		{"length_constraints:number_words", kw("relation", atLeast), `missing kwarg "num_words"`},
		{"length_constraints:number_words", kw("relation", "about", "num_words", 3), `"less than" or "at least"`},
		{"length_constraints:number_words", kw("relation", atLeast, "num_words", 3, "extra", 1), `unexpected kwarg "extra"`},
		{"length_constraints:number_words", kw("relation", atLeast, "num_words", 2.5), "integer"},
		{"keywords:existence", kw("keywords", "notalist"), "list of strings"},
		{"combination:repeat_prompt", kw("prompt_to_repeat", "  "), "must be set"},
		{"length_constraints:nth_paragraph_first_word", kw("num_paragraphs", 2, "nth_paragraph", 3, "first_word", "x"), "nth_paragraph"},
		{"startend:first_word", kw("first_word", "x"), "unknown instruction id"}, // SEA-only
	} {
		_, err := NewChecker(c.id, c.kwargs, CheckerOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewChecker(%s, %v) error = %v, want %q", c.id, c.kwargs, err, c.want)
		}
	}
}

// Ported from instructions_util_test.py (test_word_count,
// test_count_sentences). split_into_sentences and generate_keywords serve
// only unregistered instructions and random descriptions.
func TestUtilWordCount(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"word1, word2, word3, word4.", 4},
		{`
      Bard can you tell me which is the best optimization method for the
      transition from an hydro-thermal system to an hydro-renewables system`, 24},
		{`
      Hyphenated-word has two word counts.
      `, 6},
	} {
		if got := countWordRuns(c.text); got != c.want {
			t.Errorf("count_words(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestUtilCountSentences(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"xx,x. xx,x! xx/x. x{x}x? x.", 5},
		{"xx,x! xxxx. x(x)x?", 3},
		{"xxxx. xx,x! xx|x. x&x x?", 4},
		{"xx-x]xx,x! x{x}xx,x.", 2},
	} {
		if got := EnglishPunkt().CountSentences(c.text); got != c.want {
			t.Errorf("count_sentences(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}
