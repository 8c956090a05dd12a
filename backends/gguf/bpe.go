package gguf

import (
	"strings"
)

// Byte-level BPE as llama.cpp's llm_tokenizer_bpe_session applies it: the
// pre-tokenizer cuts the text into words, each word starts as its UTF-8
// characters, and the adjacent pair with the lowest merge rank is joined
// until no pair is in tokenizer.ggml.merges.

// mergePair is one line of tokenizer.ggml.merges, split at its first space
// after the first byte as llama.cpp splits it.
type mergePair struct{ left, right string }

func parseMerges(lines []string) map[mergePair]int {
	ranks := make(map[mergePair]int, len(lines))
	for i, w := range lines {
		var p mergePair
		if len(w) > 1 {
			if j := strings.IndexByte(w[1:], ' '); j >= 0 {
				p = mergePair{w[:j+1], w[j+2:]}
			}
		}
		if _, dup := ranks[p]; !dup { // std::unordered_map::emplace keeps the first
			ranks[p] = i
		}
	}
	return ranks
}

// cptsFromUTF8 decodes UTF-8 exactly as llama.cpp's unicode_cpts_from_utf8:
// the length comes from the lead byte, continuation bytes are checked, and a
// bad sequence yields U+FFFD for its first byte only. Overlong forms and
// surrogates are accepted as llama.cpp accepts them.
func cptsFromUTF8(s string) []rune {
	out := make([]rune, 0, len(s))
	cont := func(i int) bool { return i < len(s) && s[i]&0xc0 == 0x80 }
	for i := 0; i < len(s); {
		b := s[i]
		switch {
		case b&0x80 == 0:
			out = append(out, rune(b))
			i++
		case b&0x40 == 0:
			out, i = append(out, 0xFFFD), i+1
		case b&0x20 == 0:
			if !cont(i + 1) {
				out, i = append(out, 0xFFFD), i+1
				continue
			}
			out = append(out, rune(b&0x1f)<<6|rune(s[i+1]&0x3f))
			i += 2
		case b&0x10 == 0:
			if !cont(i+1) || !cont(i+2) {
				out, i = append(out, 0xFFFD), i+1
				continue
			}
			out = append(out, rune(b&0x0f)<<12|rune(s[i+1]&0x3f)<<6|rune(s[i+2]&0x3f))
			i += 3
		case b&0x08 == 0:
			if !cont(i+1) || !cont(i+2) || !cont(i+3) {
				out, i = append(out, 0xFFFD), i+1
				continue
			}
			out = append(out, rune(b&0x07)<<18|rune(s[i+1]&0x3f)<<12|rune(s[i+2]&0x3f)<<6|rune(s[i+3]&0x3f))
			i += 4
		default:
			out, i = append(out, 0xFFFD), i+1
		}
	}
	return out
}

// appendCpt encodes one code point as llama.cpp's unicode_cpt_to_utf8 does
// (surrogates included, unlike utf8.AppendRune).
func appendCpt(b []byte, r rune) []byte {
	switch {
	case r <= 0x7f:
		return append(b, byte(r))
	case r <= 0x7ff:
		return append(b, 0xc0|byte(r>>6&0x1f), 0x80|byte(r&0x3f))
	case r <= 0xffff:
		return append(b, 0xe0|byte(r>>12&0x0f), 0x80|byte(r>>6&0x3f), 0x80|byte(r&0x3f))
	}
	return append(b, 0xf0|byte(r>>18&0x07), 0x80|byte(r>>12&0x3f), 0x80|byte(r>>6&0x3f), 0x80|byte(r&0x3f))
}

// byteRunes is GPT-2's byte-to-code-point map: printable Latin-1 bytes stand
// for themselves, the others for 256, 257, ... in byte order.
var byteRunes, runeBytes = func() ([256]rune, map[rune]byte) {
	var to [256]rune
	from := map[rune]byte{}
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff) {
			to[b] = rune(b)
		} else {
			to[b] = 256 + n
			n++
		}
		from[to[b]] = byte(b)
	}
	return to, from
}()

// byteEncode maps every byte of s to its GPT-2 code point.
func byteEncode(s []byte) string {
	var b strings.Builder
	for _, c := range s {
		b.WriteRune(byteRunes[c])
	}
	return b.String()
}

// byteDecode reverses byteEncode; a code point outside the map is kept.
func byteDecode(s string) string {
	var out []byte
	for _, r := range cptsFromUTF8(s) {
		if c, ok := runeBytes[r]; ok {
			out = append(out, c)
		} else {
			out = appendCpt(out, r)
		}
	}
	return string(out)
}

// bpe appends the tokens of one raw-text fragment.
func (t *Tokenizer) bpe(text string, out []int) []int {
	if t.pre.escapeSpaces {
		text = strings.ReplaceAll(text, " ", "\u2581")
	}
	cps := cptsFromUTF8(text)
	pieces := t.pre.split(cps)
	var buf []byte
	lo := 0
	for _, n := range pieces {
		buf = buf[:0]
		for _, r := range cps[lo : lo+n] {
			buf = appendCpt(buf, r)
		}
		lo += n
		word := string(buf)
		if t.pre.byteEncode {
			word = byteEncode(buf)
		}
		out = t.bpeWord(word, out)
	}
	return out
}

// bpeWord merges one word and appends its tokens.
func (t *Tokenizer) bpeWord(word string, out []int) []int {
	if id, ok := t.toID[word]; ok && (t.pre.ignoreMerges || (t.pre.gemma4 && strings.Trim(word, "\n") == "")) {
		return append(out, id)
	}
	syms := symbolsOf(word)
	mergeSymbols(syms, func(l, r int) (float64, bool) {
		ls, rs := syms[l], syms[r]
		rank, ok := t.merges[mergePair{word[ls.start : ls.start+ls.n], word[rs.start : rs.start+rs.n]}]
		return -float64(rank), ok // the lowest rank first
	})
	for i := 0; i < len(syms) && i != -1; i = syms[i].next {
		s := syms[i]
		if s.n == 0 {
			continue
		}
		piece := word[s.start : s.start+s.n]
		if id, ok := t.toID[piece]; ok {
			out = append(out, id)
			continue
		}
		// llama.cpp falls back to one token per byte: the byte itself as
		// text (byte-level vocabularies) or <0xXX>; bytes without a token
		// are dropped.
		for j := 0; j < len(piece); j++ {
			if id := t.byteTok[piece[j]]; id >= 0 {
				out = append(out, id)
			}
		}
	}
	return out
}
