package grammar

import (
	"encoding/binary"
	"slices"
	"sync"
)

// Vocab is a vocabulary as a Constraint sees it: each token's text (the
// bytes it adds to the output) and whether it ends generation. The tokens'
// code points are laid out once in a trie, so a mask is one walk of the trie
// that drops a whole branch as soon as the grammar rejects its prefix.
type Vocab struct {
	pieces []string
	eog    []bool
	nodes  []trieNode
}

type trieNode struct {
	cps     []uint32 // children's code points, ascending
	kids    []int32
	ends    []int32      // tokens whose code points end here, nothing left over
	partial []partialTok // tokens that end here inside a UTF-8 sequence
}

type partialTok struct {
	id int32
	p  partialUTF8
}

// NewVocab lays out the tokens. pieces[i] is token i's text; eog[i] marks
// end-of-generation tokens, allowed exactly when the grammar is complete.
// A token with no text (or one starting with NUL) is never allowed, as in
// llama.cpp's llama_grammar_apply_impl.
func NewVocab(pieces []string, eog []bool) *Vocab {
	v := &Vocab{pieces: pieces, eog: eog, nodes: []trieNode{{}}}
	for id, piece := range pieces {
		if eog[id] || piece == "" || piece[0] == 0 {
			continue
		}
		cps, p := decodeUTF8(piece, partialUTF8{})
		if p.remain < 0 {
			continue // invalid UTF-8: rejected at any position
		}
		n := int32(0)
		for _, c := range cps {
			n = v.child(n, c)
		}
		if p.remain > 0 {
			v.nodes[n].partial = append(v.nodes[n].partial, partialTok{int32(id), p})
		} else {
			v.nodes[n].ends = append(v.nodes[n].ends, int32(id))
		}
	}
	return v
}

func (v *Vocab) child(n int32, c uint32) int32 {
	i, found := slices.BinarySearch(v.nodes[n].cps, c)
	if found {
		return v.nodes[n].kids[i]
	}
	k := int32(len(v.nodes))
	v.nodes = append(v.nodes, trieNode{})
	v.nodes[n].cps = slices.Insert(v.nodes[n].cps, i, c)
	v.nodes[n].kids = slices.Insert(v.nodes[n].kids, i, k)
	return k
}

// Constraint applies one grammar to one vocabulary. It interns the grammar's
// stacks and stack sets, so a grammar state is a small number, and keeps the
// transitions and token masks it has computed: after the first few requests
// with the same grammar, choosing the allowed tokens is a map lookup. It is
// safe for concurrent use.
type Constraint struct {
	g *Grammar
	v *Vocab

	mu       sync.Mutex
	stackIDs map[string]int32
	stacks   []stack
	setIDs   map[string]int32
	sets     []setInfo
	masks    map[int32][]uint64 // set → allowed tokens (no partial sequence pending)
}

// setInfo is one interned set of stacks. Which set follows a code point
// depends only on which stacks' top character sets admit it (the position
// after a set does not depend on the character), so transitions are kept by
// that signature: a handful per state, however many code points lead there.
type setInfo struct {
	ids   []int32          // stack ids, ascending
	live  []int32          // the non-empty ones, whose tops are character sets
	trans map[uint64]int32 // signature (bit i: live[i] admits the code point) → set
	ascii *[128]int32      // the set after each ASCII code point, unknown until asked
}

// unknown marks an ASCII transition not computed yet.
const unknown = -2

// dead is the set id of no stacks: the text so far cannot be continued.
const dead = -1

// maxCachedMaskWords bounds the masks kept; beyond it they are dropped and
// recomputed. A grammar of the supported JSON Schema subset has a few
// hundred states and never reaches it.
const maxCachedMaskWords = 1 << 23 // 64 MiB

// NewConstraint prepares g for v.
func NewConstraint(g *Grammar, v *Vocab) *Constraint {
	return &Constraint{g: g, v: v, stackIDs: map[string]int32{}, setIDs: map[string]int32{}, masks: map[int32][]uint64{}}
}

// State is where a generation stands: the grammar's stacks and any UTF-8
// sequence the last token left unfinished.
type State struct {
	set int32
	p   partialUTF8
}

// Start is the state before any token.
func (c *Constraint) Start() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return State{set: c.intern(c.g.initial())}
}

// Complete reports whether the text so far is a whole match, so an
// end-of-generation token may come next.
func (c *Constraint) Complete(s State) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.complete(s.set)
}

func (c *Constraint) complete(set int32) bool {
	return set != dead && len(c.sets[set].live) < len(c.sets[set].ids)
}

// Allowed returns the tokens the grammar accepts next as a bit set
// (token t allowed when mask[t/64]>>(t%64)&1 == 1). The slice is shared:
// read it, never change it.
func (c *Constraint) Allowed(s State) []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.p.remain == 0 {
		if m, ok := c.masks[s.set]; ok {
			return m
		}
	}
	m := make([]uint64, (len(c.v.pieces)+63)/64)
	if c.complete(s.set) {
		for id, e := range c.v.eog {
			if e {
				m[id/64] |= 1 << (id % 64)
			}
		}
	}
	if s.p.remain == 0 {
		c.walk(0, s.set, m)
		if len(c.masks)*len(m) > maxCachedMaskWords {
			clear(c.masks)
		}
		c.masks[s.set] = m
		return m
	}
	// The last token ended inside a UTF-8 sequence (a byte token): every
	// token's bytes continue it, so the trie, decoded from a clean start,
	// does not apply; check each token. Rare, and never cached.
	for id, piece := range c.v.pieces {
		if c.v.eog[id] || piece == "" || piece[0] == 0 {
			continue
		}
		if _, ok := c.accept(s, piece); ok {
			m[id/64] |= 1 << (id % 64)
		}
	}
	return m
}

// walk marks the tokens under trie node n that the grammar accepts from set.
func (c *Constraint) walk(n int32, set int32, m []uint64) {
	node := &c.v.nodes[n]
	if n != 0 {
		for _, id := range node.ends {
			m[id/64] |= 1 << (id % 64)
		}
	}
	for _, t := range node.partial {
		if c.partialOK(set, t.p) {
			m[t.id/64] |= 1 << (t.id % 64)
		}
	}
	for i, cp := range node.cps {
		if next := c.step(set, cp); next != dead {
			c.walk(node.kids[i], next, m)
		}
	}
}

func (c *Constraint) partialOK(set int32, p partialUTF8) bool {
	if set == dead {
		return false
	}
	for _, id := range c.sets[set].live {
		if s := c.stacks[id]; c.g.matchPartial(s[len(s)-1], p) {
			return true
		}
	}
	return false
}

// step is the set after code point cp.
func (c *Constraint) step(set int32, cp uint32) int32 {
	if set == dead {
		return dead
	}
	info := &c.sets[set]
	if cp < 128 && info.ascii != nil && info.ascii[cp] != unknown {
		return info.ascii[cp] // most of a mask's walk: no matching, no map
	}
	n := c.stepSig(set, cp)
	if info = &c.sets[set]; cp < 128 { // stepSig may have grown c.sets
		if info.ascii == nil {
			info.ascii = new([128]int32)
			for i := range info.ascii {
				info.ascii[i] = unknown
			}
		}
		info.ascii[cp] = n
	}
	return n
}

// stepSig finds the set after cp by its signature.
func (c *Constraint) stepSig(set int32, cp uint32) int32 {
	info := &c.sets[set]
	var sig uint64
	for i, id := range info.live {
		s := c.stacks[id]
		if ok, _ := c.g.matchChar(s[len(s)-1], cp); ok {
			sig |= 1 << (i % 64)
		}
	}
	if sig == 0 {
		return dead
	}
	if n, ok := info.trans[sig]; ok && len(info.live) <= 64 {
		return n
	}
	var out []stack
	for _, id := range info.live {
		s := c.stacks[id]
		ok, after := c.g.matchChar(s[len(s)-1], cp)
		if !ok {
			continue
		}
		next := append(stack(nil), s[:len(s)-1]...)
		if !isEndOfSeq(c.g.elems[after]) {
			next = append(next, after)
		}
		out = c.g.advance(next, out)
	}
	n := c.intern(out)
	info = &c.sets[set]       // intern may have grown c.sets
	if len(info.live) <= 64 { // else the signature is ambiguous: never cached
		if info.trans == nil {
			info.trans = map[uint64]int32{}
		}
		info.trans[sig] = n
	}
	return n
}

// intern returns the id of a set of stacks (dead for none).
func (c *Constraint) intern(stacks []stack) int32 {
	if len(stacks) == 0 {
		return dead
	}
	ids := make([]int32, 0, len(stacks))
	for _, s := range stacks {
		k := stackKey(s)
		id, ok := c.stackIDs[k]
		if !ok {
			id = int32(len(c.stacks))
			c.stackIDs[k] = id
			c.stacks = append(c.stacks, s)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	b := make([]byte, 4*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(id))
	}
	id, ok := c.setIDs[string(b)]
	if !ok {
		id = int32(len(c.sets))
		c.setIDs[string(b)] = id
		info := setInfo{ids: ids}
		for _, sid := range ids {
			if len(c.stacks[sid]) > 0 {
				info.live = append(info.live, sid)
			}
		}
		c.sets = append(c.sets, info)
	}
	return id
}

func (c *Constraint) withoutEmpty(set int32) int32 {
	if set == dead {
		return dead
	}
	var in []stack
	for _, id := range c.sets[set].live {
		in = append(in, c.stacks[id])
	}
	return c.intern(in)
}

// Accept advances s by token tok; ok is false when the grammar rejects it
// (then the state is unchanged). An end-of-generation token is accepted
// when the match is complete and leaves the state as it is.
func (c *Constraint) Accept(s State, tok int) (State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tok < 0 || tok >= len(c.v.pieces) {
		return s, false
	}
	if c.v.eog[tok] {
		return s, c.complete(s.set)
	}
	piece := c.v.pieces[tok]
	if piece == "" || piece[0] == 0 {
		return s, false
	}
	return c.accept(s, piece)
}

func (c *Constraint) accept(s State, piece string) (State, bool) {
	cps, p := decodeUTF8(piece, s.p)
	if p.remain < 0 {
		return s, false
	}
	set := s.set
	if len(cps) == 0 {
		// llama_grammar_accept_token keeps only the stacks still expecting
		// text, so a match is no longer complete halfway through a character.
		set = c.withoutEmpty(set)
	}
	for _, cp := range cps {
		if set = c.step(set, cp); set == dead {
			return s, false
		}
	}
	if p.remain > 0 && !c.partialOK(set, p) {
		return s, false
	}
	return State{set: set, p: p}, true
}
