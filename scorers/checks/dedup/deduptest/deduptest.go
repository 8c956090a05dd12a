// Package deduptest builds the eval items and corpora that the tests and
// benchmarks of the contamination screen use: the matching's own
// (scorers/checks/dedup) and the corpus reader's (infra/corpus), which
// screen the same planted contamination. It imports nothing of dedup, so
// dedup's own tests can use it.
package deduptest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

// The prompts used by the planted-contamination test. Each long one has 60
// words, so with n = 5 it has 56 shingles: one substituted word leaves 51
// shared of 61 (J = 0.836, found), two leave 46 of 66 (J = 0.697, not found).
var (
	longA = sixtyWords("alpha")
	longB = sixtyWords("beta")
	longC = sixtyWords("gamma")
	longD = sixtyWords("delta")
	longE = sixtyWords("epsilon")
)

func sixtyWords(tag string) string {
	var w []string
	for i := 0; i < 60; i++ {
		w = append(w, fmt.Sprintf("%s%d", tag, i))
	}
	return strings.Join(w, " ")
}

func replaceWord(s string, pos int, with string) string {
	w := strings.Fields(s)
	w[pos] = with
	return strings.Join(w, " ")
}

// PlantedItems are the items PlantedCorpus contaminates, some of them. With
// the default options it contaminates exact, spacing (exact), para_above
// (jaccard), short_line and short_doc (whole) and task1b (exact), and not
// para_below (J = 0.70), clean (half copy), short_inside (short prompts
// match only whole lines), near_miss (one character missing) nor task1a
// (its task is contaminated, but it did not match).
func PlantedItems() []scorers.Item {
	return []scorers.Item{
		{ID: "exact", Axis: "knowledge", Prompt: longA},
		{ID: "spacing", Axis: "knowledge", Prompt: longB},
		{ID: "para_above", Axis: "nlu", Prompt: longC},
		{ID: "para_below", Axis: "nlu", Prompt: longD},
		{ID: "clean", Axis: "nlu", Prompt: longE},
		{ID: "short_line", Axis: "mt", Prompt: "Apakah ibu negara Malaysia?"},
		{ID: "short_inside", Axis: "mt", Prompt: "Siapakah Perdana Menteri?"},
		{ID: "short_doc", Axis: "mt", Prompt: "Terjemahkan: selamat pagi"},
		{ID: "near_miss", Axis: "if", Prompt: "Tulis sebuah karangan pendek tentang hari raya di kampung halaman anda."},
		{ID: "task1a", Axis: "if", TaskID: "t1", Prompt: "Senaraikan tiga buah negeri di pantai timur Semenanjung Malaysia dengan ringkas."},
		{ID: "task1b", Axis: "if", TaskID: "t1", Prompt: "Sebutkan nama sungai yang paling panjang di Semenanjung Malaysia dan huraikan."},
	}
}

// PlantedDocs are the documents of PlantedCorpus.
func PlantedDocs() []string {
	paraAbove := replaceWord(longC, 30, "zzz")
	paraBelow := replaceWord(replaceWord(longD, 10, "yyy"), 45, "xxx")
	spaced := strings.ToUpper(strings.ReplaceAll(longB, " ", " \t\n  "))
	return []string{
		"Ini dokumen biasa tanpa apa-apa.\nBaris kedua.",
		"Mukadimah panjang. " + longA + " Penutup.", // exact copy inside a document
		"Baris satu\r\n" + spaced,                   // case + whitespace changes
		paraAbove,
		paraBelow,
		"Soalan:\n  APAKAH ibu negara   malaysia?  \nJawapan: Kuala Lumpur",
		"Teks ini bertanya Siapakah Perdana Menteri? di tengah ayat.",
		"terjemahkan:    SELAMAT PAGI",
		"Tulis sebuah karangan pendek tentang hari raya di kampung halaman and", // "anda." cut to "and": J = 7/9
		"Sebutkan nama sungai yang paling panjang di semenanjung malaysia dan huraikan.",
		longE[:len(longE)/2], // half an item: neither exact nor Jaccard
	}
}

// PlantedCorpus is PlantedDocs as a text corpus: documents separated by
// empty lines.
func PlantedCorpus() string {
	return strings.Join(PlantedDocs(), "\n\n") + "\n"
}

// RandomCase builds a random item set and a corpus with planted copies,
// near copies and noise.
func RandomCase(r *rand.Rand, nItems, nDocs int) ([]scorers.Item, []string) {
	vocab := make([]string, 120)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%c%d", 'a'+rune(i%26), i)
	}
	words := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return w
	}
	var items []scorers.Item
	for i := 0; i < nItems; i++ {
		n := 1 + r.IntN(40)
		if r.IntN(4) == 0 {
			n = 1 + r.IntN(4) // short prompts
		}
		items = append(items, scorers.Item{ID: fmt.Sprintf("i%03d", i), TaskID: fmt.Sprintf("t%d", i/3), Prompt: strings.Join(words(n), " ")})
	}
	var docs []string
	for d := 0; d < nDocs; d++ {
		var w []string
		switch r.IntN(4) {
		case 0: // noise
			w = words(1 + r.IntN(60))
		default: // a (mutated) item, maybe inside other text
			w = strings.Fields(items[r.IntN(len(items))].Prompt)
			for k := r.IntN(3); k > 0; k-- {
				w[r.IntN(len(w))] = vocab[r.IntN(len(vocab))]
			}
			if r.IntN(2) == 0 {
				w = append(append(words(r.IntN(5)), w...), words(r.IntN(5))...)
			}
		}
		s := strings.Join(w, " ")
		if r.IntN(3) == 0 {
			s = strings.ToUpper(s)
		}
		if r.IntN(3) == 0 {
			s = strings.ReplaceAll(s, " ", "\n ")
		}
		docs = append(docs, s)
	}
	return items, docs
}

// Sentences returns a maker of pseudo-Malay sentences of n words, drawn
// from r: a vocabulary of 20,000 words (synthVocab), words picked Zipf-like
// (small indexes are common), the first capitalised, a comma after one word
// in 12, a full stop at the end. The benchmark generator testdata/dedup/gen
// writes its corpus with it too.
func Sentences(r *rand.Rand) func(n int) string {
	vocab := synthVocab(r, 20000)
	word := func() string {
		i := int(float64(len(vocab)) * r.Float64() * r.Float64() * r.Float64())
		return vocab[i]
	}
	return func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			w := word()
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			switch {
			case i == n-1:
				b.WriteString(".")
			case r.IntN(12) == 0:
				b.WriteString(", ")
			default:
				b.WriteString(" ")
			}
		}
		return b.String()
	}
}

// synthVocab is a pseudo-Malay vocabulary: words of 1 to 4 syllables.
func synthVocab(r *rand.Rand, n int) []string {
	syl := []string{"ka", "ma", "sa", "la", "ra", "ta", "pa", "ba", "da", "ng", "an", "in", "un", "ke", "me", "be", "pe", "te", "se", "di", "ku", "mu", "lu", "ah", "at", "nya", "kan", "lah", "per", "ber"}
	seen := map[string]bool{}
	var v []string
	for len(v) < n {
		var b strings.Builder
		for k := 1 + r.IntN(4); k > 0; k-- {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			v = append(v, w)
		}
	}
	return v
}

// Synth makes nItems prompts and about size bytes of corpus paragraphs
// (blank-line separated, 10 to 150 words, with punctuation and capitals)
// from one vocabulary; one paragraph in 5000 is a planted item.
func Synth(seed uint64, nItems, size int) ([]scorers.Item, []byte) {
	r := rand.New(rand.NewPCG(seed, 99))
	sentence := Sentences(r)
	items := make([]scorers.Item, nItems)
	for i := range items {
		items[i] = scorers.Item{ID: fmt.Sprintf("synth/%d", i), Prompt: sentence(8 + r.IntN(70))}
	}
	var buf bytes.Buffer
	for buf.Len() < size {
		if r.IntN(5000) == 0 {
			buf.WriteString(items[r.IntN(nItems)].Prompt)
		} else {
			for s := 1 + r.IntN(8); s > 0; s-- {
				buf.WriteString(sentence(5 + r.IntN(20)))
				buf.WriteByte(' ')
			}
		}
		buf.WriteString("\n\n")
	}
	return items, buf.Bytes()
}
