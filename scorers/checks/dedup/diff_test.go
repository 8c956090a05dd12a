package dedup

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
)

// refScreen is screen with the reference matcher (ref_test.go).
func refScreen(idx *refIndex, docs []string) []Match {
	m := newRefMatcher(idx)
	var off int64
	for _, d := range docs {
		m.Doc([]byte(d), off)
		off += int64(len(d)) + 2
	}
	return m.Matches("corpus.txt")
}

// sameMatches checks that the matcher finds exactly what the reference
// does: the same items, kinds, offsets and Jaccard values.
func sameMatches(t *testing.T, name string, items []scorers.Item, docs []string, opt Options) int {
	t.Helper()
	idx, err := NewIndex(items, opt)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := newRefIndex(items, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Each document on its own (a screen keeps only an item's first
	// match), then all in one screen.
	n := 0
	for i, d := range docs {
		got, want := screen(idx, []string{d}), refScreen(ref, []string{d})
		n += len(want)
		if !reflect.DeepEqual(got, want) {
			if t.Failed() {
				continue // reported one document already
			}
			t.Errorf("%s opt %+v (stride %d, dense %v): document %d %q:\ngot       %+v\nreference %+v", name, opt, idx.stride, idx.dense, i, d, got, want)
		}
	}
	got, want := screen(idx, docs), refScreen(ref, docs)
	if reflect.DeepEqual(got, want) {
		return n
	}
	gm, wm := map[string]Match{}, map[string]Match{}
	for _, m := range got {
		gm[m.ItemID] = m
	}
	for _, m := range want {
		wm[m.ItemID] = m
	}
	bad := 0
	for id, w := range wm {
		if g, ok := gm[id]; !ok || g != w {
			if bad++; bad <= 5 {
				t.Errorf("%s opt %+v: item %s: got %+v, reference %+v", name, opt, id, g, w)
			}
		}
	}
	for id, g := range gm {
		if _, ok := wm[id]; !ok {
			if bad++; bad <= 5 {
				t.Errorf("%s opt %+v: item %s: got %+v, reference none", name, opt, id, g)
			}
		}
	}
	t.Errorf("%s opt %+v: %d of %d matches differ (stride %d, dense %v)", name, opt, bad, len(want), idx.stride, idx.dense)
	return len(want)
}

// diffOptions are the option sets the differential tests run: the
// defaults, small n-grams and thresholds, a threshold of 1, exact only,
// and a minimum length so small that the scan is dense.
var diffOptions = []Options{
	{},
	{MinExactLen: 12, ShingleN: 3, Jaccard: 0.6},
	{ShingleN: 1, Jaccard: 0.5},
	{ShingleN: 2, Jaccard: 0.9},
	{Jaccard: 1},
	{MinExactLen: 30, ShingleN: 7, Jaccard: 0.7},
	{MinExactLen: 1, NoJaccard: true},
	{MinExactLen: 80, NoJaccard: true},
}

// diffCorpus makes items and documents that put every path of the
// matcher at its edge: prompts of 1 to 80 words of 1 to 14 letters
// (all ASCII, or not: some whose upper case is shorter in UTF-8 than
// their lower case), planted verbatim, joined to the words around them,
// re-cased with changed spacing, with words changed, behind noise of
// every length (so the sampled part finds them at every offset), and
// near the Jaccard threshold: an item behind k fresh noise words has k+n-1
// shingles in no item, so some reach the threshold with exactly the most
// misses the bound allows. Documents repeat text, so distinct shingles
// are fewer than positions.
func diffCorpus(r *rand.Rand, nItems, nDocs int, ascii bool) ([]scorers.Item, []string) {
	letters := []string{"a", "b", "k", "m", "n", "s", "t", "u", "é", "ⱥ", "ß", "ı", "д", "ж"}
	if ascii {
		letters = letters[:8]
	}
	word := func(fresh bool) string {
		var b strings.Builder
		if fresh {
			b.WriteString("q") // no item word starts with q
		}
		for k := 1 + r.IntN(14); k > 0; k-- {
			if r.IntN(3) == 0 {
				b.WriteString(letters[r.IntN(len(letters))])
			} else {
				b.WriteByte("aeiounkmstlrpgd"[r.IntN(15)])
			}
		}
		return b.String()
	}
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = word(false)
	}
	seps := []string{" ", " ", " ", " ", ", ", ". ", " - ", "\n", "\t", "  "}
	join := func(ws []string) string {
		var b strings.Builder
		for i, w := range ws {
			if i > 0 {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			b.WriteString(w)
		}
		return b.String()
	}
	noise := func(n int) []string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = word(true)
		}
		return ws
	}
	items := make([]scorers.Item, nItems)
	prompts := make([][]string, nItems)
	for i := range items {
		n := 1 + r.IntN(80)
		if r.IntN(3) == 0 {
			n = 1 + r.IntN(8)
		}
		ws := make([]string, n)
		for j := range ws {
			ws[j] = vocab[r.IntN(len(vocab))]
		}
		if i < 3 {
			// Long prompts of 3 and 4 words: one interior word or pair.
			// ASCII, so the raw span is as short as the bound says.
			ws = []string{strings.Repeat("k", 8+i), "kemerdekaan" + strings.Repeat("s", 9-i), "berperikemanusiaan", "pertanggungjawaban"}[:3+i%2]
		}
		prompts[i] = ws
		items[i] = scorers.Item{ID: fmt.Sprintf("i%03d", i), Prompt: strings.Join(ws, " ")}
	}
	var docs []string
	for len(docs) < nDocs {
		i := r.IntN(nItems)
		p := items[i].Prompt
		var d string
		switch r.IntN(9) {
		case 0: // noise only
			d = join(noise(r.IntN(200)))
		case 1: // verbatim behind noise, bytes of it at any offset
			d = join(noise(r.IntN(60))) + strings.Repeat(" ", r.IntN(9)) + p + " " + join(noise(r.IntN(30)))
		case 2: // joined to the words around it
			d = join(noise(r.IntN(60))) + " qx" + p + "qy " + join(noise(r.IntN(10)))
		case 3: // re-cased, spacing changed
			d = join(noise(r.IntN(60))) + " " + strings.ToUpper(strings.ReplaceAll(p, " ", " \n\t ")) + " " + join(noise(r.IntN(10)))
		case 4: // words changed
			ws := append([]string(nil), prompts[i]...)
			for k := r.IntN(3); k > 0; k-- {
				ws[r.IntN(len(ws))] = vocab[r.IntN(len(vocab))]
			}
			d = join(noise(r.IntN(5))) + " " + join(ws)
		case 5: // near the threshold: k fresh words, then the item
			d = join(noise(r.IntN(30))) + " " + p
		case 6: // the item and a noise sentence, repeated
			s := join(noise(r.IntN(12)))
			d = strings.Repeat(p+" "+s+" ", 1+r.IntN(6))
		case 7: // a line that is an item (short prompts match whole lines)
			d = join(noise(r.IntN(8))) + "\n  " + strings.ToUpper(p) + " \n" + join(noise(r.IntN(8)))
		default: // the item alone
			d = p
		}
		docs = append(docs, d)
	}
	return items, docs
}

// edgeDocs are documents at the edges of the bounds idx was built with:
// each prompt whose interior word pairs span exactly the stride, behind
// enough fresh words to end the Jaccard part just before it, at every
// byte offset within a stride, as is and upper-cased; and the prompts with
// the most shingles behind the most fresh words that keep them at the
// threshold, one fewer and one more, changed so that only Jaccard finds
// them.
func edgeDocs(idx *Index, r *rand.Rand) []string {
	fresh := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = fmt.Sprintf("qz%dq%d", r.IntN(1000), i)
		}
		return strings.Join(ws, " ")
	}
	n, t := idx.opt.ShingleN, idx.opt.Jaccard
	var docs []string
	var tok tokenizer
	for _, g := range idx.groups {
		p := string(g.norm)
		if ws := newWordSpans(&tok, g.norm); g.long && len(ws.keys) > 0 && (ws.interior() == idx.stride || idx.dense) {
			for k := n + idx.maxMiss - 4; k <= n+idx.maxMiss+1; k++ {
				for off := 0; off <= idx.stride; off++ {
					pad := fresh(max(0, k)) + strings.Repeat(" ", 1+off)
					docs = append(docs, pad+p+" "+fresh(2), pad+strings.ToUpper(p)+" "+fresh(2))
				}
			}
		}
		if len(g.shingles) == idx.maxShingles && idx.jkeys != nil {
			kmax := int(float64(len(g.shingles))/t+1e-9) - len(g.shingles)
			// A semicolon between two words: the same shingles, no
			// exact match.
			pj := strings.Replace(p, " ", " ; ", 1)
			for k := kmax - 1; k <= kmax+1; k++ {
				docs = append(docs, fresh(max(0, k))+" "+pj, pj+" "+fresh(max(0, k)))
			}
		}
	}
	return docs
}

// TestMatchesReference: the sampled matcher against the reference (the
// matcher that reads every word) on generated corpora, for every option
// set: the same matches, kinds, offsets and Jaccard values.
func TestMatchesReference(t *testing.T) {
	total := 0
	for seed := uint64(1); seed <= 6; seed++ {
		// Odd seeds all ASCII (the bitmap path), even ones not.
		items, docs := diffCorpus(rand.New(rand.NewPCG(seed, 11)), 120, 1500, seed%2 == 1)
		for _, opt := range diffOptions {
			idx, err := NewIndex(items, opt)
			if err != nil {
				t.Fatal(err)
			}
			edge := edgeDocs(idx, rand.New(rand.NewPCG(seed, 13)))
			total += sameMatches(t, fmt.Sprintf("diffCorpus seed %d", seed), items, append(edge, docs...), opt)
		}
		items, docs = deduptest.RandomCase(rand.New(rand.NewPCG(seed, 7)), 150, 400)
		for _, opt := range diffOptions {
			total += sameMatches(t, fmt.Sprintf("RandomCase seed %d", seed), items, docs, opt)
		}
	}
	for _, opt := range diffOptions {
		total += sameMatches(t, "planted", deduptest.PlantedItems(), deduptest.PlantedDocs(), opt)
	}
	// One ASCII prompt of 4 words sets the stride: its one interior pair
	// is met only by the sample from the start of its first word on.
	four := []scorers.Item{
		{ID: "four", Prompt: "kkkkkkkkkkk kemerdekaansss berperikemanusiaan pertanggungjawaban"},
		{ID: "long", Prompt: deduptest.PlantedItems()[0].Prompt},
	}
	for _, opt := range diffOptions[:1] {
		idx, err := NewIndex(four, opt)
		if err != nil {
			t.Fatal(err)
		}
		total += sameMatches(t, "four words", four, edgeDocs(idx, rand.New(rand.NewPCG(1, 13))), opt)
	}
	if total < 1000 {
		t.Errorf("only %d matches in all: the corpora test little", total)
	}
}

// FuzzMatchReference compares the matcher with the reference on two
// prompts and a document of arbitrary text (including invalid UTF-8), a
// small minimum length and n-gram size, so every path (bitmap, general,
// sampled, dense, anchors, whole lines) meets hostile input.
func FuzzMatchReference(f *testing.F) {
	f.Add("kucing itu comel sekali hari ini juga", "Apakah ibu negara?", "Hari ini: KUCING itu\n comel sekali hari ini juga!", uint8(10), uint8(2))
	f.Add("alpha beta gamma delta epsilon zeta", "x", "qq alpha beta gamma delta epsilon zetaqq\nx", uint8(20), uint8(3))
	f.Add("ⱥbc déf ghi jkl mno", "İzmir", "ȺBC DÉF GHI JKL MNO \xff", uint8(4), uint8(1))
	f.Fuzz(func(t *testing.T, p1, p2, doc string, minLen, n uint8) {
		items := []scorers.Item{{ID: "a", Prompt: p1}, {ID: "b", Prompt: p2}}
		opt := Options{MinExactLen: 1 + int(minLen%60), ShingleN: 1 + int(n%5), Jaccard: 0.5}
		idx, err := NewIndex(items, opt)
		if err != nil {
			return // an empty prompt
		}
		ref, err := newRefIndex(items, opt)
		if err != nil {
			t.Fatal(err)
		}
		docs := []string{doc, p1 + " " + doc, doc + p2}
		for _, d := range docs {
			if got, want := screen(idx, []string{d}), refScreen(ref, []string{d}); !reflect.DeepEqual(got, want) {
				t.Fatalf("prompts %q, %q, doc %q, opt %+v:\ngot       %+v\nreference %+v", p1, p2, d, opt, got, want)
			}
		}
	})
}
