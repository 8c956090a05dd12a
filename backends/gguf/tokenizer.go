package gguf

import (
	"container/heap"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Token types stored in tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	tokNormal      = 1
	tokUnknown     = 2
	tokControl     = 3
	tokUserDefined = 4
	tokUnused      = 5
	tokByte        = 6
)

// Tokenizer is the SentencePiece BPE tokenizer stored in a GGUF file
// (tokenizer.ggml.model = "llama"). It reproduces llama.cpp's llm_tokenizer_spm,
// so ids equal llama-server's /tokenize.
type Tokenizer struct {
	pieces         []string
	scores         []float32
	types          []int32
	toID           map[string]int
	byteTok        [256]int // -1 when the vocabulary has no <0xXX> piece
	specials       []int    // control, unknown and user-defined tokens, longest text first
	BOS, EOS, UNK  int      // -1 when absent
	eog            map[int]bool
	addBOS, addEOS bool
	addSpacePrefix bool
}

func newTokenizer(f *File) (*Tokenizer, error) {
	model, ok, err := f.metaString("tokenizer.ggml.model")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("metadata tokenizer.ggml.model is missing")
	}
	if model != "llama" {
		return nil, fmt.Errorf("tokenizer.ggml.model %q is not supported (only \"llama\", SentencePiece BPE)", model)
	}
	pieces, ok := f.Metadata["tokenizer.ggml.tokens"].([]string)
	if !ok || len(pieces) == 0 {
		return nil, fmt.Errorf("metadata tokenizer.ggml.tokens is missing or not a string array")
	}
	n := len(pieces)
	t := &Tokenizer{pieces: make([]string, n), scores: make([]float32, n), types: make([]int32, n),
		toID: make(map[string]int, n), eog: map[int]bool{}}
	if v, ok := f.Metadata["tokenizer.ggml.scores"]; ok {
		s, isF := v.([]float32)
		if !isF || len(s) != n {
			return nil, fmt.Errorf("metadata tokenizer.ggml.scores: want %d float32 values", n)
		}
		copy(t.scores, s)
	}
	for i := range t.types {
		t.types[i] = tokNormal
	}
	if v, ok := f.Metadata["tokenizer.ggml.token_type"]; ok {
		s, isI := v.([]int32)
		if !isI || len(s) != n {
			return nil, fmt.Errorf("metadata tokenizer.ggml.token_type: want %d int32 values", n)
		}
		copy(t.types, s)
	}
	for i, p := range pieces {
		if p == "" { // llama.cpp renames empty pieces the same way
			p = "[EMPTY_" + strconv.Itoa(i) + "]"
		}
		t.pieces[i] = p
		t.toID[p] = i
	}
	for b := range t.byteTok {
		t.byteTok[b] = -1
		if id, ok := t.toID[fmt.Sprintf("<0x%02X>", b)]; ok {
			t.byteTok[b] = id
		} else if id, ok := t.toID[string([]byte{byte(b)})]; ok {
			t.byteTok[b] = id
		}
	}
	special := func(key string, def int) (int, error) {
		v, err := f.metaInt(key, def, false)
		if err != nil {
			return 0, err
		}
		if v >= n {
			return 0, fmt.Errorf("metadata %s = %d is outside the vocabulary of %d tokens", key, v, n)
		}
		return v, nil
	}
	if t.BOS, err = special("tokenizer.ggml.bos_token_id", 1); err != nil {
		return nil, err
	}
	if t.EOS, err = special("tokenizer.ggml.eos_token_id", 2); err != nil {
		return nil, err
	}
	if t.UNK, err = special("tokenizer.ggml.unknown_token_id", 0); err != nil {
		return nil, err
	}
	if t.addBOS, err = f.metaBool("tokenizer.ggml.add_bos_token", true); err != nil {
		return nil, err
	}
	if t.addEOS, err = f.metaBool("tokenizer.ggml.add_eos_token", false); err != nil {
		return nil, err
	}
	if t.addSpacePrefix, err = f.metaBool("tokenizer.ggml.add_space_prefix", true); err != nil {
		return nil, err
	}
	t.eog[t.EOS] = true
	if id, err := special("tokenizer.ggml.eot_token_id", -1); err == nil && id >= 0 {
		t.eog[id] = true
	}
	for _, s := range []string{"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>", "<|endoftext|>"} {
		if id, ok := t.toID[s]; ok && t.types[id] == tokControl {
			t.eog[id] = true
		}
	}
	for i, ty := range t.types {
		if ty == tokControl || ty == tokUnknown || ty == tokUserDefined {
			t.specials = append(t.specials, i)
		}
	}
	sort.SliceStable(t.specials, func(a, b int) bool {
		return len(t.pieces[t.specials[a]]) > len(t.pieces[t.specials[b]])
	})
	return t, nil
}

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// fragment is either raw text or an already recognised special token.
type fragment struct {
	text  string
	token int // -1 for raw text
}

// Encode tokenizes text like llama-server's /tokenize with parse_special on:
// control and user-defined token texts become their ids. addSpecial adds BOS
// (and EOS) as the model's metadata asks.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int {
	var frags []fragment
	if text != "" {
		frags = t.partition(text)
	}
	var out []int
	if addSpecial && t.addBOS && t.BOS >= 0 {
		out = append(out, t.BOS)
	}
	prevSpecial := true // the first text fragment gets the space prefix
	for _, fr := range frags {
		if fr.token >= 0 {
			out = append(out, fr.token)
			prevSpecial = true
			continue
		}
		s := fr.text
		if t.addSpacePrefix && prevSpecial {
			s = " " + s
		}
		out = t.spm(strings.ReplaceAll(s, " ", "\u2581"), out)
		prevSpecial = false
	}
	if addSpecial && t.addEOS && t.EOS >= 0 {
		out = append(out, t.EOS)
	}
	return out
}

// partition splits text around occurrences of special token texts, longest
// first, as llama.cpp's tokenizer_st_partition does.
func (t *Tokenizer) partition(text string) []fragment {
	frags := []fragment{{text: text, token: -1}}
	for _, id := range t.specials {
		sp := t.pieces[id]
		if !strings.Contains(text, sp) {
			continue
		}
		var next []fragment
		for _, fr := range frags {
			if fr.token >= 0 {
				next = append(next, fr)
				continue
			}
			s := fr.text
			for {
				i := strings.Index(s, sp)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{text: s[:i], token: -1})
				}
				next = append(next, fragment{token: id})
				s = s[i+len(sp):]
			}
			if s != "" {
				next = append(next, fragment{text: s, token: -1})
			}
		}
		frags = next
	}
	return frags
}

type symbol struct {
	start, n   int
	prev, next int
}

type bigram struct {
	left, right int
	score       float32
	size        int
}

// bigramQueue pops the highest score first, then the leftmost.
type bigramQueue []bigram

func (q bigramQueue) Len() int { return len(q) }
func (q bigramQueue) Less(i, j int) bool {
	if q[i].score != q[j].score {
		return q[i].score > q[j].score
	}
	return q[i].left < q[j].left
}
func (q bigramQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bigramQueue) Push(x any)   { *q = append(*q, x.(bigram)) }
func (q *bigramQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// utf8Len is llama.cpp's unicode_len_utf8: the length a lead byte announces.
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// spm appends the tokens of one escaped text fragment: start from UTF-8
// characters and repeatedly merge the adjacent pair whose joined text is the
// best-scoring vocabulary piece; leftovers fall back to byte tokens.
func (t *Tokenizer) spm(text string, out []int) []int {
	var syms []symbol
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		next := len(syms) + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, symbol{start: off, n: n, prev: len(syms) - 1, next: next})
		off += n
	}
	if len(syms) == 0 {
		return out
	}
	var q bigramQueue
	revMerge := map[string][2]int{}
	tryAdd := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		s := text[syms[l].start : syms[l].start+syms[l].n+syms[r].n]
		id, ok := t.toID[s]
		if !ok {
			return
		}
		heap.Push(&q, bigram{left: l, right: r, score: t.scores[id], size: len(s)})
		revMerge[s] = [2]int{l, r}
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(i-1, i)
	}
	for q.Len() > 0 {
		b := heap.Pop(&q).(bigram)
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // stale: one side was merged already
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}
	var resegment func(i int)
	resegment = func(i int) {
		s := text[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.toID[s]; ok {
			out = append(out, id)
			return
		}
		p, ok := revMerge[s]
		if !ok {
			for j := 0; j < len(s); j++ {
				if id := t.byteTok[s[j]]; id >= 0 {
					out = append(out, id)
				} else {
					out = append(out, t.UNK)
				}
			}
			return
		}
		resegment(p[0])
		resegment(p[1])
	}
	for i := 0; i != -1; i = syms[i].next {
		resegment(i)
	}
	return out
}

// Piece is the text a token stands for when decoding: spaces restored,
// byte tokens as their byte, control and unknown tokens as nothing.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	switch t.types[id] {
	case tokNormal:
		return strings.ReplaceAll(t.pieces[id], "\u2581", " ")
	case tokUserDefined:
		return t.pieces[id]
	case tokByte:
		p := t.pieces[id]
		if len(p) == 6 && strings.HasPrefix(p, "<0x") {
			if b, err := strconv.ParseUint(p[3:5], 16, 8); err == nil {
				return string([]byte{byte(b)})
			}
		}
		return p
	}
	return ""
}

// Decode concatenates the pieces of ids.
func (t *Tokenizer) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(t.Piece(id))
	}
	return b.String()
}

// IsEOG reports whether id ends generation (EOS or an end-of-turn token).
func (t *Tokenizer) IsEOG(id int) bool { return t.eog[id] }
