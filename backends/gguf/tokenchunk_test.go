package gguf

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// chunkText is text with what a cut could get wrong: runs of spaces,
// newlines and tabs, a literal U+2581, accents, an emoji, special-token
// text and a malformed byte before a space.
func chunkText(n int) string {
	parts := []string{"Kerajaan negeri", "telah  mengumumkan", "bahawa\njalan raya", "utama   di", "pantai\ttimur,", "café ▁ naïve", "😀 ok.", "</s> <s>", "x\xe0 y", "  ", "A. 1957\nB. 1963"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(parts[(i*5)%len(parts)])
		b.WriteByte(' ')
	}
	return b.String()
}

// withChunk tokenizes with spmChunkBytes set to n.
func withChunk(tk *Tokenizer, n int, text string) []int {
	old := spmChunkBytes
	defer func() { spmChunkBytes = old }()
	spmChunkBytes = n
	return tk.Tokenize(text, true, true)
}

// TestSPMPiecesTokenizeAsWhole: SentencePiece text tokenized a piece at a
// time gives the ids of the whole text, on the tiny model's vocabulary and
// on llama.cpp's Llama and Phi-3 SentencePiece vocabularies, for pieces
// from one byte up.
func TestSPMPiecesTokenizeAsWhole(t *testing.T) {
	paths := []string{tinyPath}
	if !testing.Short() {
		src := llamaCppSource(t)
		paths = append(paths, filepath.Join(src, "models", "ggml-vocab-llama-spm.gguf"), filepath.Join(src, "models", "ggml-vocab-phi-3.gguf"))
	}
	text := chunkText(6000)
	for _, p := range paths {
		tk, err := OpenTokenizer(p)
		if err != nil {
			t.Fatal(err)
		}
		if tk.bpeModel {
			t.Fatalf("%s: not a SentencePiece vocabulary", p)
		}
		whole := withChunk(tk, 1<<30, text)
		for _, n := range []int{1, 7, 100, 4096} {
			if got := withChunk(tk, n, text); !slices.Equal(got, whole) {
				i := 0
				for i < min(len(got), len(whole)) && got[i] == whole[i] {
					i++
				}
				t.Errorf("%s: pieces of %d bytes: %d ids, whole text %d; first difference at id %d", filepath.Base(p), n, len(got), len(whole), i)
			}
		}
	}
}

// TestSPMCutsAvoidGluedSpaces: a vocabulary piece that holds a character
// and then an escaped space ("n▁d") makes the space after that character
// no place to cut; cutting there anyway gives other ids, so the test can
// tell.
func TestSPMCutsAvoidGluedSpaces(t *testing.T) {
	tk, err := OpenTokenizer(tinyPath)
	if err != nil {
		t.Fatal(err)
	}
	// "n▁" then "n▁d", merged before anything else.
	var id int
	for i, p := range []string{"n\u2581", "n\u2581d"} {
		id = len(tk.pieces)
		tk.pieces = append(tk.pieces, p)
		tk.scores = append(tk.scores, float32(1e6-float64(i)))
		tk.types = append(tk.types, tokNormal)
		tk.toID[p] = id
	}
	glued := "n\u2581d"
	text := strings.Repeat("jalan dan hujan di pantai ", 50)
	tk.spaceGlue = map[string]bool{}
	for p := range tk.toID {
		for k := 1; k < len(p); k++ {
			if strings.HasPrefix(p[k:], "\u2581") {
				tk.spaceGlue[p[k-1:k]] = true // ASCII is enough here
			}
		}
	}
	if !tk.spaceGlue["n"] {
		t.Fatal("the glued piece is not in spaceGlue")
	}
	whole := withChunk(tk, 1<<30, text)
	if !slices.Contains(whole, id) {
		t.Fatalf("the whole text does not use the glued piece %q", glued)
	}
	if got := withChunk(tk, 1, text); !slices.Equal(got, whole) {
		t.Errorf("pieces of 1 byte: %d ids, whole %d", len(got), len(whole))
	}
	tk.spaceGlue = map[string]bool{} // cut before every space
	if got := withChunk(tk, 1, text); slices.Equal(got, whole) {
		t.Errorf("cutting before a glued space gave the whole text's ids: the test cannot fail")
	}
}

// WriteIDs prints Tokenize's ids as llama-tokenize --ids does: a JSON list
// on one line, ", " between ids.
func TestWriteIDsIsTokenizeAsAList(t *testing.T) {
	tk, err := OpenTokenizer(tinyPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"", "Selamat pagi <s> dunia"} {
		var b strings.Builder
		if err := tk.WriteIDs(&b, text, true, true); err != nil {
			t.Fatal(err)
		}
		ids := tk.Tokenize(text, true, true)
		want := strings.ReplaceAll(fmt.Sprint(ids), " ", ", ") + "\n"
		if b.String() != want {
			t.Errorf("%q: WriteIDs %q, want %q", text, b.String(), want)
		}
	}
}
