package dataset

import (
	"bytes"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// TestParquetLogicalTypesAsData: DATE, TIMESTAMP and UUID columns read as
// the values they stand for (2024-01-02, an RFC 3339 instant, the UUID's
// text), not as the day count, the milliseconds or 16 raw bytes the
// generic reader returns.
func TestParquetLogicalTypesAsData(t *testing.T) {
	type row struct {
		T time.Time `parquet:"t,timestamp(millisecond)"`
		N time.Time `parquet:"n,timestamp(nanosecond)"`
		D int32     `parquet:"d,date"`
		U [16]byte  `parquet:"u,uuid"`
	}
	var b bytes.Buffer
	w := parquet.NewGenericWriter[row](&b)
	at := time.Date(2024, 1, 2, 3, 4, 5, 6e6, time.UTC)
	if _, err := w.Write([]row{{T: at, N: at.Add(789), D: 19724, U: [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	err := EachIn("x.parquet", FileParquet, bytes.NewReader(b.Bytes()), nil, func(r Row) error { got = r.Fields; return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"t": "2024-01-02T03:04:05.006Z", "n": "2024-01-02T03:04:05.006000789Z", "d": "2024-01-02", "u": "12345678-9abc-def0-0102-030405060708"}
	for col, w := range want {
		if got[col] != w {
			t.Errorf("%s = %#v, want %q", col, got[col], w)
		}
	}
}
