package inputs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	n := 0
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var rw row
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rw); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, fmt.Errorf("%s:%d: field %s: want %s, got %s", name, line, te.Field, te.Type, te.Value)
			}
			return nil, fmt.Errorf("%s:%d: %s", name, line, strings.TrimPrefix(err.Error(), "json: "))
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: more than one JSON value on the line", name, line)
		}
		switch {
		case rw.Axis == nil || *rw.Axis == "":
			return nil, fmt.Errorf("%s:%d: field axis is missing or empty", name, line)
		case rw.ItemID == nil || *rw.ItemID == "":
			return nil, fmt.Errorf("%s:%d: field item_id is missing or empty", name, line)
		case rw.Score == nil:
			return nil, fmt.Errorf("%s:%d: field score is missing or null", name, line)
		}
		axis := out[*rw.Axis]
		if axis == nil {
			axis = map[string]float64{}
			out[*rw.Axis] = axis
		}
		if _, dup := axis[*rw.ItemID]; dup {
			return nil, fmt.Errorf("%s:%d: item %q of axis %q scored twice", name, line, *rw.ItemID, *rw.Axis)
		}
		axis[*rw.ItemID] = *rw.Score
		n++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no scored items", name)
	}
	return out, nil
}
