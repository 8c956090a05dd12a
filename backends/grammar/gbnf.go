// Package grammar constrains generation to a formal grammar the way
// llama.cpp does: a JSON Schema becomes a GBNF grammar (SchemaGBNF, after
// llama.cpp's common/json-schema-to-grammar.cpp), the grammar is parsed into
// llama.cpp's element form (Parse, after src/llama-grammar.cpp), and a
// Constraint says, before each token, which tokens of a vocabulary the
// grammar can still accept, so a sampler masks the others.
//
// Matching follows llama.cpp's pushdown stacks over Unicode code points,
// including its handling of tokens that end inside a UTF-8 sequence, so a
// grammar accepts the same token sequences as llama-server's. What differs is
// only how the work is organised: stacks and stack sets are interned, and the
// allowed-token mask of each grammar state is computed once (by walking a trie
// of the vocabulary's code points) and then reused.
package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// elemType is llama.cpp's llama_gretype.
type elemType uint8

const (
	tEnd      elemType = iota // end of a rule definition
	tAlt                      // start of an alternate definition
	tRef                      // a rule reference
	tChar                     // a character, or the start of a set
	tCharNot                  // the start of an inverse set [^...]
	tRngUpper                 // the upper end of a range after tChar/tCharNot/tCharAlt
	tCharAlt                  // another character or range in a set
	tAny                      // any character (.)
)

type elem struct {
	t elemType
	v uint32
}

// maxRepetition is llama.cpp's MAX_REPETITION_THRESHOLD: a larger upper
// bound of x{m,n} becomes unbounded, as llama.cpp does.
const maxRepetition = 2000

// Grammar is a parsed GBNF grammar. Rules are stored back to back in one
// element slice, so a grammar position is an index (llama.cpp's pointer).
type Grammar struct {
	elems []elem
	start []int32 // start[r]: index of rule r's first element
	root  int
	text  string
}

// String returns the GBNF text the grammar was parsed from.
func (g *Grammar) String() string { return g.text }

// parser is llama_grammar_parser: rules by symbol id, in definition form.
type parser struct {
	src     string
	symbols map[string]uint32
	names   []string
	rules   [][]elem
}

// Parse reads a GBNF grammar whose start rule is root.
func Parse(src string) (*Grammar, error) {
	p := &parser{src: src, symbols: map[string]uint32{}}
	if err := p.parse(); err != nil {
		return nil, fmt.Errorf("grammar: %w", err)
	}
	root, ok := p.symbols["root"]
	if !ok {
		return nil, fmt.Errorf("grammar: no root rule")
	}
	g := &Grammar{root: int(root), text: src}
	for _, r := range p.rules {
		g.start = append(g.start, int32(len(g.elems)))
		g.elems = append(g.elems, r...)
	}
	if r, ok := g.leftRecursive(); ok {
		return nil, fmt.Errorf("grammar: rule %q is left-recursive", p.names[r])
	}
	return g, nil
}

func (p *parser) symbol(name string) uint32 {
	if id, ok := p.symbols[name]; ok {
		return id
	}
	id := uint32(len(p.names))
	p.symbols[name] = id
	p.names = append(p.names, name)
	p.rules = append(p.rules, nil)
	return id
}

// newSymbol is generate_symbol_id: a fresh rule for a group or repetition.
func (p *parser) newSymbol(base string) uint32 {
	id := uint32(len(p.names))
	name := base + "_" + strconv.Itoa(int(id))
	p.symbols[name] = id
	p.names = append(p.names, name)
	p.rules = append(p.rules, nil)
	return id
}

func (p *parser) errAt(pos int, msg string) error {
	rest := p.src[pos:]
	if len(rest) > 40 {
		rest = rest[:40] + "…"
	}
	return fmt.Errorf("%s at %q", msg, rest)
}

func (p *parser) at(pos int) byte {
	if pos < len(p.src) {
		return p.src[pos]
	}
	return 0
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c >= '0' && c <= '9'
}

func (p *parser) space(pos int, newlineOK bool) int {
	for {
		c := p.at(pos)
		switch {
		case c == '#':
			for pos < len(p.src) && p.src[pos] != '\r' && p.src[pos] != '\n' {
				pos++
			}
		case c == ' ' || c == '\t' || newlineOK && (c == '\r' || c == '\n'):
			pos++
		default:
			return pos
		}
	}
}

func (p *parser) parse() error {
	pos := p.space(0, true)
	for pos < len(p.src) {
		var err error
		if pos, err = p.rule(pos); err != nil {
			return err
		}
	}
	for id, r := range p.rules {
		if len(r) == 0 {
			return fmt.Errorf("undefined rule %q", p.names[id])
		}
	}
	return nil
}

func (p *parser) rule(pos int) (int, error) {
	end := pos
	for isWordChar(p.at(end)) {
		end++
	}
	if end == pos {
		return 0, p.errAt(pos, "expecting a rule name")
	}
	name := p.src[pos:end]
	id := p.symbol(name)
	pos = p.space(end, false)
	if !strings.HasPrefix(p.src[pos:], "::=") {
		return 0, p.errAt(pos, "expecting ::=")
	}
	pos, err := p.alternates(p.space(pos+3, true), name, id, false)
	if err != nil {
		return 0, err
	}
	switch {
	case p.at(pos) == '\r':
		pos++
		if p.at(pos) == '\n' {
			pos++
		}
	case p.at(pos) == '\n':
		pos++
	case pos < len(p.src):
		return 0, p.errAt(pos, "expecting newline or end")
	}
	return p.space(pos, true), nil
}

func (p *parser) alternates(pos int, name string, id uint32, nested bool) (int, error) {
	var rule []elem
	pos, err := p.sequence(pos, name, &rule, nested)
	if err != nil {
		return 0, err
	}
	for p.at(pos) == '|' {
		rule = append(rule, elem{tAlt, 0})
		if pos, err = p.sequence(p.space(pos+1, true), name, &rule, nested); err != nil {
			return 0, err
		}
	}
	rule = append(rule, elem{tEnd, 0})
	p.rules[id] = rule
	return pos, nil
}

// char reads one character of a literal or set: an escape or a UTF-8 sequence.
func (p *parser) char(pos int) (uint32, int, error) {
	if pos >= len(p.src) {
		return 0, 0, fmt.Errorf("unexpected end of input")
	}
	if p.src[pos] != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[pos:])
		return uint32(r), pos + n, nil
	}
	hex := func(n int) (uint32, int, error) {
		if pos+2+n > len(p.src) {
			return 0, 0, p.errAt(pos, fmt.Sprintf("expecting %d hex digits", n))
		}
		v, err := strconv.ParseUint(p.src[pos+2:pos+2+n], 16, 32)
		if err != nil {
			return 0, 0, p.errAt(pos, fmt.Sprintf("expecting %d hex digits", n))
		}
		return uint32(v), pos + 2 + n, nil
	}
	switch p.at(pos + 1) {
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	case 't':
		return '\t', pos + 2, nil
	case 'r':
		return '\r', pos + 2, nil
	case 'n':
		return '\n', pos + 2, nil
	case '\\', '"', '[', ']', '-':
		return uint32(p.src[pos+1]), pos + 2, nil
	}
	return 0, 0, p.errAt(pos, "unknown escape")
}

func (p *parser) int(pos int) (uint64, int, error) {
	end := pos
	for p.at(end) >= '0' && p.at(end) <= '9' {
		end++
	}
	if end == pos {
		return 0, 0, p.errAt(pos, "expecting an integer")
	}
	v, err := strconv.ParseUint(p.src[pos:end], 10, 64)
	if err != nil {
		return 0, 0, p.errAt(pos, "integer out of range")
	}
	return v, end, nil
}

const unbounded = ^uint64(0)

func (p *parser) sequence(pos int, name string, rule *[]elem, nested bool) (int, error) {
	lastSym := len(*rule)
	nPrevRules := uint64(1)

	// repeat rewrites the last symbol as llama.cpp does:
	// S{m,n} → S…S (m times) S'(n-m), S'(x) ::= S S'(x-1) |, and S{m,} → S…S S', S' ::= S S' |.
	repeat := func(minT, maxT uint64) error {
		noMax := maxT == unbounded
		if lastSym == len(*rule) {
			return p.errAt(pos, "expecting an item before */+/?/{")
		}
		prev := append([]elem(nil), (*rule)[lastSym:]...)
		total := uint64(1)
		if !noMax && maxT > 0 {
			total = maxT
		} else if minT > 0 {
			total = minT
		}
		if nPrevRules*total >= maxRepetition {
			return p.errAt(pos, "too many repetitions of too complex an item")
		}
		if minT == 0 {
			*rule = (*rule)[:lastSym]
		} else {
			for i := uint64(1); i < minT; i++ {
				*rule = append(*rule, prev...)
			}
		}
		var lastRec uint32
		nOpt := uint64(1)
		if !noMax {
			nOpt = maxT - minT
		}
		for i := uint64(0); i < nOpt; i++ {
			rec := append([]elem(nil), prev...)
			id := p.newSymbol(name)
			if i > 0 || noMax {
				ref := lastRec
				if noMax {
					ref = id
				}
				rec = append(rec, elem{tRef, ref})
			}
			rec = append(rec, elem{tAlt, 0}, elem{tEnd, 0})
			p.rules[id] = rec
			lastRec = id
		}
		if nOpt > 0 {
			*rule = append(*rule, elem{tRef, lastRec})
		}
		nPrevRules *= total
		return nil
	}

	for pos < len(p.src) {
		c := p.src[pos]
		var err error
		switch {
		case c == '"':
			pos++
			lastSym, nPrevRules = len(*rule), 1
			for p.at(pos) != '"' {
				var ch uint32
				if ch, pos, err = p.char(pos); err != nil {
					return 0, err
				}
				*rule = append(*rule, elem{tChar, ch})
			}
			pos = p.space(pos+1, nested)
		case c == '[':
			pos++
			start := tChar
			if p.at(pos) == '^' {
				pos++
				start = tCharNot
			}
			lastSym, nPrevRules = len(*rule), 1
			for p.at(pos) != ']' {
				var ch uint32
				if ch, pos, err = p.char(pos); err != nil {
					return 0, err
				}
				t := start
				if lastSym < len(*rule) {
					t = tCharAlt
				}
				*rule = append(*rule, elem{t, ch})
				if p.at(pos) == '-' && p.at(pos+1) != ']' {
					var hi uint32
					if hi, pos, err = p.char(pos + 1); err != nil {
						return 0, err
					}
					*rule = append(*rule, elem{tRngUpper, hi})
				}
			}
			pos = p.space(pos+1, nested)
		case isWordChar(c):
			end := pos
			for isWordChar(p.at(end)) {
				end++
			}
			ref := p.symbol(p.src[pos:end])
			pos = p.space(end, nested)
			lastSym, nPrevRules = len(*rule), 1
			*rule = append(*rule, elem{tRef, ref})
		case c == '(':
			pos = p.space(pos+1, true)
			before := len(p.names)
			sub := p.newSymbol(name)
			if pos, err = p.alternates(pos, name, sub, true); err != nil {
				return 0, err
			}
			nPrevRules = max(1, uint64(len(p.names)-before))
			lastSym = len(*rule)
			*rule = append(*rule, elem{tRef, sub})
			if p.at(pos) != ')' {
				return 0, p.errAt(pos, "expecting ')'")
			}
			pos = p.space(pos+1, nested)
		case c == '.':
			lastSym, nPrevRules = len(*rule), 1
			*rule = append(*rule, elem{tAny, 0})
			pos = p.space(pos+1, nested)
		case c == '*':
			pos = p.space(pos+1, nested)
			err = repeat(0, unbounded)
		case c == '+':
			pos = p.space(pos+1, nested)
			err = repeat(1, unbounded)
		case c == '?':
			pos = p.space(pos+1, nested)
			err = repeat(0, 1)
		case c == '{':
			pos = p.space(pos+1, nested)
			var minT, maxT uint64
			if minT, pos, err = p.int(pos); err != nil {
				return 0, err
			}
			pos = p.space(pos, nested)
			maxT = unbounded
			switch p.at(pos) {
			case '}':
				maxT = minT
				pos = p.space(pos+1, nested)
			case ',':
				pos = p.space(pos+1, nested)
				if d := p.at(pos); d >= '0' && d <= '9' {
					if maxT, pos, err = p.int(pos); err != nil {
						return 0, err
					}
					pos = p.space(pos, nested)
				}
				if p.at(pos) != '}' {
					return 0, p.errAt(pos, "expecting '}'")
				}
				pos = p.space(pos+1, nested)
			default:
				return 0, p.errAt(pos, "expecting ','")
			}
			if minT > maxRepetition {
				return 0, p.errAt(pos, "too many repetitions")
			}
			if maxT != unbounded && maxT > maxRepetition {
				maxT = unbounded
			}
			err = repeat(minT, maxT)
		default:
			return pos, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return pos, nil
}

func isEndOfSeq(e elem) bool { return e.t == tEnd || e.t == tAlt }

// leftRecursive is llama_grammar_detect_left_recursion over all rules:
// a left-recursive rule would make stack expansion grow without end.
func (g *Grammar) leftRecursive() (int, bool) {
	n := len(g.start)
	visited, inProgress, mayBeEmpty := make([]bool, n), make([]bool, n), make([]bool, n)
	var detect func(r int) bool
	detect = func(r int) bool {
		if inProgress[r] {
			return true
		}
		inProgress[r] = true
		atStart := true
		for i := g.start[r]; ; i++ {
			e := g.elems[i]
			if isEndOfSeq(e) {
				if atStart {
					mayBeEmpty[r] = true
					break
				}
				atStart = true
			} else {
				atStart = false
			}
			if e.t == tEnd {
				break
			}
		}
		recurse := true
		for i := g.start[r]; ; i++ {
			e := g.elems[i]
			switch {
			case e.t == tRef && recurse:
				if detect(int(e.v)) {
					return true
				}
				if !mayBeEmpty[e.v] {
					recurse = false
				}
			case isEndOfSeq(e):
				recurse = true
			default:
				recurse = false
			}
			if e.t == tEnd {
				break
			}
		}
		inProgress[r] = false
		visited[r] = true
		return false
	}
	for r := 0; r < n; r++ {
		if !visited[r] && detect(r) {
			return r, true
		}
	}
	return 0, false
}
