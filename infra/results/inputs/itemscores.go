package inputs

import (
	"fmt"
	"io"
	"os"

	"github.com/glossobench/glossobench/infra/runfiles"
)

// ItemScores maps axis → item_id → score.
type ItemScores map[string]map[string]float64

// ReadItemScoresFile reads the per-item scores file at path (see
// ReadItemScores).
func ReadItemScoresFile(path string) (ItemScores, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadItemScores(path, f)
}

// ReadItemScores reads JSONL {"axis","item_id","score"} lines; blank lines
// are skipped. Errors name the file, line and field; name is the file's
// name in them.
func ReadItemScores(name string, r io.Reader) (ItemScores, error) {
	type row struct {
		Axis   *string  `json:"axis"`
		ItemID *string  `json:"item_id"`
		Score  *float64 `json:"score"`
	}
	out := ItemScores{}
	n := 0
	err := runfiles.ScanStrictJSONL(r, name, func(line int, rw row) error {
		switch {
		case rw.Axis == nil || *rw.Axis == "":
			return fmt.Errorf("%s:%d: field axis is missing or empty", name, line)
		case rw.ItemID == nil || *rw.ItemID == "":
			return fmt.Errorf("%s:%d: field item_id is missing or empty", name, line)
		case rw.Score == nil:
			return fmt.Errorf("%s:%d: field score is missing or null", name, line)
		}
		axis := out[*rw.Axis]
		if axis == nil {
			axis = map[string]float64{}
			out[*rw.Axis] = axis
		}
		if _, dup := axis[*rw.ItemID]; dup {
			return fmt.Errorf("%s:%d: item %q of axis %q scored twice", name, line, *rw.ItemID, *rw.Axis)
		}
		axis[*rw.ItemID] = *rw.Score
		n++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no scored items", name)
	}
	return out, nil
}
