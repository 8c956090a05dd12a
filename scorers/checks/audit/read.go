package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Columns name the audited columns of a table.
type Columns struct {
	Label        string
	Source       string
	Measurements []string
}

// SplitNames reads a comma-separated list of column names, each trimmed,
// empty ones dropped: "a, b,,c" is a, b and c.
func SplitNames(list string) []string {
	var names []string
	for _, m := range strings.Split(list, ",") {
		if m = strings.TrimSpace(m); m != "" {
			names = append(names, m)
		}
	}
	return names
}

func (c Columns) check() error {
	if c.Label == "" || c.Source == "" || len(c.Measurements) == 0 {
		return errors.New("audit: name the label, source and at least one measurement column")
	}
	return nil
}

// ReadFile reads rows from a CSV (.csv) or JSON Lines (.jsonl, .ndjson)
// file, optionally gzipped (.gz). Errors name the file, line and column.
func ReadFile(path string, cols Columns) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	name := strings.TrimSuffix(path, ".gz")
	if name != path {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	switch {
	case strings.HasSuffix(name, ".csv"):
		return ReadCSV(r, path, cols)
	case strings.HasSuffix(name, ".jsonl"), strings.HasSuffix(name, ".ndjson"):
		return ReadJSONL(r, path, cols)
	}
	return nil, fmt.Errorf("%s: unknown format; want .csv or .jsonl (optionally .gz)", path)
}

// ReadCSV reads rows from CSV with a header line. name is used in errors.
func ReadCSV(r io.Reader, name string, cols Columns) ([]Row, error) {
	if err := cols.check(); err != nil {
		return nil, err
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	index := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := index[h]; !dup {
			index[h] = i
		}
	}
	find := func(col string) (int, error) {
		i, ok := index[col]
		if !ok {
			return 0, fmt.Errorf("%s:1: no column %q in the header (have %s)", name, col, strings.Join(header, ", "))
		}
		return i, nil
	}
	li, err := find(cols.Label)
	if err != nil {
		return nil, err
	}
	si, err := find(cols.Source)
	if err != nil {
		return nil, err
	}
	mi := make([]int, len(cols.Measurements))
	for j, m := range cols.Measurements {
		if mi[j], err = find(m); err != nil {
			return nil, err
		}
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		at := func(col string) string { return fmt.Sprintf("%s:%d: column %q", name, line, col) }
		lab, err := ParseLabel(rec[li])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at(cols.Label), err)
		}
		src := strings.TrimSpace(rec[si])
		if src == "" {
			return nil, fmt.Errorf("%s: empty source tag", at(cols.Source))
		}
		ms := make([]float64, len(mi))
		for j, i := range mi {
			if ms[j], err = parseMeasurement(rec[i]); err != nil {
				return nil, fmt.Errorf("%s: %w", at(cols.Measurements[j]), err)
			}
		}
		rows = append(rows, Row{Label: lab, Source: src, Measurements: ms})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows", name)
	}
	return rows, nil
}

// ReadJSONL reads one JSON object per line. Labels may be booleans, 0/1 or
// yes/no strings; measurements numbers, booleans (1/0) or numeric strings;
// the source a string or a number.
func ReadJSONL(r io.Reader, name string, cols Columns) ([]Row, error) {
	if err := cols.check(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var rows []Row
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if obj == nil {
			return nil, fmt.Errorf("%s:%d: not a JSON object", name, line)
		}
		get := func(col string) (any, error) {
			raw, ok := obj[col]
			if !ok {
				return nil, fmt.Errorf("%s:%d: column %q: missing", name, line, col)
			}
			var v any
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s:%d: column %q: %w", name, line, col, err)
			}
			if v == nil {
				return nil, fmt.Errorf("%s:%d: column %q: null", name, line, col)
			}
			return v, nil
		}
		at := func(col string) string { return fmt.Sprintf("%s:%d: column %q", name, line, col) }
		var row Row
		v, err := get(cols.Label)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case bool:
			row.Label = x
		case json.Number:
			row.Label, err = ParseLabel(x.String())
		case string:
			row.Label, err = ParseLabel(x)
		default:
			err = fmt.Errorf("%s is not a yes/no label", kind(v))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at(cols.Label), err)
		}
		if v, err = get(cols.Source); err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case string:
			row.Source = strings.TrimSpace(x)
		case json.Number:
			row.Source = x.String()
		case bool:
			row.Source = strconv.FormatBool(x)
		default:
			return nil, fmt.Errorf("%s: %s is not a source tag", at(cols.Source), kind(v))
		}
		if row.Source == "" {
			return nil, fmt.Errorf("%s: empty source tag", at(cols.Source))
		}
		row.Measurements = make([]float64, len(cols.Measurements))
		for j, m := range cols.Measurements {
			if v, err = get(m); err != nil {
				return nil, err
			}
			switch x := v.(type) {
			case json.Number:
				row.Measurements[j], err = parseMeasurement(x.String())
			case string:
				row.Measurements[j], err = parseMeasurement(x)
			case bool:
				row.Measurements[j] = float64(boolInt(x))
			default:
				err = fmt.Errorf("%s is not a number", kind(v))
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", at(m), err)
			}
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows", name)
	}
	return rows, nil
}

func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// ParseLabel reads a yes/no label: true/false, yes/no, y/n, t/f, 1/0
// (case-insensitive; also "correct"/"incorrect").
func ParseLabel(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "1.0", "true", "t", "yes", "y", "correct":
		return true, nil
	case "0", "0.0", "false", "f", "no", "n", "incorrect":
		return false, nil
	case "":
		return false, errors.New("empty label")
	}
	return false, fmt.Errorf("%q is not a yes/no label (want 1/0, true/false or yes/no)", s)
}

func parseMeasurement(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty; every measurement needs a value")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

// RunFile audits the rows of the file at path (ReadFile) with opt (Run);
// the audit's errors name the file.
func RunFile(path string, cols Columns, opt Options) (Report, error) {
	rows, err := ReadFile(path, cols)
	if err != nil {
		return Report{}, err
	}
	rep, err := Run(rows, cols.Measurements, opt)
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}
