package inputs

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// ModelScore is one model's score on one instrument.
type ModelScore struct {
	Score float64
	Line  int // where it was read, for messages
	// LowerIsBetter says the instrument ranks a lower score higher (HELM's
	// lower_is_better columns); it is the same for every score of a table.
	LowerIsBetter bool
}

// ReadScoresCSVFile reads the model_id,score file at path (see ReadScoresCSV).
func ReadScoresCSVFile(path string) (map[string]ModelScore, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadScoresCSV(path, f)
}

// ReadScoresCSV reads model_id,score rows into model_id → score. A first
// row whose score field is not a number is a header. Blank lines are
// skipped; anything else that is not a model id and a finite number is an
// error naming the line and field; name is the file's name in errors.
func ReadScoresCSV(name string, r io.Reader) (map[string]ModelScore, error) {
	scores := map[string]ModelScore{}
	first := true
	err := eachRecord(name, r, func(rec []string, line int) error {
		isHeader := first
		first = false
		if len(rec) != 2 {
			return fmt.Errorf("%s:%d: want 2 fields model_id,score, got %d", name, line, len(rec))
		}
		id := strings.TrimSpace(rec[0])
		v, perr := strconv.ParseFloat(strings.TrimSpace(rec[1]), 64)
		if perr != nil && isHeader {
			return nil
		}
		if id == "" {
			return fmt.Errorf("%s:%d: field model_id is empty", name, line)
		}
		if perr != nil {
			return fmt.Errorf("%s:%d: field score: %q is not a number", name, line, rec[1])
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s:%d: field score: %q is not a finite number", name, line, rec[1])
		}
		if prev, dup := scores[id]; dup {
			return fmt.Errorf("%s:%d: model_id %q already given on line %d", name, line, id, prev.Line)
		}
		scores[id] = ModelScore{Score: v, Line: line}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(scores) == 0 {
		return nil, fmt.Errorf("%s: no model_id,score rows", name)
	}
	return scores, nil
}

// eachRecord reads CSV records of any width, leading spaces trimmed, and
// calls fn with each and its line; a malformed record is an error naming
// the file and line.
func eachRecord(name string, r io.Reader, fn func(rec []string, line int) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0) // only after a successful Read: it panics on an empty record
		if err := fn(rec, line); err != nil {
			return err
		}
	}
}
