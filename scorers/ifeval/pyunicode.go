package ifeval

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Python's str methods and its re module classify characters with Unicode
// properties, while Go's regexp classes (\s, \w, \d, \b) are ASCII-only. The
// checkers must count what Python counts, so these helpers spell out
// Python's definitions.

// pyIsSpace reports whether Python's str.isspace (and re's \s) accepts r:
// bidirectional class WS, B or S, or category Zs.
func pyIsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, ' ', 0x85, 0xa0,
		0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// pyWS is pyIsSpace as a Go regexp class, to stand in for Python's \s.
const pyWS = `[\t\n\v\f\r\x{1c}-\x{1f} \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

// pyIsWord reports whether Python's re \w accepts r: alphanumeric or '_'.
// Combining marks are not \w in Python.
func pyIsWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// pyIsDigit is Python's re \d: decimal digits (category Nd).
func pyIsDigit(r rune) bool { return unicode.Is(unicode.Nd, r) }

// pyRuneUpper and pyRuneLower are Python's per-character "Uppercase" and
// "Lowercase" properties (Lu/Ll plus Other_Uppercase/Other_Lowercase).
func pyRuneUpper(r rune) bool { return unicode.IsUpper(r) || unicode.Is(unicode.Other_Uppercase, r) }
func pyRuneLower(r rune) bool { return unicode.IsLower(r) || unicode.Is(unicode.Other_Lowercase, r) }

// pyIsUpper is str.isupper: no lower or title case character and at least
// one upper case character.
func pyIsUpper(s string) bool {
	cased := false
	for _, r := range s {
		if pyRuneLower(r) || unicode.IsTitle(r) {
			return false
		}
		if pyRuneUpper(r) {
			cased = true
		}
	}
	return cased
}

// pyIsLower is str.islower.
func pyIsLower(s string) bool {
	cased := false
	for _, r := range s {
		if pyRuneUpper(r) || unicode.IsTitle(r) {
			return false
		}
		if pyRuneLower(r) {
			cased = true
		}
	}
	return cased
}

// pyStrip is str.strip() with no argument.
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyLower is str.lower(). It differs from strings.ToLower only for U+0130,
// whose full lower case mapping in Python is "i̇" (two code points).
func pyLower(s string) string {
	if strings.ContainsRune(s, 'İ') {
		s = strings.ReplaceAll(s, "İ", "i\u0307")
	}
	return strings.ToLower(s)
}

// pySplit is str.split() with no argument.
func pySplit(s string) []string { return strings.FieldsFunc(s, pyIsSpace) }

// countWordRuns counts maximal runs of \w characters, which is what
// nltk.tokenize.RegexpTokenizer(r"\w+") returns and IFEval counts as words.
func countWordRuns(s string) int {
	n, in := 0, false
	for _, r := range s {
		w := pyIsWord(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// isBoundary is Python's \b at byte offset i of s.
func isBoundary(s string, i int) bool {
	before, after := false, false
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		before = pyIsWord(r)
	}
	if i < len(s) {
		r, _ := utf8.DecodeRuneInString(s[i:])
		after = pyIsWord(r)
	}
	return before != after
}
