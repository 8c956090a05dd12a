// Command gen writes a synthetic dedup benchmark: N eval items (JSONL) and a
// corpus of pseudo-Malay paragraphs separated by blank lines, with some items
// planted verbatim, with changed case and spacing, and with one word changed.
//
//	go run ./testdata/dedup/gen -out /tmp/dedupbench -mb 400 -items 50000
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "/tmp/glossobench-dedup-bench", "output directory (not the repository)")
	mb := flag.Int("mb", 400, "corpus size in MB")
	nItems := flag.Int("items", 50000, "number of eval items")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewPCG(*seed, 99))
	syl := []string{"ka", "ma", "sa", "la", "ra", "ta", "pa", "ba", "da", "ng", "an", "in", "un", "ke", "me", "be", "pe", "te", "se", "di", "ku", "mu", "lu", "ah", "at", "nya", "kan", "lah", "per", "ber"}
	seen := map[string]bool{}
	var vocab []string
	for len(vocab) < 20000 {
		var b strings.Builder
		for k := 1 + r.IntN(4); k > 0; k-- {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	word := func() string { // Zipf-like
		return vocab[int(float64(len(vocab))*r.Float64()*r.Float64()*r.Float64())]
	}
	sentence := func(n int) string {
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

	items := make([]string, *nItems)
	f, err := os.Create(filepath.Join(*out, "items.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range items {
		items[i] = sentence(8 + r.IntN(70))
		enc.Encode(map[string]string{"id": fmt.Sprintf("synth/%d", i), "axis": []string{"knowledge", "nlu", "mt"}[i%3], "prompt": items[i]})
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()

	f, err = os.Create(filepath.Join(*out, "corpus.txt"))
	if err != nil {
		log.Fatal(err)
	}
	w = bufio.NewWriterSize(f, 1<<20)
	size := 0
	for size < *mb<<20 {
		var doc string
		switch k := r.IntN(20000); {
		case k == 0:
			doc = "Petikan: " + items[r.IntN(len(items))] + " Tamat."
		case k == 1:
			doc = strings.ToUpper(strings.ReplaceAll(items[r.IntN(len(items))], " ", "  \n"))
		case k == 2:
			ws := strings.Fields(items[r.IntN(len(items))])
			ws[len(ws)/2] = "diubah"
			doc = strings.Join(ws, " ")
		default:
			var b strings.Builder
			for s := 1 + r.IntN(8); s > 0; s-- {
				b.WriteString(sentence(5 + r.IntN(20)))
				b.WriteByte(' ')
			}
			doc = b.String()
		}
		n, _ := w.WriteString(doc + "\n\n")
		size += n
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()
	fmt.Printf("wrote %s/items.jsonl (%d items) and corpus.txt (%d MB)\n", *out, len(items), size>>20)
}
