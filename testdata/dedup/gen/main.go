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
