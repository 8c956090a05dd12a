package audit

import (
	"fmt"
	"strings"
)

// Table is audited rows held by column: a label bit, a source index and the
// measurements of each row, about 12 bytes a row with one measurement where
// a []Row takes about 56. The EvalRun stage gathers every pool of an axis
// at once, hundreds of thousands of rows each, so it keeps them this way;
// RunTable audits a Table and Run a []Row alike. The zero value is an empty
// table of one measurement; NewTable sets another width.
type Table struct {
	width   int
	n       int
	labels  []uint64 // bit i%64 of word i/64 is row i's label
	src     []int32  // index into sources
	sources []string // in order of first appearance
	index   map[string]int32
	cols    [][]float64 // per measurement, per row
}

// NewTable returns an empty table of rows with the given number of
// measurements.
func NewTable(measurements int) *Table {
	return &Table{width: measurements}
}

// Add appends a row. It panics if the row does not have the table's
// number of measurements, a programming error.
func (t *Table) Add(label bool, source string, measurements ...float64) {
	if t.cols == nil {
		t.width = max(t.width, 1)
		t.cols = make([][]float64, t.width)
		t.index = map[string]int32{}
	}
	if len(measurements) != t.width {
		panic(fmt.Sprintf("audit: table row with %d measurements, want %d", len(measurements), t.width))
	}
	k, ok := t.index[source]
	if !ok {
		k = int32(len(t.sources))
		t.index[source] = k
		t.sources = append(t.sources, source)
	}
	if t.n%64 == 0 {
		t.labels = append(t.labels, 0)
	}
	if label {
		t.labels[t.n/64] |= 1 << (t.n % 64)
	}
	t.src = append(t.src, k)
	for j, v := range measurements {
		t.cols[j] = append(t.cols[j], v)
	}
	t.n++
}

// Len is the number of rows.
func (t *Table) Len() int { return t.n }

// Sources is the number of distinct source tags.
func (t *Table) Sources() int { return len(t.sources) }

// Label is row i's label.
func (t *Table) Label(i int) bool { return t.labels[i/64]>>(i%64)&1 == 1 }

// Source is row i's source tag.
func (t *Table) Source(i int) string { return t.sources[t.src[i]] }

// Measurement is row i's measurement j.
func (t *Table) Measurement(i, j int) float64 { return t.cols[j][i] }

// Yes is the number of rows labelled yes.
func (t *Table) Yes() int {
	var n int
	for i := range t.n {
		if t.Label(i) {
			n++
		}
	}
	return n
}

// tableOf holds rows by column; rows with the wrong number of measurements
// are refused as validate always refused them.
func tableOf(rows []Row, names []string) (*Table, error) {
	t := NewTable(len(names))
	for i, r := range rows {
		if len(r.Measurements) != len(names) {
			return nil, fmt.Errorf("audit: row %d has %d measurements, want %d (%s)", i+1, len(r.Measurements), len(names), strings.Join(names, ","))
		}
		t.Add(r.Label, r.Source, r.Measurements...)
	}
	return t, nil
}
