package inputs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// helmTable is one table of a helm-summarize groups file
// (benchmark_output/runs/<suite>/groups/<group>.json is a list of them):
// a header of cells and rows of cells, the first cell of a row naming the
// model, a cell's number in "value" (absent where the model has no result).
type helmTable struct {
	Title  string `json:"title"`
	Header []struct {
		Value         string `json:"value"`
		LowerIsBetter bool   `json:"lower_is_better"`
	} `json:"header"`
	Rows [][]struct {
		Value any `json:"value"`
	} `json:"rows"`
}

// helmTables is the list of tables of a groups/<group>.json file, or the
// one table of a groups/json/<group>_<table>.json file (helm-summarize
// writes both; the first links the second as "JSON").
type helmTables []helmTable

func (ts *helmTables) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		var one helmTable
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*ts = helmTables{one}
		return nil
	}
	return json.Unmarshal(b, (*[]helmTable)(ts))
}

// IsHELMGroups reports whether path looks like a helm-summarize groups
// file: a JSON list of tables, or one table, the first with title, header
// and rows.
func IsHELMGroups(path string) bool {
	if !strings.HasSuffix(path, ".json") {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var tables helmTables
	return json.Unmarshal(b, &tables) == nil && len(tables) > 0 && len(tables[0].Header) > 1 && tables[0].Rows != nil
}

// ReadHELMGroups reads model scores from a helm-summarize groups file (or
// one of its tables alone): the table titled table (default the first) and the column whose header is
// column (default the second, the first after the model). Rows without a
// number in that column are left out. A column HELM marks lower_is_better
// (inference time, calibration error) marks every score LowerIsBetter, so
// that a ranking reads it in its own direction. Errors name the file, the
// table and the column.
func ReadHELMGroups(path, table, column string) (map[string]ModelScore, error) {
	var tables helmTables
	if err := readJSON(path, &tables, "not HELM tables: "); err != nil {
		return nil, err
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("%s: no tables", path)
	}
	t := &tables[0]
	if table != "" {
		t = nil
		var titles []string
		for i := range tables {
			titles = append(titles, tables[i].Title)
			if tables[i].Title == table {
				t = &tables[i]
			}
		}
		if t == nil {
			return nil, fmt.Errorf("%s: no table titled %q (tables: %s)", path, table, strings.Join(titles, "; "))
		}
	}
	col := 1
	if column != "" {
		col = -1
		var names []string
		for i, h := range t.Header {
			names = append(names, h.Value)
			if h.Value == column {
				col = i
			}
		}
		if col < 1 {
			return nil, fmt.Errorf("%s: table %q: no column %q (columns: %s)", path, t.Title, column, strings.Join(names, "; "))
		}
	}
	if col >= len(t.Header) {
		return nil, fmt.Errorf("%s: table %q has no column after the model", path, t.Title)
	}
	out := map[string]ModelScore{}
	for i, row := range t.Rows {
		if len(row) <= col {
			continue
		}
		model, _ := row[0].Value.(string)
		if model == "" {
			return nil, fmt.Errorf("%s: table %q row %d: no model name in its first cell", path, t.Title, i+1)
		}
		v, ok := row[col].Value.(float64)
		if !ok {
			continue // HELM leaves a cell without value where a model has no result
		}
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("%s: table %q: model %s appears twice", path, t.Title, model)
		}
		out[model] = ModelScore{Score: v, Line: i + 1, LowerIsBetter: t.Header[col].LowerIsBetter}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: table %q column %q: no model has a number", path, t.Title, t.Header[col].Value)
	}
	return out, nil
}
