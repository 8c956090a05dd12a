package audit

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteCSV writes rows as CSV that ReadCSV reads back unchanged under the
// same columns (the label, the source, then the measurements; labels 1/0;
// numbers in their shortest exact form), so stored audit rows can be
// audited again by the command: glossobench audit --data FILE --label
// <cols.Label> --source <cols.Source> --measurements <cols.Measurements>.
func WriteCSV(w io.Writer, rows []Row, cols Columns) error {
	if err := cols.check(); err != nil {
		return err
	}
	t, err := tableOf(rows, cols.Measurements)
	if err != nil {
		return err
	}
	return t.WriteCSV(w, cols)
}

// WriteCSV writes the table's rows as WriteCSV writes rows.
func (t *Table) WriteCSV(w io.Writer, cols Columns) error {
	if err := cols.check(); err != nil {
		return err
	}
	header := append([]string{cols.Label, cols.Source}, cols.Measurements...)
	seen := map[string]bool{}
	for _, h := range header {
		if seen[h] {
			return fmt.Errorf("audit: column %q named twice", h)
		}
		seen[h] = true
	}
	if t.Len() > 0 && len(t.cols) != len(cols.Measurements) {
		return fmt.Errorf("audit: the rows have %d measurements, want %d (%s)", len(t.cols), len(cols.Measurements), strings.Join(cols.Measurements, ","))
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for i := range t.Len() {
		source := t.Source(i)
		if source != strings.TrimSpace(source) || source == "" {
			// ReadCSV trims the tag, so such a row would not read back the same.
			return fmt.Errorf("audit: row %d: source tag %q is empty or has surrounding spaces", i+1, source)
		}
		rec[0] = "0"
		if t.Label(i) {
			rec[0] = "1"
		}
		rec[1] = source
		for j, col := range t.cols {
			rec[2+j] = strconv.FormatFloat(col[i], 'g', -1, 64)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
