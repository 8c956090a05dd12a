package runplan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/scorers"
	_ "github.com/glossobench/glossobench/scorers/mcq" // the knowledge axis
)

// An item id travels in notes and error messages, which reach Temporal
// payloads (capped at 4 MB by the server, which then names no field): a row
// whose id is longer than scorers.MaxItemIDBytes is refused as it is read,
// by check and Prepare alike, in a sentence naming the dataset, the item
// and the limit; a short id passes.
func TestLongItemIDRefused(t *testing.T) {
	// The item id is "<dataset>/<sample_id>": "d/" and the row's id.
	for _, n := range []int{scorers.MaxItemIDBytes - len("d/"), 2 << 20} {
		dir := t.TempDir()
		var rows strings.Builder
		for i, id := range []string{"s/0", strings.Repeat("x", n)} {
			row, _ := json.Marshal(map[string]string{"sample_id": id, "subject": "s", "question": fmt.Sprintf("Soalan %d?", i),
				"A": "satu", "B": "dua", "C": "tiga", "D": "empat", "answer": "A"})
			rows.Write(append(row, '\n'))
		}
		if err := os.WriteFile(filepath.Join(dir, "d.jsonl"), []byte(rows.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse([]byte("model: {spec: \"openai:http://127.0.0.1:1\", id: m}\nstore: {uri: "+dir+"}\naxes:\n  knowledge:\n    scoring_mode: generate\n    datasets: [{name: d, path: d.jsonl, format: global_mmlu}]\n"),
			"eval.yaml", dir, config.Overrides{})
		if err != nil {
			t.Fatal(err)
		}
		read := 0
		_, err = EachAxis(cfg, ModelMeta(cfg), func(_ string, _ scorers.Axis, each func(func(scorers.Item) error) error) error {
			return each(func(scorers.Item) error { read++; return nil })
		})
		if len("d/")+n <= scorers.MaxItemIDBytes {
			if err != nil || read != 2 {
				t.Errorf("a %d-byte id: %d items read, error %v; want both read", n, read, err)
			}
			continue
		}
		var data *DataError
		want := fmt.Sprintf("d.jsonl:2: item id: %d bytes, more than the %d an item id may have", len("d/")+n, scorers.MaxItemIDBytes)
		if !errors.As(err, &data) || !strings.Contains(err.Error(), want) || len(err.Error()) > 1000 {
			t.Errorf("a %d-byte id: error %.300v; want a DataError saying %q, short", n, err, want)
		}
		if read != 1 {
			t.Errorf("a %d-byte id: %d items handed on, want only the one before it", n, read)
		}
	}
}
