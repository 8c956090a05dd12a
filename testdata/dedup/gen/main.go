// Command gen writes a synthetic dedup benchmark: N eval items (JSONL) and a
// corpus of pseudo-Malay paragraphs separated by blank lines, with some items
// planted verbatim, joined to the text around them without a space, with
// changed case and spacing, and with one word changed; planted.tsv lists
// the planted items (id and how), which `glossobench dedup --bench
// --planted` checks every engine against.
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

	"github.com/glossobench/glossobench/scorers/checks/dedup/deduptest"
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
	sentence := deduptest.Sentences(r)

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
	planted := map[int]string{} // item -> how it was first planted
	// Each kind plants only items the rules must find: copies inside a
	// paragraph are searched for prompts of at least 50 characters (60 here,
	// whatever the case folding does), and one word changed keeps 5-gram
	// Jaccard >= 0.8 from 50 words on.
	plant := func(how string, minBytes, minWords int) string {
		i := r.IntN(len(items))
		for len(items[i]) < minBytes || len(strings.Fields(items[i])) < minWords {
			i = r.IntN(len(items))
		}
		if _, ok := planted[i]; !ok {
			planted[i] = how
		}
		return items[i]
	}
	for size < *mb<<20 {
		var doc string
		switch k := r.IntN(20000); {
		case k == 0:
			doc = "Petikan: " + plant("verbatim", 60, 0) + " Tamat."
		case k == 1:
			doc = strings.ToUpper(strings.ReplaceAll(plant("recased", 0, 0), " ", "  \n"))
		case k == 2:
			ws := strings.Fields(plant("oneword", 0, 50))
			ws[len(ws)/2] = "diubah"
			doc = strings.Join(ws, " ")
		case k == 3:
			// Glued to the words before and after: the first word of the
			// copy is a longer word of the corpus.
			doc = strings.TrimSuffix(sentence(6), ".") + plant("joined", 60, 0) + "Sambung" + sentence(6)
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
	var tsv strings.Builder
	for i := range items {
		if how, ok := planted[i]; ok {
			fmt.Fprintf(&tsv, "synth/%d\t%s\n", i, how)
		}
	}
	if err := os.WriteFile(filepath.Join(*out, "planted.tsv"), []byte(tsv.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %s/items.jsonl (%d items), corpus.txt (%d MB) and planted.tsv (%d items planted)\n", *out, len(items), size>>20, len(planted))
}
