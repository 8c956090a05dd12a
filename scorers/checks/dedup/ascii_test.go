package dedup

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// isWordByte is the definition the bitmap kernels implement, byte by byte.
func isWordByte(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9'
}

// checkWordBits compares wordBits and wordBlocks (AVX2 on CPUs with it)
// with isWordByte and wordBlocksGo on raw.
func checkWordBits(t *testing.T, m *Matcher, raw []byte) {
	t.Helper()
	ascii := true
	for _, c := range raw {
		ascii = ascii && c < 0x80
	}
	if got := m.wordBits(raw); got != ascii {
		t.Fatalf("% x: wordBits says all ASCII %v, want %v", raw, got, ascii)
	}
	if ascii {
		for i := range len(m.bits) * 64 {
			want := i < len(raw) && isWordByte(raw[i])
			if got := m.bits[i>>6]>>(i&63)&1 == 1; got != want {
				t.Fatalf("% x: byte %d word byte %v, want %v", raw, i, got, want)
			}
		}
		checkWords(t, m, raw)
		checkPairAfter(t, m, raw)
	}
	n := len(raw) / 64
	got, want := make([]uint64, n), make([]uint64, n)
	hg, hw := wordBlocks(raw[:64*n], got), wordBlocksGo(raw[:64*n], want)
	if hg&highs != 0 != (hw&highs != 0) {
		t.Fatalf("% x: wordBlocks high %x, wordBlocksGo %x", raw, hg, hw)
	}
	for w := range want {
		if got[w] != want[w] {
			t.Fatalf("% x: block %d: wordBlocks %064b, wordBlocksGo %064b", raw, w, got[w], want[w])
		}
	}
}

// TestWordBitsEveryByteEveryLane puts every byte value in every lane of a
// block (and of the tail) among word and non-word bytes.
func TestWordBitsEveryByteEveryLane(t *testing.T) {
	if !hasAVX2 {
		t.Log("no AVX2: checking the pure-Go path only")
	}
	var m Matcher
	for _, fill := range []byte{'a', ' '} {
		raw := make([]byte, 64+64+13)
		for i := range raw {
			raw[i] = fill
		}
		for p := range raw {
			for c := range 256 {
				raw[p] = byte(c)
				checkWordBits(t, &m, raw)
			}
			raw[p] = fill
		}
	}
}

// TestWordBitsRandom checks random inputs of every length 0..300, drawn
// from the bytes next to the class edges, with and without non-ASCII.
func TestWordBitsRandom(t *testing.T) {
	edges := []byte("\x00\x0f\x10\x19\x1a /09:@AZ[`az{\x7f")
	r := rand.New(rand.NewPCG(1, 2))
	var m Matcher
	for n := range 301 {
		for k := range 40 {
			raw := make([]byte, n)
			for i := range raw {
				if k%2 == 0 {
					raw[i] = edges[r.IntN(len(edges))]
				} else {
					raw[i] = byte(r.Uint32())
				}
			}
			if k%4 == 0 && n > 0 {
				raw[r.IntN(n)] |= 0x80 // one non-ASCII byte
			} else if k%2 == 0 {
				for i := range raw {
					raw[i] &= 0x7f
				}
			}
			checkWordBits(t, &m, raw)
		}
	}
}

// checkWords compares the words the bitmap gives (markStarts, nextStart,
// wordEnd, keyOf) with the runs of isWordByte bytes of raw.
func checkWords(t *testing.T, m *Matcher, raw []byte) {
	t.Helper()
	n := m.markStarts()
	k, s := 0, m.nextStart(0)
	for i := 0; i < len(raw); {
		if !isWordByte(raw[i]) {
			i++
			continue
		}
		e := i
		for e < len(raw) && isWordByte(raw[e]) {
			e++
		}
		if s != i || m.wordEnd(s) != e || keyOf(raw, s, e) != shortKey(raw[i:e], or20) {
			t.Fatalf("%q: word %d at %d..%d, bitmap's at %d..%d", raw, k, i, e, s, m.wordEnd(max(s, 0)))
		}
		k++
		s = m.nextStart(e)
		i = e
	}
	if s != -1 || n != k {
		t.Fatalf("%q: %d words, bitmap counts %d and has one more at %d", raw, k, n, s)
	}
}

// checkPairAfter compares pairAfter at every byte of raw, whose bitmap
// and word starts are marked, with nextStart and wordEnd, and returns how
// often pairAfter found the pair.
func checkPairAfter(t *testing.T, m *Matcher, raw []byte) (found int) {
	t.Helper()
	for p := range raw {
		s, e, s2, e2 := m.pairAfter(p)
		if s < 0 {
			continue
		}
		found++
		ws := m.nextStart(p + 1)
		we := m.wordEnd(max(ws, 0))
		ws2 := m.nextStart(we)
		if s != ws || e != we || s2 != ws2 || ws2 < 0 || e2 != m.wordEnd(ws2) {
			t.Fatalf("%q: pairAfter(%d) = %d..%d %d..%d; nextStart and wordEnd: %d..%d %d", raw, p, s, e, s2, e2, ws, we, ws2)
		}
	}
	return found
}

// TestPairAfter: the words after p = 0 of " ab cd ef" are found in the
// window; none are after "cd" (one word left) or in a 70-byte word.
func TestPairAfter(t *testing.T) {
	var m Matcher
	raw := []byte(" ab cd ef" + strings.Repeat("x", 70) + " ab")
	m.wordBits(raw)
	m.markStarts()
	if s, e, s2, e2 := m.pairAfter(0); s != 1 || e != 3 || s2 != 4 || e2 != 6 {
		t.Fatalf("pairAfter(0) = %d..%d %d..%d, want 1..3 4..6", s, e, s2, e2)
	}
	for _, p := range []int{4, 10, 79} {
		if s, _, _, _ := m.pairAfter(p); s != -1 {
			t.Errorf("pairAfter(%d) found a start at %d, want -1 (not both words in the window)", p, s)
		}
	}
	if checkPairAfter(t, &m, raw) == 0 {
		t.Fatal("pairAfter found no pair")
	}
}

// TestWordBitsLongWords checks words of 1 to 200 bytes at every offset of
// a 64-byte bitmap word.
func TestWordBitsLongWords(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var m Matcher
	for l := 1; l <= 200; l++ {
		for off := range 64 {
			raw := make([]byte, off+l+r.IntN(70))
			for i := range raw {
				raw[i] = " .\n"[r.IntN(3)]
			}
			for i := off; i < off+l; i++ {
				raw[i] = "aZ09qM"[r.IntN(6)]
			}
			checkWordBits(t, &m, raw)
		}
	}
}
