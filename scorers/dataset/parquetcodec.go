package dataset

import (
	"reflect"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"
)

// emptySafeCodec decompresses an empty page to nothing. A DataPage v2
// whose values are all null holds its levels uncompressed and zero bytes
// of data (datapage_v2_empty_datapage.snappy.parquet), which is no valid
// Snappy (or GZIP, ZSTD) stream; parquet-go v0.32 decompresses it anyway
// and fails. No codec compresses data to zero bytes, so reading zero
// bytes as nothing can only be right.
type emptySafeCodec struct{ compress.Codec }

func (c emptySafeCodec) Decode(dst, src []byte) ([]byte, error) {
	if len(src) == 0 {
		return dst[:0], nil
	}
	return c.Codec.Decode(dst, src)
}

// tolerateEmptyPages wraps the codec of every leaf column under c in
// emptySafeCodec. parquet-go v0.32 has no way to register a codec: the
// one a column uses is its unexported field compression, set from a
// fixed table when the file is opened, and is replaced here. Should a
// later version rename the field, nothing is replaced and such a file is
// refused as before (TestParquetTestingFiles says so).
func tolerateEmptyPages(c *parquet.Column) {
	for _, ch := range c.Columns() {
		tolerateEmptyPages(ch)
	}
	f := reflect.ValueOf(c).Elem().FieldByName("compression")
	if !f.IsValid() || f.Type() != reflect.TypeFor[compress.Codec]() {
		return
	}
	codec := (*compress.Codec)(unsafe.Pointer(f.UnsafeAddr()))
	if *codec == nil || (*codec).CompressionCodec() == format.Uncompressed {
		return
	}
	if _, done := (*codec).(emptySafeCodec); !done {
		*codec = emptySafeCodec{*codec}
	}
}
