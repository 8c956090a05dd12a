package gguf

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
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

// Tokenizer is the tokenizer stored in a GGUF file, reproducing llama.cpp's
// so ids equal llama-server's /tokenize: SentencePiece BPE
// (tokenizer.ggml.model "llama", llm_tokenizer_spm) and byte-level BPE
// ("gpt2" with the pre-tokenizer tokenizer.ggml.pre names, and Gemma 4's
// "gemma4", llm_tokenizer_bpe).
type Tokenizer struct {
	pieces         []string
	scores         []float32
	types          []int32
	toID           map[string]int
	byteTok        [256]int // -1 when the vocabulary has no token for the byte
	specials       []int    // control, unknown and user-defined tokens, longest text first
	lstrip, rstrip map[int]bool
	BOS, EOS, UNK  int // -1 when absent
	eog            map[int]bool
	addBOS, addEOS bool
	addSpacePrefix bool

	// spaceGlue holds the characters some piece has right before an
	// escaped space: a SentencePiece text may be cut before any other
	// space and tokenized a piece at a time with the same result (spmText).
	spaceGlue map[string]bool

	bpeModel bool // byte-level BPE rather than SentencePiece
	pre      preTokenizer
	merges   map[mergePair]int
}

// OpenTokenizer reads only the tokenizer of a GGUF file, so vocabulary-only
// files (llama.cpp's models/ggml-vocab-*.gguf) work too.
func OpenTokenizer(path string) (*Tokenizer, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer unmap()
	f, err := Parse(data)
	if err == nil {
		var t *Tokenizer
		if t, err = newTokenizer(f); err == nil {
			return t, nil // the tokenizer holds copies, never the mapping
		}
	}
	return nil, fmt.Errorf("gguf: %s: %w", path, err)
}

// eogTexts are the token texts llama.cpp makes end-of-generation (and
// control) whatever their stored type.
var eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
	"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
	"<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~["}

// fimTexts are the fill-in-the-middle token texts llama.cpp makes control
// when the file names no id for them, keyed by that id's metadata key.
var fimTexts = map[string][]string{
	"tokenizer.ggml.fim_pre_token_id": {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>", "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"},
	"tokenizer.ggml.fim_suf_token_id": {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>", "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"},
	"tokenizer.ggml.fim_mid_token_id": {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>", "\u2581<MID>", "<|code_middle|>", "<|middle|>"},
	"tokenizer.ggml.fim_pad_token_id": {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
	"tokenizer.ggml.fim_rep_token_id": {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
	"tokenizer.ggml.fim_sep_token_id": {"<|file_sep|>"},
}

func newTokenizer(f *File) (*Tokenizer, error) {
	model, ok, err := f.metaString("tokenizer.ggml.model")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("metadata tokenizer.ggml.model is missing")
	}
	pieces, ok := f.Metadata["tokenizer.ggml.tokens"].([]string)
	if !ok || len(pieces) == 0 {
		return nil, fmt.Errorf("metadata tokenizer.ggml.tokens is missing or not a string array")
	}
	n := len(pieces)
	t := &Tokenizer{pieces: make([]string, n), scores: make([]float32, n), types: make([]int32, n),
		toID: make(map[string]int, n), eog: map[int]bool{}, lstrip: map[int]bool{}, rstrip: map[int]bool{}}
	// Defaults as llama.cpp's llama_vocab::impl::load sets them per model.
	defBOS, defEOS, defUNK := 1, 2, 0
	switch model {
	case "llama":
		t.addBOS, t.addSpacePrefix = true, true
	case "gpt2", "gemma4":
		pre, _, err := f.metaString("tokenizer.ggml.pre")
		if err != nil {
			return nil, err
		}
		defBOS, defEOS, defUNK = 11, 11, -1
		if model == "gemma4" {
			pre, defBOS, defEOS = "gemma4", -1, -1
		}
		if t.pre, err = preTokenizerFor(pre); err != nil {
			return nil, err
		}
		lines, ok := f.Metadata["tokenizer.ggml.merges"].([]string)
		if !ok {
			return nil, fmt.Errorf("metadata tokenizer.ggml.merges is missing or not a string array (a %q tokenizer needs it)", model)
		}
		t.bpeModel, t.merges, t.addBOS = true, parseMerges(lines), t.pre.addBOS
	default:
		return nil, fmt.Errorf("tokenizer.ggml.model %q is not supported (want \"llama\", \"gpt2\" or \"gemma4\")", model)
	}
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
	t.spaceGlue = map[string]bool{}
	for i, p := range pieces {
		if p == "" { // llama.cpp renames empty pieces the same way
			p = "[EMPTY_" + strconv.Itoa(i) + "]"
		}
		t.pieces[i] = p
		t.toID[p] = i
		for k := 1; k < len(p); k++ {
			if strings.HasPrefix(p[k:], "\u2581") {
				_, n := utf8.DecodeLastRuneInString(p[:k])
				t.spaceGlue[p[k-n:k]] = true
			}
		}
	}
	for b := range t.byteTok {
		t.byteTok[b] = -1
		hex, raw := fmt.Sprintf("<0x%02X>", b), []byte{byte(b)}
		switch {
		case t.bpeModel && t.pre.byteEncode:
			if id, ok := t.toID[string(raw)]; ok {
				t.byteTok[b] = id
			}
		case t.bpeModel:
			if id, ok := t.toID[hex]; ok {
				t.byteTok[b] = id
			}
		default:
			if id, ok := t.toID[hex]; ok {
				t.byteTok[b] = id
			} else if id, ok := t.toID[string(raw)]; ok {
				t.byteTok[b] = id
			}
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
	if defBOS >= n {
		defBOS = -1
	}
	if defEOS >= n {
		defEOS = -1
	}
	if t.BOS, err = special("tokenizer.ggml.bos_token_id", defBOS); err != nil {
		return nil, err
	}
	if t.EOS, err = special("tokenizer.ggml.eos_token_id", defEOS); err != nil {
		return nil, err
	}
	if t.UNK, err = special("tokenizer.ggml.unknown_token_id", defUNK); err != nil {
		return nil, err
	}
	if t.addBOS, err = f.metaBool("tokenizer.ggml.add_bos_token", t.addBOS); err != nil {
		return nil, err
	}
	if t.pre.gemma4 {
		t.addBOS = true // llama.cpp overrides the file for Gemma 4
	}
	if t.addEOS, err = f.metaBool("tokenizer.ggml.add_eos_token", false); err != nil {
		return nil, err
	}
	if t.addSpacePrefix, err = f.metaBool("tokenizer.ggml.add_space_prefix", t.addSpacePrefix); err != nil {
		return nil, err
	}
	if t.addBOS && t.BOS < 0 {
		return nil, fmt.Errorf("tokenizer.ggml.add_bos_token is true but the vocabulary has no BOS token")
	}
	if t.addEOS && t.EOS < 0 {
		return nil, fmt.Errorf("tokenizer.ggml.add_eos_token is true but the vocabulary has no EOS token")
	}
	// llama.cpp makes these texts control tokens whatever their stored type,
	// which matters for what parse_special splits out.
	for _, s := range eogTexts {
		if id, ok := t.toID[s]; ok {
			t.eog[id] = true
			if t.types[id] != tokControl && t.types[id] != tokUnknown && t.types[id] != tokUserDefined {
				t.types[id] = tokControl
			}
		}
	}
	for key, texts := range fimTexts {
		ends := key != "tokenizer.ggml.fim_pre_token_id" && key != "tokenizer.ggml.fim_suf_token_id" && key != "tokenizer.ggml.fim_mid_token_id"
		if id, err := special(key, -1); err != nil {
			return nil, err
		} else if id >= 0 {
			t.eog[id] = t.eog[id] || ends
			continue
		}
		for _, s := range texts {
			if id, ok := t.toID[s]; ok {
				if t.types[id] != tokControl && t.types[id] != tokUnknown && t.types[id] != tokUserDefined {
					t.types[id] = tokControl
				}
				t.eog[id] = t.eog[id] || ends
			}
		}
	}
	// llama.cpp's Gemma 4 workaround: </s> is an ordinary token there.
	if _, ok := t.toID["<|tool_response>"]; ok {
		if id, ok := t.toID["</s>"]; ok {
			delete(t.eog, id)
			t.types[id] = tokNormal
		}
	}
	if t.EOS >= 0 {
		t.eog[t.EOS] = true
	}
	if id, err := special("tokenizer.ggml.eot_token_id", -1); err == nil && id >= 0 {
		t.eog[id] = true
	}
	for i, ty := range t.types {
		if ty == tokControl || ty == tokUnknown || ty == tokUserDefined {
			t.specials = append(t.specials, i)
		}
	}
	sort.SliceStable(t.specials, func(a, b int) bool {
		return len(t.pieces[t.specials[a]]) > len(t.pieces[t.specials[b]])
	})
	// llama.cpp strips white space after Phi-3's special tokens (its
	// per-model token attributes, chosen by general.name).
	if name, _, _ := f.metaString("general.name"); strings.Contains(strings.ToLower(name), "phi-3") || strings.Contains(strings.ToLower(name), "phi3") {
		for _, id := range t.specials {
			t.rstrip[id] = true
		}
		if id, ok := t.toID["</s>"]; ok {
			t.rstrip[id] = true
		}
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			if id, ok := t.toID[s]; ok {
				delete(t.rstrip, id)
			}
		}
	}
	return t, nil
}

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// fragment is either raw text or an already recognised special token.
type fragment struct {
	text  string
	token int // -1 for raw text
}

// Encode tokenizes text like llama-server's /tokenize: control and
// user-defined token texts become their ids (parse_special on). addSpecial
// adds BOS (and EOS) as the model's metadata asks.
func (t *Tokenizer) Encode(text string, addSpecial bool) []int {
	return t.Tokenize(text, addSpecial, true)
}

// Tokenize is llama.cpp's llama_tokenize: parseSpecial turns the texts of
// control and unknown tokens into their ids (user-defined tokens always are).
func (t *Tokenizer) Tokenize(text string, addSpecial, parseSpecial bool) []int {
	var out []int
	t.TokenizeEach(text, addSpecial, parseSpecial, func(id int) { out = append(out, id) })
	return out
}

// WriteIDs writes the ids of text (TokenizeEach) to w as a JSON list on
// one line, "[1, 364, 407]\n", as llama.cpp's `llama-tokenize --ids` prints
// them; the ids are written as they come, so a long text holds no list.
func (t *Tokenizer) WriteIDs(w io.Writer, text string, addSpecial, parseSpecial bool) error {
	bw := bufio.NewWriter(w)
	bw.WriteByte('[')
	n := 0
	t.TokenizeEach(text, addSpecial, parseSpecial, func(id int) {
		if n > 0 {
			bw.WriteString(", ")
		}
		bw.WriteString(strconv.Itoa(id))
		n++
	})
	bw.WriteString("]\n")
	return bw.Flush()
}

// TokenizeEach is Tokenize calling yield with each id in order instead of
// collecting them, so a caller that writes or counts ids holds none: the
// tokenizer's own work is a piece of text at a time (spmText).
func (t *Tokenizer) TokenizeEach(text string, addSpecial, parseSpecial bool, yield func(id int)) {
	var frags []fragment
	if text != "" {
		frags = t.partition(text, parseSpecial)
	}
	if addSpecial && t.addBOS && t.BOS >= 0 {
		yield(t.BOS)
	}
	var buf []int
	prevSpecial := true // the first text fragment gets the space prefix
	for _, fr := range frags {
		if fr.token >= 0 {
			yield(fr.token)
			prevSpecial = true
			continue
		}
		if t.bpeModel {
			buf = t.bpe(fr.text, buf[:0])
			for _, id := range buf {
				yield(id)
			}
			continue
		}
		prefix := ""
		if t.addSpacePrefix && prevSpecial {
			prefix = " "
		}
		buf = t.spmText(prefix, fr.text, buf[:0], yield)
		prevSpecial = false
	}
	if addSpecial && t.addEOS && t.EOS >= 0 {
		yield(t.EOS)
	}
}

// cSpace is C's isspace in the "C" locale, which llama.cpp strips with.
func cSpace(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') }

// partition splits text around occurrences of special token texts, longest
// first, as llama.cpp's tokenizer_st_partition does, stripping white space
// beside tokens that ask for it.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, token: -1}}
	for _, id := range t.specials {
		if !parseSpecial && (t.types[id] == tokControl || t.types[id] == tokUnknown) {
			continue
		}
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
				left := s[:i]
				if t.lstrip[id] {
					for len(left) > 0 && cSpace(left[len(left)-1]) {
						left = left[:len(left)-1]
					}
				}
				if left != "" {
					next = append(next, fragment{text: left, token: -1})
				}
				next = append(next, fragment{token: id})
				s = s[i+len(sp):]
				if t.rstrip[id] {
					for len(s) > 0 && cSpace(s[0]) {
						s = s[1:]
					}
				}
			}
			if s != "" {
				next = append(next, fragment{text: s, token: -1})
			}
		}
		frags = next
	}
	return frags
}

// utf8Len is llama.cpp's unicode_len_utf8: the length a lead byte announces.
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// spm appends the tokens of one escaped text fragment: start from UTF-8
// characters and repeatedly merge the adjacent pair whose joined text is the
// best-scoring vocabulary piece; leftovers fall back to byte tokens.
func (t *Tokenizer) spm(text string, out []int) []int {
	syms := symbolsOf(text)
	if len(syms) == 0 {
		return out
	}
	revMerge := map[string][2]int{}
	mergeSymbols(syms, func(l, r int) (float64, bool) {
		s := text[syms[l].start : syms[l].start+syms[l].n+syms[r].n]
		id, ok := t.toID[s]
		if !ok {
			return 0, false
		}
		revMerge[s] = [2]int{l, r}
		return float64(t.scores[id]), true // the best-scoring piece first
	})
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

// spmChunkBytes is about how much text SentencePiece merges at once. Its
// merge state costs ~150 bytes per byte of text, so a 10 MB prompt
// tokenized whole would hold ~1.5 GB; a piece at a time holds ~2.5 MB.
var spmChunkBytes = 16 << 10

// spmText appends the tokens of one text fragment (spaces not yet escaped)
// a piece at a time, each piece ending before a space that no vocabulary
// piece joins to the character before it. No merge can cross such a cut
// (every merged symbol is a vocabulary piece), and the merges on either
// side do not change each other's candidates, so the tokens are those of
// the whole text. A text without such a space is merged whole.
// prefix (the space prefix, or "") goes before the first piece, so the text
// is never copied whole. The ids of each piece go to yield; buf is scratch
// for them, returned for reuse.
func (t *Tokenizer) spmText(prefix, s string, buf []int, yield func(int)) []int {
	for len(s) > 0 {
		n := t.spmCut(s)
		buf = t.spm(strings.ReplaceAll(prefix+s[:n], " ", "\u2581"), buf[:0])
		for _, id := range buf {
			yield(id)
		}
		s, prefix = s[n:], ""
	}
	return buf
}

// spmCut is the length of s's first piece: s up to the first safe space
// after spmChunkBytes, or all of s. It steps over the characters as
// symbolsOf does (a lead byte's announced length), so a cut is a symbol
// boundary even in invalid UTF-8.
func (t *Tokenizer) spmCut(s string) int {
	if len(s) <= spmChunkBytes {
		return len(s)
	}
	prev := ""
	for off := 0; off < len(s); {
		n := min(utf8Len(s[off]), len(s)-off)
		if off >= spmChunkBytes && s[off] == ' ' && prev != "" {
			glue := prev
			if glue == " " {
				glue = "\u2581"
			}
			// Only a well-formed character is looked up: the vocabulary's
			// pieces are, and a malformed one could hide a glued pair.
			if r, size := utf8.DecodeRuneInString(prev); (r != utf8.RuneError || size > 1) && size == len(prev) && !t.spaceGlue[glue] {
				return off
			}
		}
		prev = s[off : off+n]
		off += n
	}
	return len(s)
}

// Piece is the text a token stands for when decoding: spaces restored,
// byte tokens as their byte, control and unknown tokens as nothing.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	switch t.types[id] {
	case tokNormal:
		if t.bpeModel && t.pre.byteEncode {
			return byteDecode(t.pieces[id])
		}
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

// AddsBOS reports whether Tokenize with addSpecial puts BOS first
// (tokenizer.ggml.add_bos_token, or llama.cpp's default for the model).
func (t *Tokenizer) AddsBOS() bool { return t.addBOS && t.BOS >= 0 }
