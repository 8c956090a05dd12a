package dedup

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/glossobench/glossobench/scorers"
)

// LoadItemsFile reads eval items to screen from a JSONL file: one
// scorers.Item per line, of which only id and prompt are required (so
// {"id": ..., "prompt": ...} lines will do). Blank lines are skipped. Errors
// name the file and line.
func LoadItemsFile(path string) ([]scorers.Item, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readItems(path, f)
}

func readItems(path string, f io.Reader) ([]scorers.Item, error) {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	var items []scorers.Item
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var it scorers.Item
		if err := json.Unmarshal(b, &it); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		switch {
		case it.ID == "":
			return nil, fmt.Errorf("%s:%d: field id: missing or empty", path, line)
		case len(bytes.TrimSpace([]byte(it.Prompt))) == 0:
			return nil, fmt.Errorf("%s:%d: field prompt: missing or empty (item %q)", path, line, it.ID)
		}
		if first, dup := seen[it.ID]; dup {
			return nil, fmt.Errorf("%s:%d: field id: %q already used on line %d", path, line, it.ID, first)
		}
		seen[it.ID] = line
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no items", path)
	}
	return items, nil
}
