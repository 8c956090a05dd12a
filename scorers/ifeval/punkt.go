package ifeval

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// This file is a port of the sentence splitting path of NLTK 3.8's
// nltk/tokenize/punkt.py (PunktSentenceTokenizer.tokenize with
// PunktLanguageVars defaults). The trained English parameters come from
// punkt_english.json, an export of nltk_data's english.pickle. NLTK's regular
// expressions use lookahead, which Go's regexp lacks, so they are written out
// as small scanners over runes; comments name the expression each replaces.

//go:embed punkt_english.json
var punktEnglishJSON []byte

// Orthographic context flags, as in punkt.py.
const (
	orthoBegUC = 1 << 1
	orthoMidUC = 1 << 2
	orthoUnkUC = 1 << 3
	orthoBegLC = 1 << 4
	orthoMidLC = 1 << 5
	orthoUnkLC = 1 << 6
	orthoUC    = orthoBegUC + orthoMidUC + orthoUnkUC
	orthoLC    = orthoBegLC + orthoMidLC + orthoUnkLC
)

// Punkt is a Punkt sentence tokenizer with fixed (pre-trained) parameters.
type Punkt struct {
	abbrev       map[string]bool
	collocations map[[2]string]bool
	starters     map[string]bool
	ortho        map[string]int
}

// NewPunkt builds a tokenizer from NLTK's parameters exported as JSON
// (abbrev_types, collocations, sent_starters, ortho_context).
func NewPunkt(data []byte) (*Punkt, error) {
	var raw struct {
		Abbrev       []string       `json:"abbrev_types"`
		Collocations [][2]string    `json:"collocations"`
		Starters     []string       `json:"sent_starters"`
		Ortho        map[string]int `json:"ortho_context"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("punkt parameters: %w", err)
	}
	p := &Punkt{
		abbrev:       make(map[string]bool, len(raw.Abbrev)),
		collocations: make(map[[2]string]bool, len(raw.Collocations)),
		starters:     make(map[string]bool, len(raw.Starters)),
		ortho:        raw.Ortho,
	}
	for _, a := range raw.Abbrev {
		p.abbrev[a] = true
	}
	for _, c := range raw.Collocations {
		p.collocations[c] = true
	}
	for _, s := range raw.Starters {
		p.starters[s] = true
	}
	if len(p.abbrev) == 0 || len(p.ortho) == 0 {
		return nil, fmt.Errorf("punkt parameters: abbrev_types or ortho_context empty")
	}
	return p, nil
}

// EnglishPunkt returns the tokenizer nltk.sent_tokenize uses for English.
var EnglishPunkt = sync.OnceValue(func() *Punkt {
	p, err := NewPunkt(punktEnglishJSON)
	if err != nil {
		panic(err) // embedded data; covered by tests
	}
	return p
})

// Sentences splits text into sentences exactly as
// PunktSentenceTokenizer.tokenize(text) does.
func (p *Punkt) Sentences(text string) []string {
	rs := []rune(text)
	spans := p.spans(rs)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = string(rs[sp[0]:sp[1]])
	}
	return out
}

// CountSentences is len(Sentences(text)).
func (p *Punkt) CountSentences(text string) int { return len(p.spans([]rune(text))) }

type span [2]int

// spans is span_tokenize: _slices_from_text followed by _realign_boundaries.
func (p *Punkt) spans(s []rune) []span {
	var slices []span
	last := 0
	for _, c := range p.endContexts(s) {
		if p.containsSentbreak(c.context) {
			slices = append(slices, span{last, c.pos + 1})
			if c.nextTok >= 0 {
				last = c.nextTok
			} else {
				last = c.pos + 1
			}
		}
	}
	slices = append(slices, span{last, len(rstripRunes(s))})

	var out []span
	realign := 0
	for i, s1 := range slices {
		s1[0] += realign
		if i+1 == len(slices) {
			if s1[0] < s1[1] {
				out = append(out, s1)
			}
			continue
		}
		s2 := slices[i+1]
		var t []rune
		if s2[0] < s2[1] {
			t = s[s2[0]:s2[1]]
		}
		if k, end, ok := boundaryRealignment(t); ok {
			out = append(out, span{s1[0], s2[0] + k})
			realign = end
		} else {
			realign = 0
			if s1[0] < s1[1] {
				out = append(out, s1)
			}
		}
	}
	return out
}

func rstripRunes(s []rune) []rune {
	n := len(s)
	for n > 0 && pyIsSpace(s[n-1]) {
		n--
	}
	return s[:n]
}

// boundaryRealignment matches re_boundary_realignment,
// ["\')\]}]+?(?:\s+|(?=--)|$) (MULTILINE), at the start of t. It returns the
// length of the closing punctuation and the end of the whole match.
func boundaryRealignment(t []rune) (k, end int, ok bool) {
	for k = 1; k <= len(t); k++ {
		switch t[k-1] {
		case '"', '\'', ')', ']', '}':
		default:
			return 0, 0, false
		}
		switch {
		case k < len(t) && pyIsSpace(t[k]):
			end = k
			for end < len(t) && pyIsSpace(t[end]) {
				end++
			}
			return k, end, true
		case k+1 < len(t) && t[k] == '-' && t[k+1] == '-':
			return k, k, true
		case k == len(t):
			return k, k, true
		}
	}
	return 0, 0, false
}

// endContext is one match of period_context_re with the text Punkt inspects
// around it.
type endContext struct {
	pos     int // index of the sentence-end character
	nextTok int // start of the next token, or -1 when after_tok is punctuation
	context []rune
}

// periodContext matches period_context_re at i:
// [.?!](?=(?P<after_tok>NonWord|\s+(?P<next_tok>\S+))).
// It returns the end of after_tok and the start of next_tok (or -1).
func periodContext(s []rune, i int) (afterEnd, nextTok int, ok bool) {
	if c := s[i]; c != '.' && c != '?' && c != '!' {
		return 0, 0, false
	}
	if i+1 >= len(s) {
		return 0, 0, false
	}
	if punktNonWord(s[i+1]) {
		return i + 2, -1, true
	}
	if !pyIsSpace(s[i+1]) {
		return 0, 0, false
	}
	j := i + 1
	for j < len(s) && pyIsSpace(s[j]) {
		j++
	}
	if j == len(s) {
		return 0, 0, false
	}
	k := j
	for k < len(s) && !pyIsSpace(s[k]) {
		k++
	}
	return k, j, true
}

// asciiWhitespace is Python's string.whitespace.
func asciiWhitespace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// endContexts is _match_potential_end_contexts.
func (p *Punkt) endContexts(s []rune) []endContext {
	var out []endContext
	prevStart, prevStop := 0, 0
	prev := -1
	var prevAfterEnd, prevNext int
	emit := func() {
		ctx := make([]rune, 0, prevStop-prevStart+prevAfterEnd-prev)
		if prevStart < prevStop {
			ctx = append(ctx, s[prevStart:prevStop]...)
		}
		ctx = append(ctx, s[prev:prevAfterEnd]...)
		out = append(out, endContext{pos: prev, nextTok: prevNext, context: ctx})
	}
	for i := range s {
		afterEnd, next, ok := periodContext(s, i)
		if !ok {
			continue
		}
		// _get_last_whitespace_index(text[previous_slice.stop:match.start()]);
		// an index of 0 counts as "none found", as in NLTK.
		idx := 0
		for j := i - 1; j >= prevStop; j-- {
			if asciiWhitespace(s[j]) {
				idx = j - prevStop
				break
			}
		}
		if idx != 0 {
			idx += prevStop + 1
		} else {
			idx = prevStart
		}
		if prev >= 0 && prevStop <= idx {
			emit()
		}
		prev, prevAfterEnd, prevNext = i, afterEnd, next
		prevStart, prevStop = idx, i
	}
	if prev >= 0 {
		emit()
	}
	return out
}

type punktToken struct {
	tok                  []rune
	typ                  string
	periodFinal          bool
	parastart, linestart bool
	sentbreak, abbr      bool
	ellipsis             bool
}

func newPunktToken(tok []rune) *punktToken {
	t := &punktToken{tok: tok, periodFinal: tok[len(tok)-1] == '.'}
	lower := []rune(pyLower(string(tok)))
	if isPunktNumeric(lower) {
		t.typ = "##number##"
	} else {
		t.typ = string(lower)
	}
	return t
}

// isPunktNumeric matches _RE_NUMERIC, ^-?[\.,]?\d[\d,\.-]*\.?$.
func isPunktNumeric(s []rune) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
	}
	if i >= len(s) || !pyIsDigit(s[i]) {
		return false
	}
	for _, r := range s[i+1:] {
		if !(pyIsDigit(r) || r == ',' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

func (t *punktToken) typeNoPeriod() string {
	if n := len(t.typ); n > 1 && t.typ[n-1] == '.' && len([]rune(t.typ)) > 1 {
		return t.typ[:n-1]
	}
	return t.typ
}

func (t *punktToken) typeNoSentPeriod() string {
	if t.sentbreak {
		return t.typeNoPeriod()
	}
	return t.typ
}

func (t *punktToken) firstUpper() bool { return pyRuneUpper(t.tok[0]) }
func (t *punktToken) firstLower() bool { return pyRuneLower(t.tok[0]) }

// isEllipsis matches _RE_ELLIPSIS, \.\.+$.
func (t *punktToken) isEllipsis() bool {
	if len(t.tok) < 2 {
		return false
	}
	for _, r := range t.tok {
		if r != '.' {
			return false
		}
	}
	return true
}

// isInitial matches _RE_INITIAL, [^\W\d]\.$.
func (t *punktToken) isInitial() bool {
	return len(t.tok) == 2 && t.tok[1] == '.' && pyIsWord(t.tok[0]) && !pyIsDigit(t.tok[0])
}

// punktNonWord is _re_non_word_chars: characters that cannot appear in words.
func punktNonWord(r rune) bool {
	switch r {
	case ')', '"', ';', '}', ']', '*', ':', '@', '\'', '(', '{', '[', '!', '?':
		return true
	}
	return false
}

// punktNoWordStart is the complement of _re_word_start.
func punktNoWordStart(r rune) bool {
	switch r {
	case '(', '"', '`', '{', '[', ':', ';', '&', '#', '*', '@', ')', '}', ']', '-', ',':
		return true
	}
	return false
}

// multiChar matches _re_multi_char_punct, (?:\-{2,}|\.{2,}|(?:\.\s){2,}\.),
// at i and returns the match length (0 for none).
func multiChar(s []rune, i int) int {
	n := len(s)
	if i+1 < n && s[i] == '-' && s[i+1] == '-' {
		j := i
		for j < n && s[j] == '-' {
			j++
		}
		return j - i
	}
	if i+1 < n && s[i] == '.' && s[i+1] == '.' {
		j := i
		for j < n && s[j] == '.' {
			j++
		}
		return j - i
	}
	k, j := 0, i
	for j+1 < n && s[j] == '.' && pyIsSpace(s[j+1]) {
		k++
		j += 2
	}
	if k >= 2 && j < n && s[j] == '.' {
		return 2*k + 1
	}
	if k >= 3 {
		return 2*(k-1) + 1
	}
	return 0
}

// wordEnd reports whether the lookahead that ends a word matches at e.
func wordEnd(s []rune, e int) bool {
	n := len(s)
	if e == n || pyIsSpace(s[e]) || punktNonWord(s[e]) || multiChar(s, e) > 0 {
		return true
	}
	if s[e] == ',' {
		f := e + 1
		return f == n || pyIsSpace(s[f]) || punktNonWord(s[f]) || multiChar(s, f) > 0
	}
	return false
}

// wordTokenizeLine is PunktLanguageVars.word_tokenize (the findall of
// _word_tokenize_fmt) on one line.
func wordTokenizeLine(s []rune) [][]rune {
	var toks [][]rune
	for i := 0; i < len(s); {
		if pyIsSpace(s[i]) {
			i++
			continue
		}
		if m := multiChar(s, i); m > 0 {
			toks = append(toks, s[i:i+m])
			i += m
			continue
		}
		if !punktNoWordStart(s[i]) {
			e := i + 1
			for !wordEnd(s, e) {
				e++
			}
			toks = append(toks, s[i:e])
			i = e
			continue
		}
		toks = append(toks, s[i:i+1])
		i++
	}
	return toks
}

// tokenizeWords is _tokenize_words.
func tokenizeWords(text []rune) []*punktToken {
	var out []*punktToken
	parastart := false
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != '\n' {
			continue
		}
		line := text[start:i]
		start = i + 1
		if len(rstripRunes(line)) == 0 {
			parastart = true
			continue
		}
		toks := wordTokenizeLine(line)
		if len(toks) == 0 {
			continue
		}
		for j, tk := range toks {
			t := newPunktToken(tk)
			if j == 0 {
				t.parastart, t.linestart = parastart, true
				parastart = false
			}
			out = append(out, t)
		}
	}
	return out
}

// firstPass is _first_pass_annotation.
func (p *Punkt) firstPass(t *punktToken) {
	tok := t.tok
	switch {
	case len(tok) == 1 && (tok[0] == '.' || tok[0] == '?' || tok[0] == '!'):
		t.sentbreak = true
	case t.isEllipsis():
		t.ellipsis = true
	case t.periodFinal && !(len(tok) >= 2 && tok[len(tok)-2] == '.'):
		w := []rune(pyLower(string(tok[:len(tok)-1])))
		last := w
		for j := len(w) - 1; j >= 0; j-- {
			if w[j] == '-' {
				last = w[j+1:]
				break
			}
		}
		if p.abbrev[string(w)] || p.abbrev[string(last)] {
			t.abbr = true
		} else {
			t.sentbreak = true
		}
	}
}

// orthoHeuristic is _ortho_heuristic: 1 = sentence starter, 0 = not, -1 = unknown.
func (p *Punkt) orthoHeuristic(t *punktToken) int {
	if len(t.tok) == 1 {
		switch t.tok[0] {
		case ';', ':', ',', '.', '!', '?':
			return 0
		}
	}
	oc := p.ortho[t.typeNoSentPeriod()]
	if t.firstUpper() && oc&orthoLC != 0 && oc&orthoMidUC == 0 {
		return 1
	}
	if t.firstLower() && (oc&orthoUC != 0 || oc&orthoBegLC == 0) {
		return 0
	}
	return -1
}

// secondPass is _second_pass_annotation.
func (p *Punkt) secondPass(t1, t2 *punktToken) {
	if t2 == nil || !t1.periodFinal {
		return
	}
	typ := t1.typeNoPeriod()
	next := t2.typeNoSentPeriod()
	initial := t1.isInitial()
	if p.collocations[[2]string{typ, next}] {
		t1.sentbreak, t1.abbr = false, true
		return
	}
	if (t1.abbr || t1.ellipsis) && !initial {
		if p.orthoHeuristic(t2) == 1 {
			t1.sentbreak = true
			return
		}
		if t2.firstUpper() && p.starters[next] {
			t1.sentbreak = true
			return
		}
	}
	if initial || typ == "##number##" {
		h := p.orthoHeuristic(t2)
		if h == 0 {
			t1.sentbreak, t1.abbr = false, true
			return
		}
		if h == -1 && initial && t2.firstUpper() && p.ortho[next]&orthoLC == 0 {
			t1.sentbreak, t1.abbr = false, true
		}
	}
}

// containsSentbreak is text_contains_sentbreak: a sentence break on any token
// but the last.
func (p *Punkt) containsSentbreak(text []rune) bool {
	toks := tokenizeWords(text)
	for _, t := range toks {
		p.firstPass(t)
	}
	for i, t := range toks {
		var next *punktToken
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		p.secondPass(t, next)
		if t.sentbreak && next != nil {
			return true
		}
	}
	return false
}
