package grammar

import (
	"encoding/binary"
	"slices"
)

// A stack is llama.cpp's llama_grammar_stack: grammar positions, the top
// last, each on a character element once expanded. The empty stack means the
// grammar has matched a complete text along that path.
type stack []int32

// matchChar is llama_grammar_match_char: whether c satisfies the set at pos,
// and the position after the set.
func (g *Grammar) matchChar(pos int32, c uint32) (bool, int32) {
	positive := g.elems[pos].t == tChar || g.elems[pos].t == tAny
	found := false
	for {
		e := g.elems[pos]
		switch {
		case g.elems[pos+1].t == tRngUpper:
			found = found || e.v <= c && c <= g.elems[pos+1].v
			pos += 2
		case e.t == tAny:
			found = true
			pos++
		default:
			found = found || e.v == c
			pos++
		}
		if g.elems[pos].t != tCharAlt {
			return found == positive, pos
		}
	}
}

// partialUTF8 is llama_partial_utf8: the bits of a UTF-8 sequence a token
// left unfinished and how many continuation bytes remain (-1: invalid).
type partialUTF8 struct {
	value  uint32
	remain int8
}

// matchPartial is llama_grammar_match_partial_char: whether some completion
// of the partial sequence could satisfy the set at pos.
func (g *Grammar) matchPartial(pos int32, p partialUTF8) bool {
	positive := g.elems[pos].t == tChar || g.elems[pos].t == tAny
	n := int(p.remain)
	if n < 0 || n == 1 && p.value < 2 { // invalid, or an overlong 7-bit character
		return false
	}
	low := p.value << (n * 6)
	high := low | (1<<(n*6) - 1)
	if low == 0 {
		switch n {
		case 2:
			low = 1 << 11
		case 3:
			low = 1 << 16
		}
	}
	for {
		e := g.elems[pos]
		switch {
		case g.elems[pos+1].t == tRngUpper:
			if e.v <= high && low <= g.elems[pos+1].v {
				return positive
			}
			pos += 2
		case e.t == tAny:
			return true
		default:
			if low <= e.v && e.v <= high {
				return positive
			}
			pos++
		}
		if g.elems[pos].t != tCharAlt {
			return !positive
		}
	}
}

// advance is llama_grammar_advance_stack: it expands rule references on top
// of s until every resulting stack has a character element on top (or is
// empty), and adds those to out.
func (g *Grammar) advance(s stack, out []stack) []stack {
	todo := []stack{s}
	seen := map[string]bool{}
	for len(todo) > 0 {
		cur := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		k := stackKey(cur)
		if seen[k] {
			continue
		}
		seen[k] = true
		if len(cur) == 0 {
			out = addStack(out, cur)
			continue
		}
		pos := cur[len(cur)-1]
		if g.elems[pos].t != tRef {
			out = addStack(out, cur)
			continue
		}
		sub := g.start[g.elems[pos].v]
		for {
			next := append(stack(nil), cur[:len(cur)-1]...)
			if !isEndOfSeq(g.elems[pos+1]) {
				next = append(next, pos+1)
			}
			if !isEndOfSeq(g.elems[sub]) {
				next = append(next, sub)
			}
			todo = append(todo, next)
			for !isEndOfSeq(g.elems[sub]) {
				sub++
			}
			if g.elems[sub].t != tAlt {
				break
			}
			sub++
		}
	}
	return out
}

func addStack(out []stack, s stack) []stack {
	for _, o := range out {
		if slices.Equal(o, s) {
			return out
		}
	}
	return append(out, s)
}

func stackKey(s stack) string {
	b := make([]byte, 4*len(s))
	for i, p := range s {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(p))
	}
	return string(b)
}

// initial returns the stacks of the root rule's alternates, expanded.
func (g *Grammar) initial() []stack {
	var out []stack
	pos := g.start[g.root]
	for {
		var s stack
		if !isEndOfSeq(g.elems[pos]) {
			s = stack{pos}
		}
		out = g.advance(s, out)
		for !isEndOfSeq(g.elems[pos]) {
			pos++
		}
		if g.elems[pos].t != tAlt {
			return out
		}
		pos++
	}
}

// acceptChar is llama_grammar_accept: the stacks after c, from each stack
// whose top character set admits it.
func (g *Grammar) acceptChar(stacks []stack, c uint32) []stack {
	var out []stack
	for _, s := range stacks {
		if len(s) == 0 {
			continue
		}
		ok, after := g.matchChar(s[len(s)-1], c)
		if !ok {
			continue
		}
		next := append(stack(nil), s[:len(s)-1]...)
		if !isEndOfSeq(g.elems[after]) {
			next = append(next, after)
		}
		out = g.advance(next, out)
	}
	return out
}

// decodeUTF8 is llama.cpp's decode_utf8(std::string, llama_partial_utf8):
// the code points of b, continuing the partial sequence p, and the sequence
// b leaves unfinished. Like llama.cpp it reads b as a C string (up to the
// first NUL) and reports an invalid sequence as no code points and remain -1.
func decodeUTF8(b string, p partialUTF8) ([]uint32, partialUTF8) {
	lookup := [16]int8{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 3, 4}
	var cps []uint32
	i := 0
	at := func(i int) byte {
		if i < len(b) {
			return b[i]
		}
		return 0
	}
	value, remain := p.value, p.remain
	for at(i) != 0 && remain > 0 {
		c := at(i)
		if c>>6 != 2 {
			return nil, partialUTF8{0, -1}
		}
		value = value<<6 + uint32(c&0x3F)
		i++
		remain--
	}
	if p.remain > 0 && remain == 0 {
		cps = append(cps, value)
	}
	for at(i) != 0 {
		first := at(i)
		remain = lookup[first>>4] - 1
		if remain < 0 {
			return nil, partialUTF8{0, remain}
		}
		value = uint32(first) & (1<<(7-remain) - 1)
		i++
		for at(i) != 0 && remain > 0 {
			value = value<<6 + uint32(at(i)&0x3F)
			i++
			remain--
		}
		if remain == 0 {
			cps = append(cps, value)
		}
	}
	return cps, partialUTF8{value, remain}
}

// Accepts reports whether the grammar matches all of text.
func (g *Grammar) Accepts(text string) bool {
	stacks, p, ok := g.feed(text)
	return ok && p.remain == 0 && slices.ContainsFunc(stacks, func(s stack) bool { return len(s) == 0 })
}

// AcceptsPrefix reports whether text can be continued into a match.
func (g *Grammar) AcceptsPrefix(text string) bool {
	_, _, ok := g.feed(text)
	return ok
}

// feed runs text through the grammar from its start, as
// llama_grammar_accept_str does; a trailing partial UTF-8 sequence must be
// completable.
func (g *Grammar) feed(text string) ([]stack, partialUTF8, bool) {
	if len(text) > 0 && text[0] == 0 {
		return nil, partialUTF8{}, false
	}
	cps, p := decodeUTF8(text, partialUTF8{})
	if p.remain < 0 {
		return nil, p, false
	}
	stacks := g.initial()
	for _, c := range cps {
		if stacks = g.acceptChar(stacks, c); len(stacks) == 0 {
			return nil, p, false
		}
	}
	if p.remain > 0 {
		return stacks, p, slices.ContainsFunc(stacks, func(s stack) bool { return len(s) > 0 && g.matchPartial(s[len(s)-1], p) })
	}
	return stacks, p, true
}
