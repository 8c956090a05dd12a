package gguf

import (
	"fmt"
	"unicode"
)

// The pre-tokenizers of byte-level BPE vocabularies, as llama.cpp's
// llm_tokenizer_bpe names them by tokenizer.ggml.pre. llama.cpp describes each
// as a list of regular expressions applied in turn: every expression splits
// each piece the earlier ones left into its matches and the text between
// them. A few expressions have hand-written matchers in llama.cpp
// (unicode_regex_split_custom_*); the rest run through std::regex on a copy of
// the text in which every non-ASCII code point is replaced by one byte naming
// its Unicode category. Go's regexp has no lookahead and no such collapsing,
// so every expression is a matcher written here by hand, with the semantics
// of the one llama.cpp runs (the comments quote the expressions).

// splitStep splits pieces (lengths in code points, covering cps in order)
// into smaller pieces.
type splitStep func(cps []rune, pieces []int) []int

// preTokenizer is how one tokenizer.ggml.pre splits text before BPE.
type preTokenizer struct {
	steps []splitStep
	// byteEncode maps each byte to GPT-2's printable code point before BPE;
	// false for SentencePiece-style BPE (Gemma 4), which merges raw UTF-8.
	byteEncode bool
	// escapeSpaces replaces ' ' by U+2581 before splitting (Gemma 4).
	escapeSpaces bool
	// ignoreMerges takes a whole piece as one token when it is in the
	// vocabulary (llama.cpp's ignore_merges).
	ignoreMerges bool
	// addBOS is the default of tokenizer.ggml.add_bos_token.
	addBOS bool
	// gemma4 takes a piece of only newlines whole when it is a token.
	gemma4 bool
}

// Named expressions. Each const is the expression llama.cpp runs.
var (
	stepGPT2   = customSplit(splitGPT2) // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
	stepLlama3 = customSplit(func(c []rune, lo, hi int, add func(int)) { splitLlama3(c, lo, hi, add, 3, false) })
	stepQwen2  = customSplit(func(c []rune, lo, hi int, add func(int)) { splitLlama3(c, lo, hi, add, 1, false) })
	stepQwen35 = customSplit(func(c []rune, lo, hi int, add func(int)) { splitLlama3(c, lo, hi, add, 1, true) })
	// [^\n]+|[\n]+
	stepNewlines = runSplit(func(r rune) bool { return r == '\n' })
	// \p{N}, one number a piece
	stepEachNumber = matchSplit(func(c []rune, p, hi int) int { return b2i(collapsedNumber(c[p])) })
	// \p{N}+
	stepNumbers = matchSplit(func(c []rune, p, hi int) int { return run(c, p, hi, collapsedNumber) })
	// [0-9][0-9][0-9]
	stepThreeDigits = matchSplit(func(c []rune, p, hi int) int {
		if p+3 <= hi && isDigit(c[p]) && isDigit(c[p+1]) && isDigit(c[p+2]) {
			return 3
		}
		return 0
	})
	// [\r\n]
	stepCRLF = matchSplit(func(c []rune, p, hi int) int { return b2i(c[p] == '\r' || c[p] == '\n') })
)

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// preTokenizerFor returns the pre-tokenizer llama.cpp uses for a
// tokenizer.ggml.pre value ("" is llama.cpp's default).
func preTokenizerFor(pre string) (preTokenizer, error) {
	p := preTokenizer{byteEncode: true}
	switch pre {
	case "", "default":
		// [\p{P}\$\+<=>\^~\|]+, gpt2, \p{N}+, [0-9][0-9][0-9]
		p.steps = []splitStep{matchSplit(punctRun("$+<=>^~|")), stepGPT2, stepNumbers, stepThreeDigits}
	case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano":
		p.steps = []splitStep{stepLlama3}
		p.ignoreMerges, p.addBOS = true, true
	case "dbrx", "smaug-bpe", "glm4", "chatglm-bpe":
		p.steps = []splitStep{stepLlama3}
	case "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2":
		p.steps = []splitStep{stepQwen2}
	case "qwen35":
		p.steps = []splitStep{stepQwen35}
	case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
		"modern-bert", "mpt", "olmo", "jais", "exaone4", "jina-v1-en", "jina-v2-code", "roberta-bpe":
		p.steps = []splitStep{stepGPT2}
	case "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone":
		// \p{N}, gpt2
		p.steps = []splitStep{stepEachNumber, stepGPT2}
	case "falcon":
		// [\p{P}\$\+<=>\^~\|`]+, gpt2, [0-9][0-9][0-9]
		p.steps = []splitStep{matchSplit(punctRun("$+<=>^~|`")), stepGPT2, stepThreeDigits}
	case "deepseek-llm":
		p.steps = []splitStep{
			stepCRLF,
			matchSplit(optSpaceThen(classMatcher(deepseekLetters))), // \s?[A-Za-zµÀ-Ö...]+
			matchSplit(optSpaceThen(classMatcher(deepseekPunct))),   // \s?[!-/:-~！-／：-～‘-‟　-。]+
			trailingSpace,                     // \s+$
			matchSplit(classRun(deepseekCJK)), // [一-龥ࠀ-一가-퟿]+
			stepNumbers,
		}
	case "deepseek-coder":
		p.steps = []splitStep{
			stepCRLF,
			matchSplit(optSpaceThen(collapsedLetter)), // \s?\p{L}+
			matchSplit(optSpaceThen(collapsedPunct)),  // \s?\p{P}+
			matchSplit(classRun(deepseekCJK)),         // [一-龥ࠀ-一가-퟿]+
			stepEachNumber,
		}
	case "gemma4", "granite-embed-multi-311m":
		p.steps = []splitStep{stepNewlines}
		p.byteEncode, p.escapeSpaces, p.gemma4, p.addBOS = false, true, true, true
	default:
		return p, fmt.Errorf("tokenizer.ggml.pre %q is not supported", pre)
	}
	return p, nil
}

// split returns the pieces of cps, as code point counts.
func (p *preTokenizer) split(cps []rune) []int {
	pieces := []int{len(cps)}
	if len(cps) == 0 {
		return nil
	}
	for _, s := range p.steps {
		pieces = s(cps, pieces)
	}
	return pieces
}

// Unicode classes. llama.cpp's flags are the Unicode general categories plus
// the White_Space property; Go's unicode tables give the same.

func isWS(r rune) bool { return unicode.IsSpace(r) }

// regexSpace is \s in llama.cpp's std::regex runs: ASCII space characters,
// and non-ASCII white space (which llama.cpp replaces by '\v' first).
func regexSpace(r rune) bool {
	if r < 128 {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return isWS(r)
}

// The collapsed classes: \p{N}, \p{L} and \p{P} as llama.cpp rewrites them
// for std::regex — ASCII characters by an explicit ASCII set, others by
// their category (white space never, as it collapses to '\v').
func collapsedNumber(r rune) bool {
	if r < 128 {
		return isDigit(r)
	}
	return !isWS(r) && unicode.IsNumber(r)
}

func collapsedLetter(r rune) bool {
	if r < 128 {
		return (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z')
	}
	return !isWS(r) && unicode.IsLetter(r)
}

// asciiPunct is llama.cpp's ASCII stand-in for \p{P}: !-#%-*,-/:-;?-@[-]_{}
func asciiPunct(r rune) bool {
	switch {
	case r >= 0x21 && r <= 0x23, r >= 0x25 && r <= 0x2A, r >= 0x2C && r <= 0x2F, r == 0x3A, r == 0x3B,
		r == 0x3F, r == 0x40, r >= 0x5B && r <= 0x5D, r == 0x5F, r == 0x7B, r == 0x7D:
		return true
	}
	return false
}

func collapsedPunct(r rune) bool {
	if r < 128 {
		return asciiPunct(r)
	}
	return !isWS(r) && unicode.IsPunct(r)
}

// run is the length of the run of code points from p satisfying in.
func run(c []rune, p, hi int, in func(rune) bool) int {
	q := p
	for q < hi && in(c[q]) {
		q++
	}
	return q - p
}

// punctRun matches [\p{P}extra]+.
func punctRun(extra string) func(c []rune, p, hi int) int {
	in := func(r rune) bool {
		if collapsedPunct(r) {
			return true
		}
		for _, e := range extra {
			if r == e {
				return true
			}
		}
		return false
	}
	return func(c []rune, p, hi int) int { return run(c, p, hi, in) }
}

// optSpaceThen matches \s?X+.
func optSpaceThen(in func(rune) bool) func(c []rune, p, hi int) int {
	return func(c []rune, p, hi int) int {
		if regexSpace(c[p]) && p+1 < hi && in(c[p+1]) {
			return 1 + run(c, p+1, hi, in)
		}
		return run(c, p, hi, in)
	}
}

// classRun matches [ranges]+ on the code points (white space excluded: it
// is '\v' by the time llama.cpp matches).
func classRun(ranges []rune) func(c []rune, p, hi int) int {
	in := classMatcher(ranges)
	return func(c []rune, p, hi int) int { return run(c, p, hi, in) }
}

// classMatcher tests membership in pairs of inclusive ranges.
func classMatcher(ranges []rune) func(rune) bool {
	return func(r rune) bool {
		if r > 127 && isWS(r) {
			return false
		}
		for i := 0; i < len(ranges); i += 2 {
			if r >= ranges[i] && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
}

// parseClass turns a bracket expression's body such as "A-Za-zµ" into
// range pairs.
func parseClass(s string) []rune {
	rs := []rune(s)
	var out []rune
	for i := 0; i < len(rs); i++ {
		if i+2 < len(rs) && rs[i+1] == '-' {
			out = append(out, rs[i], rs[i+2])
			i += 2
			continue
		}
		out = append(out, rs[i], rs[i])
	}
	return out
}

// The bracket expressions of llama.cpp's deepseek-llm pre-tokenizer.
var (
	deepseekLetters = parseClass("A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃")
	deepseekPunct   = parseClass("!-/:-~！-／：-～‘-‟　-。")
	deepseekCJK     = parseClass("一-龥ࠀ-一가-퟿")
)

// matchSplit splits each piece into the leftmost non-overlapping matches of
// a matcher (match returns the length of the match starting at p, 0 for
// none) and the text between them, as std::regex_iterator walks a piece.
func matchSplit(match func(c []rune, p, hi int) int) splitStep {
	return func(cps []rune, pieces []int) []int {
		out := make([]int, 0, len(pieces))
		lo := 0
		for _, n := range pieces {
			hi := lo + n
			prev := lo
			for p := lo; p < hi; {
				if m := match(cps, p, hi); m > 0 {
					if p > prev {
						out = append(out, p-prev)
					}
					out = append(out, m)
					p += m
					prev = p
					continue
				}
				p++
			}
			if hi > prev {
				out = append(out, hi-prev)
			}
			lo = hi
		}
		return out
	}
}

// trailingSpace is \s+$: a piece's trailing white space becomes a piece.
func trailingSpace(cps []rune, pieces []int) []int {
	out := make([]int, 0, len(pieces))
	lo := 0
	for _, n := range pieces {
		hi := lo + n
		t := hi
		for t > lo && regexSpace(cps[t-1]) {
			t--
		}
		if t > lo {
			out = append(out, t-lo)
		}
		if hi > t {
			out = append(out, hi-t)
		}
		lo = hi
	}
	return out
}

// runSplit cuts each piece into maximal runs of code points that do and do
// not satisfy in ([^X]+|[X]+).
func runSplit(in func(rune) bool) splitStep {
	return func(cps []rune, pieces []int) []int {
		var out []int
		lo := 0
		for _, n := range pieces {
			hi := lo + n
			for p := lo; p < hi; {
				q := p
				for q < hi && in(cps[q]) == in(cps[p]) {
					q++
				}
				out = append(out, q-p)
				p = q
			}
			lo = hi
		}
		return out
	}
}

// customSplit runs one of llama.cpp's hand-written splitters on each piece;
// add(end) closes a piece at end.
func customSplit(fn func(cps []rune, lo, hi int, add func(end int))) splitStep {
	return func(cps []rune, pieces []int) []int {
		out := make([]int, 0, len(pieces))
		lo := 0
		for _, n := range pieces {
			hi := lo + n
			prev := lo
			fn(cps, lo, hi, func(end int) {
				if end > prev {
					out = append(out, end-prev)
				}
				prev = end
			})
			lo = hi
		}
		return out
	}
}

// cptFlags are the classes the hand-written splitters test; valid is false
// outside the piece (llama.cpp's empty flags).
type cptFlags struct {
	valid, letter, number, mark, ws bool
}

func flagsAt(c []rune, lo, hi, p int) cptFlags {
	if p < lo || p >= hi {
		return cptFlags{}
	}
	r := c[p]
	return cptFlags{valid: true, letter: unicode.IsLetter(r), number: unicode.IsNumber(r), mark: unicode.IsMark(r), ws: isWS(r)}
}

// outside stands for a position beyond the piece.
const outside = -1

func cptAt(c []rune, lo, hi, p int) rune {
	if p < lo || p >= hi {
		return outside
	}
	return c[p]
}

// contraction is the length of 's|'t|'re|'ve|'m|'ll|'d at p (lower-casing
// the letters when fold), else 0.
func contraction(c []rune, lo, hi, p int, fold bool) int {
	if c[p] != '\'' || p+1 >= hi {
		return 0
	}
	lower := func(r rune) rune {
		if fold {
			return unicode.ToLower(r)
		}
		return r
	}
	n := lower(cptAt(c, lo, hi, p+1))
	if n == 's' || n == 't' || n == 'm' || n == 'd' {
		return 2
	}
	if p+2 < hi {
		nn := lower(cptAt(c, lo, hi, p+2))
		if (n == 'r' && nn == 'e') || (n == 'v' && nn == 'e') || (n == 'l' && nn == 'l') {
			return 3
		}
	}
	return 0
}

// splitGPT2 is llama.cpp's unicode_regex_split_custom_gpt2:
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
func splitGPT2(c []rune, lo, hi int, add func(int)) {
	f := func(p int) cptFlags { return flagsAt(c, lo, hi, p) }
	for pos := lo; pos < hi; {
		cpt := c[pos]
		if n := contraction(c, lo, hi, pos, false); n > 0 {
			pos += n
			add(pos)
			continue
		}
		f2 := f(pos)
		if cpt == ' ' {
			f2 = f(pos + 1)
		}
		other := func(fl cptFlags) bool { return fl.valid && !(fl.ws || fl.letter || fl.number) }
		switch {
		case f2.letter, f2.number, other(f2):
			var in func(cptFlags) bool
			switch {
			case f2.letter:
				in = func(fl cptFlags) bool { return fl.letter }
			case f2.number:
				in = func(fl cptFlags) bool { return fl.number }
			default:
				in = other
			}
			if cpt == ' ' {
				pos++
			}
			for in(f2) {
				pos++
				f2 = f(pos)
			}
			add(pos)
			continue
		}
		nws := 0
		for f(pos + nws).ws {
			nws++
		}
		pos = spaceTail(c, lo, hi, pos, nws)
		add(pos)
	}
}

// spaceTail is where the splitters' closing alternatives \s+(?!\S)|\s+
// end a piece that starts at pos with nws whitespace characters: a run
// before a non-space leaves its last space to the next piece; otherwise the
// whole run, or one character when there is no run.
func spaceTail(c []rune, lo, hi, pos, nws int) int {
	switch {
	case nws > 1 && cptAt(c, lo, hi, pos+nws) != outside: // \s+(?!\S)
		return pos + nws - 1
	case nws > 0: // \s+
		return pos + nws
	}
	return pos + 1
}

// splitLlama3 is llama.cpp's unicode_regex_split_custom_llama3 (digits 3),
// _qwen2 (digits 1) and _qwen35 (digits 1, marks):
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// where qwen35 reads [\p{L}\p{M}] for \p{L} in the letter runs and the
// punctuation class.
func splitLlama3(c []rune, lo, hi int, add func(int), digits int, marks bool) {
	f := func(p int) cptFlags { return flagsAt(c, lo, hi, p) }
	letter := func(fl cptFlags) bool { return fl.letter || (marks && fl.mark) }
	for pos := lo; pos < hi; {
		cpt := c[pos]
		fl := f(pos)
		if n := contraction(c, lo, hi, pos, true); n > 0 {
			pos += n
			add(pos)
			continue
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if !(cpt == '\r' || cpt == '\n' || fl.number) && (letter(fl) || letter(f(pos+1))) {
			pos++
			for letter(f(pos)) {
				pos++
			}
			add(pos)
			continue
		}
		// \p{N}{1,digits}
		if fl.number {
			ini := pos
			for f(pos).number {
				pos++
				if pos-ini >= digits {
					add(pos)
					ini = pos
				}
			}
			add(pos)
			continue
		}
		// <space>?[^\s\p{L}\p{N}]+[\r\n]*
		f2 := fl
		if cpt == ' ' {
			f2 = f(pos + 1)
		}
		other := func(x cptFlags) bool { return x.valid && !(x.ws || letter(x) || x.number) }
		if !(f2.ws || letter(f2) || f2.number) && fl.valid {
			if cpt == ' ' {
				pos++
			}
			for other(f2) {
				pos++
				f2 = f(pos)
			}
			for r := cptAt(c, lo, hi, pos); r == '\r' || r == '\n'; r = cptAt(c, lo, hi, pos) {
				pos++
			}
			add(pos)
			continue
		}
		nws, lastRN := 0, 0
		for f(pos + nws).ws {
			if r := c[pos+nws]; r == '\r' || r == '\n' {
				lastRN = pos + nws + 1
			}
			nws++
		}
		if lastRN > 0 { // \s*[\r\n]+
			pos = lastRN
		} else {
			pos = spaceTail(c, lo, hi, pos, nws)
		}
		add(pos)
	}
}
