package gguf

import "container/heap"

// Both of llama.cpp's merge tokenizers — SentencePiece (llm_tokenizer_spm)
// and byte-level BPE (llm_tokenizer_bpe) — start from one symbol per UTF-8
// character and repeatedly merge the best adjacent pair; they differ only in
// what makes a pair mergeable and how good it is (a vocabulary piece's score;
// a merge's rank). mergeSymbols is that loop once.

type symbol struct {
	start, n   int // the symbol's bytes in the text; n is 0 once merged into its left neighbour
	prev, next int // neighbours, -1 at the ends
}

// symbolsOf splits text into one linked symbol per character (a lead byte's
// announced length, cut at the end of the text, as llama.cpp does).
func symbolsOf(text string) []symbol {
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
	return syms
}

// mergeSymbols merges adjacent symbols while any pair merges: pair(l, r)
// says whether symbols l and r merge and at what priority; the highest
// priority goes first, ties to the leftmost pair.
func mergeSymbols(syms []symbol, pair func(l, r int) (priority float64, ok bool)) {
	var q bigramQueue
	tryAdd := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		p, ok := pair(l, r)
		if !ok {
			return
		}
		heap.Push(&q, bigram{left: l, right: r, priority: p, size: syms[l].n + syms[r].n})
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
}

type bigram struct {
	left, right int
	priority    float64
	size        int
}

// bigramQueue pops the highest priority first, then the leftmost.
type bigramQueue []bigram

func (q bigramQueue) Len() int { return len(q) }
func (q bigramQueue) Less(i, j int) bool {
	if q[i].priority != q[j].priority {
		return q[i].priority > q[j].priority
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
