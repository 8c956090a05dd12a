package ifeval

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Checker decides whether a response follows one instruction.
type Checker interface {
	Check(response string) bool
}

type checkFunc func(string) bool

func (f checkFunc) Check(s string) bool { return f(s) }

// CheckerOptions carry what a checker needs beyond its kwargs.
type CheckerOptions struct {
	// Lang is the prompt language; it picks the constrained_response options
	// of SEA-IFEval prompts.
	Lang string
	// SEA enables the SEA-IFEval dialect: relation "exactly" and the two
	// SEA-only instruction ids.
	SEA bool
	// Seed drives the deterministic stand-in for IFEval's random choices
	// (letter_frequency naming a non-letter).
	Seed uint64
}

// instructionSpec is one registry entry: its kwargs and its constructor.
type instructionSpec struct {
	keys  []string
	sea   bool // SEA-IFEval only
	build func(a *kwargs, opt CheckerOptions) (checkFunc, error)
}

// InstructionIDs lists the instruction ids of the official IFEval registry
// (instructions_registry.INSTRUCTION_DICT), sorted.
func InstructionIDs() []string {
	var ids []string
	for id, s := range registry {
		if !s.sea {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// NewChecker builds the checker for one instruction id and its kwargs
// (decoded JSON). Unknown ids, unknown or missing kwargs and values IFEval
// would reject are errors.
func NewChecker(id string, kw map[string]any, opt CheckerOptions) (Checker, error) {
	spec, ok := registry[id]
	if !ok || spec.sea && !opt.SEA {
		return nil, fmt.Errorf("unknown instruction id %q", id)
	}
	for k, v := range kw {
		if v != nil && !slices.Contains(spec.keys, k) {
			return nil, fmt.Errorf("instruction %q: unexpected kwarg %q", id, k)
		}
	}
	a := &kwargs{id: id, m: kw}
	f, err := spec.build(a, opt)
	if err == nil {
		err = a.err
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// kwargs reads typed arguments, remembering the first error.
type kwargs struct {
	id  string
	m   map[string]any
	err error
}

func (a *kwargs) fail(format string, args ...any) {
	if a.err == nil {
		a.err = fmt.Errorf("instruction %q: "+format, append([]any{a.id}, args...)...)
	}
}

func (a *kwargs) raw(k string) (any, bool) {
	v, ok := a.m[k]
	if !ok || v == nil {
		a.fail("missing kwarg %q", k)
		return nil, false
	}
	return v, true
}

func (a *kwargs) int(k string) int {
	v, ok := a.raw(k)
	if !ok {
		return 0
	}
	f, isNum := v.(float64)
	if !isNum || f != float64(int(f)) {
		a.fail("kwarg %q must be an integer, got %v", k, v)
		return 0
	}
	if f < 0 {
		a.fail("kwarg %q must not be negative, got %v", k, v)
	}
	return int(f)
}

func (a *kwargs) str(k string) string {
	v, ok := a.raw(k)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		a.fail("kwarg %q must be a string, got %v", k, v)
	}
	return s
}

func (a *kwargs) strs(k string) []string {
	v, ok := a.raw(k)
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	if !isList || len(list) == 0 {
		a.fail("kwarg %q must be a non-empty list of strings, got %v", k, v)
		return nil
	}
	out := make([]string, len(list))
	for i, x := range list {
		s, isStr := x.(string)
		if !isStr {
			a.fail("kwarg %q: element %d is not a string", k, i)
		}
		out[i] = s
	}
	return out
}

// relation returns the comparison for a relation kwarg ("less than" or
// "at least"; SEA-IFEval adds "exactly").
func (a *kwargs) relation(k string, sea bool) func(n, threshold int) bool {
	switch r := a.str(k); {
	case r == "less than":
		return func(n, t int) bool { return n < t }
	case r == "at least":
		return func(n, t int) bool { return n >= t }
	case r == "exactly" && sea:
		return func(n, t int) bool { return n == t }
	default:
		if a.err == nil {
			a.fail("kwarg %q must be \"less than\" or \"at least\", got %q", k, r)
		}
		return func(int, int) bool { return false }
	}
}

// pyRegexp compiles a pattern given as Python regex text. IFEval feeds
// keywords and markers to re as patterns; for the plain words in the data
// Go's syntax is the same.
func (a *kwargs) pyRegexp(expr string) *regexp.Regexp {
	re, err := regexp.Compile(expr)
	if err != nil {
		a.fail("pattern %q: %v", expr, err)
		return regexp.MustCompile(`$^`)
	}
	return re
}

var (
	rePlaceholder = regexp.MustCompile(`\[.*?\]`)
	reBulletStar  = regexp.MustCompile(`(?m)^` + pyWS + `*\*[^\*].*$`)
	reBulletDash  = regexp.MustCompile(`(?m)^` + pyWS + `*-.*$`)
	reHighlight   = regexp.MustCompile(`\*[^\n\*]*\*`)
	reHighlight2  = regexp.MustCompile(`\*\*[^\n\*]*\*\*`)
	reParagraphs  = regexp.MustCompile(pyWS + `?\*\*\*` + pyWS + `?`)
	reTitle       = regexp.MustCompile(`<<[^\n]+>>`)
	rePS          = regexp.MustCompile(`(?m)` + pyWS + `*p\.` + pyWS + `?s\..*$`)
	rePPS         = regexp.MustCompile(`(?m)` + pyWS + `*p\.` + pyWS + `?p\.` + pyWS + `?s.*$`)
)

// constrainedOptions are the answers of detectable_format:constrained_response:
// IFEval's English options, and SEA-HELM's translations for SEA-IFEval.
var constrainedOptions = map[string][]string{
	"en": {"My answer is yes.", "My answer is no.", "My answer is maybe."},
	"id": {"Jawaban saya adalah ya.", "Jawaban saya adalah tidak.", "Jawaban saya adalah mungkin."},
	"ms": {"Jawapan saya ialah ya.", "Jawapan saya ialah tidak.", "Jawapan saya ialah mungkin."},
}

// detectIs reports langdetect's verdict; a text langdetect cannot classify
// counts as following the instruction, as in IFEval.
func detectIs(s, lang string) bool {
	got, err := DetectLanguage(s)
	if err != nil {
		return true
	}
	return got == lang
}

var registry = map[string]instructionSpec{
	"keywords:existence": {keys: []string{"keywords"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		var res []*regexp.Regexp
		for _, k := range a.strs("keywords") {
			res = append(res, a.pyRegexp("(?i)"+k))
		}
		return func(s string) bool {
			for _, re := range res {
				if !re.MatchString(s) {
					return false
				}
			}
			return true
		}, nil
	}},
	"keywords:frequency": {keys: []string{"keyword", "frequency", "relation"}, build: func(a *kwargs, o CheckerOptions) (checkFunc, error) {
		re := a.pyRegexp("(?i)" + pyStrip(a.str("keyword")))
		n, rel := a.int("frequency"), a.relation("relation", o.SEA)
		return func(s string) bool { return rel(len(re.FindAllStringIndex(s, -1)), n) }, nil
	}},
	"keywords:forbidden_words": {keys: []string{"forbidden_words"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		var res []*regexp.Regexp
		for _, w := range a.strs("forbidden_words") {
			res = append(res, a.pyRegexp("(?i)(?:"+w+")"))
		}
		return func(s string) bool {
			for _, re := range res {
				if searchBounded(re, s) {
					return false
				}
			}
			return true
		}, nil
	}},
	"keywords:letter_frequency": {keys: []string{"letter", "let_frequency", "let_relation"}, build: func(a *kwargs, o CheckerOptions) (checkFunc, error) {
		if v := a.m["letter"]; v != nil {
			if _, isStr := v.(string); !isStr {
				a.fail("kwarg \"letter\" must be a string, got %v", v)
			}
		}
		letter := chooseLetter(a.m["letter"], o.Seed)
		n, rel := a.int("let_frequency"), a.relation("let_relation", o.SEA)
		return func(s string) bool {
			count := 0
			for _, r := range pyLower(s) {
				if r == letter {
					count++
				}
			}
			return rel(count, n)
		}, nil
	}},
	"language:response_language": {keys: []string{"language"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		lang := a.str("language")
		return func(s string) bool { return detectIs(s, lang) }, nil
	}},
	"length_constraints:number_sentences": {keys: []string{"num_sentences", "relation"}, build: func(a *kwargs, o CheckerOptions) (checkFunc, error) {
		n, rel := a.int("num_sentences"), a.relation("relation", o.SEA)
		return func(s string) bool { return rel(EnglishPunkt().CountSentences(s), n) }, nil
	}},
	"length_constraints:number_paragraphs": {keys: []string{"num_paragraphs"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		n := a.int("num_paragraphs")
		return func(s string) bool {
			parts := reParagraphs.Split(s, -1)
			count := len(parts)
			for i, p := range parts {
				if pyStrip(p) == "" {
					if i == 0 || i == len(parts)-1 {
						count--
					} else {
						return false
					}
				}
			}
			return count == n
		}, nil
	}},
	"length_constraints:number_words": {keys: []string{"num_words", "relation"}, build: func(a *kwargs, o CheckerOptions) (checkFunc, error) {
		n, rel := a.int("num_words"), a.relation("relation", o.SEA)
		return func(s string) bool { return rel(countWordRuns(s), n) }, nil
	}},
	"length_constraints:nth_paragraph_first_word": {keys: []string{"num_paragraphs", "nth_paragraph", "first_word"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		num, nth, word := a.int("num_paragraphs"), a.int("nth_paragraph"), pyLower(a.str("first_word"))
		if a.err == nil && (nth <= 0 || nth > num) {
			a.fail("nth_paragraph %d must be in 1..num_paragraphs (%d)", nth, num)
		}
		return func(s string) bool { return nthParagraphFirstWord(s, num, nth, word) }, nil
	}},
	"detectable_content:number_placeholders": {keys: []string{"num_placeholders"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		n := a.int("num_placeholders")
		return func(s string) bool { return len(rePlaceholder.FindAllStringIndex(s, -1)) >= n }, nil
	}},
	"detectable_content:postscript": {keys: []string{"postscript_marker"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		marker := pyStrip(a.str("postscript_marker"))
		var re *regexp.Regexp
		switch marker {
		case "P.P.S":
			re = rePPS
		case "P.S.":
			re = rePS
		default:
			re = a.pyRegexp(`(?m)` + pyWS + `*` + pyLower(marker) + `.*$`)
		}
		return func(s string) bool { return re.MatchString(pyLower(s)) }, nil
	}},
	"detectable_format:number_bullet_lists": {keys: []string{"num_bullets"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		n := a.int("num_bullets")
		return func(s string) bool {
			return len(reBulletStar.FindAllStringIndex(s, -1))+len(reBulletDash.FindAllStringIndex(s, -1)) == n
		}, nil
	}},
	"detectable_format:constrained_response": {build: func(a *kwargs, o CheckerOptions) (checkFunc, error) {
		opts := constrainedOptions["en"]
		if o.SEA {
			var ok bool
			if opts, ok = constrainedOptions[o.Lang]; !ok {
				a.fail("no constrained_response options for language %q", o.Lang)
			}
		}
		return func(s string) bool {
			s = pyStrip(s)
			for _, o := range opts {
				if strings.Contains(s, o) {
					return true
				}
			}
			return false
		}, nil
	}},
	"detectable_format:number_highlighted_sections": {keys: []string{"num_highlights"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		n := a.int("num_highlights")
		return func(s string) bool {
			count := 0
			for _, h := range reHighlight.FindAllString(s, -1) {
				if pyStrip(strings.Trim(h, "*")) != "" {
					count++
				}
			}
			for _, h := range reHighlight2.FindAllString(s, -1) {
				if pyStrip(strings.TrimSuffix(strings.TrimPrefix(h, "**"), "**")) != "" {
					count++
				}
			}
			return count >= n
		}, nil
	}},
	"detectable_format:multiple_sections": {keys: []string{"section_spliter", "num_sections"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		re := a.pyRegexp(pyWS + `?` + pyStrip(a.str("section_spliter")) + pyWS + `?\p{Nd}+` + pyWS + `?`)
		n := a.int("num_sections")
		return func(s string) bool { return len(re.FindAllStringIndex(s, -1)) >= n }, nil
	}},
	"detectable_format:json_format": {build: func(*kwargs, CheckerOptions) (checkFunc, error) {
		return func(s string) bool {
			s = pyStrip(s)
			for _, p := range []string{"```json", "```Json", "```JSON", "```"} {
				s = strings.TrimPrefix(s, p)
			}
			return pyJSONValid(pyStrip(strings.TrimSuffix(s, "```")))
		}, nil
	}},
	"detectable_format:title": {build: func(*kwargs, CheckerOptions) (checkFunc, error) {
		return func(s string) bool {
			for _, t := range reTitle.FindAllString(s, -1) {
				if pyStrip(strings.TrimRight(strings.TrimLeft(t, "<"), ">")) != "" {
					return true
				}
			}
			return false
		}, nil
	}},
	"combination:two_responses": {build: func(*kwargs, CheckerOptions) (checkFunc, error) {
		return func(s string) bool {
			var valid []string
			parts := strings.Split(s, "******")
			for i, p := range parts {
				if pyStrip(p) == "" {
					if i != 0 && i != len(parts)-1 {
						return false
					}
				} else {
					valid = append(valid, p)
				}
			}
			return len(valid) == 2 && pyStrip(valid[0]) != pyStrip(valid[1])
		}, nil
	}},
	"combination:repeat_prompt": {keys: []string{"prompt_to_repeat"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		p := pyLower(pyStrip(a.str("prompt_to_repeat")))
		if a.err == nil && p == "" {
			a.fail("prompt_to_repeat must be set")
		}
		return func(s string) bool { return strings.HasPrefix(pyLower(pyStrip(s)), p) }, nil
	}},
	"startend:end_checker": {keys: []string{"end_phrase"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		end := pyLower(pyStrip(a.str("end_phrase")))
		return func(s string) bool { return strings.HasSuffix(pyLower(strings.Trim(pyStrip(s), `"`)), end) }, nil
	}},
	"change_case:capital_word_frequency": {keys: []string{"capital_frequency", "capital_relation"}, build: func(a *kwargs, o CheckerOptions) (checkFunc, error) {
		n, rel := a.int("capital_frequency"), a.relation("capital_relation", o.SEA)
		return func(s string) bool {
			count := 0
			for _, w := range WordTokenize(s) {
				if pyIsUpper(w) {
					count++
				}
			}
			return rel(count, n)
		}, nil
	}},
	"change_case:english_capital": {build: func(*kwargs, CheckerOptions) (checkFunc, error) {
		return func(s string) bool { return pyIsUpper(s) && detectIs(s, "en") }, nil
	}},
	"change_case:english_lowercase": {build: func(*kwargs, CheckerOptions) (checkFunc, error) {
		return func(s string) bool { return pyIsLower(s) && detectIs(s, "en") }, nil
	}},
	"punctuation:no_comma": {build: func(*kwargs, CheckerOptions) (checkFunc, error) {
		return func(s string) bool { return !strings.Contains(s, ",") }, nil
	}},
	"startend:quotation": {build: func(*kwargs, CheckerOptions) (checkFunc, error) {
		return func(s string) bool {
			s = pyStrip(s)
			return len(s) > 1 && s[0] == '"' && s[len(s)-1] == '"'
		}, nil
	}},

	// SEA-IFEval additions, with SEA-HELM's semantics.
	"keywords:number_frequency": {sea: true, keys: []string{"number", "frequency", "relation"}, build: func(a *kwargs, o CheckerOptions) (checkFunc, error) {
		re := a.pyRegexp(numberString(a))
		n, rel := a.int("frequency"), a.relation("relation", o.SEA)
		return func(s string) bool { return rel(len(re.FindAllStringIndex(s, -1)), n) }, nil
	}},
	"startend:first_word": {sea: true, keys: []string{"first_word"}, build: func(a *kwargs, _ CheckerOptions) (checkFunc, error) {
		w := pyLower(a.str("first_word"))
		return func(s string) bool { return strings.HasPrefix(pyLower(pyStrip(s)), w) }, nil
	}},
}

// numberString reads the "number" kwarg of keywords:number_frequency, which
// SEA-HELM uses as a pattern whether it is written as a string or a number.
func numberString(a *kwargs) string {
	v, ok := a.raw("number")
	if !ok {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return fmt.Sprint(x)
	}
	a.fail("kwarg \"number\" must be a string or number, got %v", v)
	return ""
}

// searchBounded is re.search(r"\b" + word + r"\b", s) with Python's Unicode
// word boundaries: it tries every start position, as Python does.
func searchBounded(re *regexp.Regexp, s string) bool {
	for off := 0; off <= len(s); {
		loc := re.FindStringIndex(s[off:])
		if loc == nil {
			return false
		}
		start, end := off+loc[0], off+loc[1]
		if isBoundary(s, start) && isBoundary(s, end) {
			return true
		}
		// A match with the same start but a different length is possible
		// only with alternation; IFEval's words are literals.
		if start == len(s) {
			return false
		}
		_, size := utf8.DecodeRuneInString(s[start:])
		off = start + size
	}
	return false
}

// chooseLetter returns the letter of keywords:letter_frequency. IFEval draws
// random.choice(string.ascii_letters) when the kwarg is not a single letter;
// here the draw comes from a PCG seeded with the prompt's seed, so the same
// prompt always checks the same letter.
func chooseLetter(v any, seed uint64) rune {
	if s, ok := v.(string); ok {
		rs := []rune(s)
		if len(rs) == 1 && unicode.IsLetter(rs[0]) {
			return []rune(pyLower(s))[0]
		}
	}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	r := rand.New(rand.NewPCG(seed, 0x1f3a5c7e9b2d4f60))
	return unicode.ToLower(rune(letters[r.IntN(len(letters))]))
}

// nthParagraphFirstWord is ParagraphFirstWordCheck.check_following.
func nthParagraphFirstWord(s string, num, nth int, want string) bool {
	paragraphs := strings.Split(s, "\n\n")
	count := len(paragraphs)
	for _, p := range paragraphs {
		if pyStrip(p) == "" {
			count--
		}
	}
	if nth > count {
		return false
	}
	p := pyStrip(paragraphs[nth-1])
	if p == "" {
		return false
	}
	word := pySplit(p)[0]
	word = strings.TrimLeft(strings.TrimLeft(word, "'"), `"`)
	var first strings.Builder
	for _, r := range word {
		if strings.ContainsRune(".,?!'\"", r) {
			break
		}
		first.WriteString(pyLower(string(r)))
	}
	return count == num && first.String() == want
}
