package ifeval

import (
	"regexp"
	"strings"
)

// WordTokenize is nltk.word_tokenize(text) (NLTK 3.8): Punkt sentences, each
// split by NLTKWordTokenizer, the improved Treebank tokenizer.
func WordTokenize(text string) []string {
	var out []string
	for _, s := range EnglishPunkt().Sentences(text) {
		out = append(out, treebankTokenize(s)...)
	}
	return out
}

type subst struct {
	re   *regexp.Regexp
	repl string
}

func sub(expr, repl string) subst { return subst{regexp.MustCompile(expr), repl} }

// The substitutions of nltk/tokenize/destructive.py, in order. Python's \s
// and \d are Unicode classes; pyWS and \p{Nd} stand in for them. The rules
// that need lookahead or Unicode \b are functions below.
var (
	tbStartingQuotes = []subst{
		sub("([«“‘„]|[`]+)", " $1 "),
		sub(`^"`, "``"),
		sub("(``)", " $1 "),
		sub(`([ \(\[{<])("|'{2})`, "$1 `` "),
	}
	tbPunctuation = []subst{
		sub(`([^\.])(\.)([\]\)}>"'»”’ ]*)`+pyWS+`*$`, "$1 $2 $3 "),
		sub(`([:,])([^\p{Nd}])`, " $1 $2"),
		sub(`([:,])$`, " $1 "),
		sub(`\.{2,}`, " $0 "),
		sub(`[;@#$%&]`, " $0 "),
		sub(`([^\.])(\.)([\]\)}>"']*)`+pyWS+`*$`, "$1 $2$3 "),
		sub(`[?!]`, " $0 "),
		sub(`([^'])' `, "$1 ' "),
		sub(`[*]`, " $0 "),
	}
	tbParens       = sub(`[\]\[\(\)\{\}\<\>]`, " $0 ")
	tbDoubleDashes = sub(`--`, " -- ")
	tbEndingQuotes = []subst{
		sub("([»”’])", " $1 "),
		sub(`''`, " '' "),
		sub(`"`, " '' "),
		sub(`([^' ])('[sS]|'[mM]|'[dD]|') `, "$1 $2 "),
		sub(`([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) `, "$1 $2 "),
	}
	// CONTRACTIONS2 and CONTRACTIONS3 without their \b and (?=\s) edges,
	// which contractionSub checks with Python's Unicode definitions.
	tbContractions = []struct {
		re                     *regexp.Regexp
		leftB, rightB, rightWS bool
	}{
		{regexp.MustCompile(`(?i)(can)(not)`), true, true, false},
		{regexp.MustCompile(`(?i)(d)('ye)`), true, true, false},
		{regexp.MustCompile(`(?i)(gim)(me)`), true, true, false},
		{regexp.MustCompile(`(?i)(gon)(na)`), true, true, false},
		{regexp.MustCompile(`(?i)(got)(ta)`), true, true, false},
		{regexp.MustCompile(`(?i)(lem)(me)`), true, true, false},
		{regexp.MustCompile(`(?i)(more)('n)`), true, true, false},
		{regexp.MustCompile(`(?i)(wan)(na)`), true, false, true},
		{regexp.MustCompile(`(?i) ('t)(is)`), false, true, false},
		{regexp.MustCompile(`(?i) ('t)(was)`), false, true, false},
	}
)

func treebankTokenize(text string) []string {
	for _, s := range tbStartingQuotes {
		text = s.re.ReplaceAllString(text, s.repl)
	}
	text = splitQuoteLetter(text)
	for _, s := range tbPunctuation {
		text = s.re.ReplaceAllString(text, s.repl)
	}
	text = tbParens.re.ReplaceAllString(text, tbParens.repl)
	text = tbDoubleDashes.re.ReplaceAllString(text, tbDoubleDashes.repl)
	text = " " + text + " "
	for _, s := range tbEndingQuotes {
		text = s.re.ReplaceAllString(text, s.repl)
	}
	for _, c := range tbContractions {
		text = contractionSub(text, c.re, c.leftB, c.rightB, c.rightWS)
	}
	return pySplit(text)
}

// splitQuoteLetter is the last STARTING_QUOTES rule,
// (?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b -> "\1 \2": a quote followed by a
// single word character that does not start a contraction.
func splitQuoteLetter(s string) string {
	if !strings.Contains(s, "'") {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	for i := 0; i < len(rs); i++ {
		b.WriteRune(rs[i])
		if rs[i] != '\'' || i+1 >= len(rs) || !pyIsWord(rs[i+1]) {
			continue
		}
		if i+2 < len(rs) && pyIsWord(rs[i+2]) {
			continue // no \b after the single character
		}
		switch rs[i+1] {
		case 'm', 't', 's', 'd', 'n', 'M', 'T', 'S', 'D', 'N', 'ſ':
			continue // (?!m|t|s|d|n) under IGNORECASE, where ſ folds to s
		}
		b.WriteString(" ")
		b.WriteRune(rs[i+1])
		i++
	}
	return b.String()
}

// contractionSub replaces matches of re by " \1 \2 " where the \b (and
// (?=\s)) edges hold under Python's Unicode rules.
func contractionSub(s string, re *regexp.Regexp, leftB, rightB, rightWS bool) string {
	locs := re.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range locs {
		if leftB && !isBoundary(s, m[0]) {
			continue
		}
		if rightB && !isBoundary(s, m[1]) {
			continue
		}
		if rightWS && (m[1] >= len(s) || !pyIsSpace([]rune(s[m[1]:])[0])) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(" " + s[m[2]:m[3]] + " " + s[m[4]:m[5]] + " ")
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
