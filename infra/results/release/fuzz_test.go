package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadItems feeds arbitrary bundle lines to the strict item decoder and
// the rescorer: errors must name the file, and nothing may panic.
func FuzzReadItems(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "release", "bundle", ItemsFile))
	if err != nil {
		f.Fatal(err)
	}
	lines := strings.Split(string(seed), "\n")
	f.Add(strings.Join(lines[:3], "\n"))
	for _, l := range lines {
		if strings.Contains(l, `"axis":"nlg"`) {
			f.Add(l)
			break
		}
	}
	f.Add(`{"axis":"nlg","item_id":"x","score":0.5,"chrf_stats":[1,2,-3]}`)
	f.Add(`{"axis":"a","item_id":"x","score":1e400}`)
	f.Add(`{"axis":"a","item_id":"x","fields":{"hypothesis":"<b>"}}` + "\n\n" + `{"axis":"a"}`)
	man, _, err := Read(filepath.Join("..", "..", "..", "testdata", "release", "bundle"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		items, err := decodeItems("items.jsonl", []byte(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "items.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		rep := Rescore(man, items)
		for _, c := range append(rep.Axes, rep.MS...) {
			if c.Status == "" {
				t.Fatalf("%s: no status", c.Name)
			}
		}
	})
}
