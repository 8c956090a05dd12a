package audit

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The column names WriteCSV uses for the label and the source tag.
const (
	LabelColumn  = "label"
	SourceColumn = "source"
)

// WriteCSV writes rows as CSV that ReadCSV reads back unchanged (columns
// label, source, then the measurements; labels 1/0; numbers in their
// shortest exact form), so stored audit rows can be audited again by the
// command: glossobench audit --data FILE --label label --source source
// --measurements <names>.
func WriteCSV(w io.Writer, rows []Row, names []string) error {
	cw := csv.NewWriter(w)
	header := append([]string{LabelColumn, SourceColumn}, names...)
	for _, h := range names {
		if h == LabelColumn || h == SourceColumn {
			return fmt.Errorf("audit: measurement name %q clashes with the %s column", h, h)
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for i, r := range rows {
		if len(r.Measurements) != len(names) {
			return fmt.Errorf("audit: row %d has %d measurements, want %d (%s)", i+1, len(r.Measurements), len(names), strings.Join(names, ","))
		}
		if r.Source != strings.TrimSpace(r.Source) || r.Source == "" {
			// ReadCSV trims the tag, so such a row would not read back the same.
			return fmt.Errorf("audit: row %d: source tag %q is empty or has surrounding spaces", i+1, r.Source)
		}
		rec[0] = "0"
		if r.Label {
			rec[0] = "1"
		}
		rec[1] = r.Source
		for j, v := range r.Measurements {
			rec[2+j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
