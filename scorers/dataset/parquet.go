package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// ParquetChunkCap bounds the memory a Parquet file may take: a column
// chunk whose uncompressed size (as the file's metadata states it) is
// larger is refused before any page is read, since the reader holds a
// column chunk's pages decompressed (a 4 KB Brotli file can hold a 2 GB
// string column).
const ParquetChunkCap = 256 << 20

// parquetColumn is one node of a Parquet schema as the file declares it.
type parquetColumn struct {
	path     string // dotted, from the top-level column
	elem     format.SchemaElement
	children []*parquetColumn
}

func (c *parquetColumn) repeated() bool {
	r, ok := c.elem.RepetitionType.Get()
	return ok && r == format.Repeated
}

func (c *parquetColumn) annotated(ct deprecated.ConvertedType, lt format.LogicalTypeValue) bool {
	if v, ok := c.elem.ConvertedType.Get(); ok && v == ct {
		return true
	}
	return c.elem.LogicalType.Value != nil && reflect.TypeOf(c.elem.LogicalType.Value) == reflect.TypeOf(lt)
}

// parquetSchema rebuilds the schema tree from the footer's flat list.
func parquetSchema(elems []format.SchemaElement) (*parquetColumn, error) {
	i := 0
	var build func(prefix string) (*parquetColumn, error)
	build = func(prefix string) (*parquetColumn, error) {
		if i >= len(elems) {
			return nil, errors.New("the schema ends inside a group")
		}
		c := &parquetColumn{elem: elems[i], path: prefix + elems[i].Name}
		i++
		n, _ := c.elem.NumChildren.Get()
		for range n {
			child, err := build(strings.TrimPrefix(c.path+".", "."))
			if err != nil {
				return nil, err
			}
			c.children = append(c.children, child)
		}
		return c, nil
	}
	if len(elems) == 0 {
		return nil, errors.New("no schema")
	}
	root, err := build("")
	if err != nil {
		return nil, err
	}
	for _, c := range root.children {
		retag(c, "")
	}
	return root, nil
}

func retag(c *parquetColumn, prefix string) {
	c.path = prefix + c.elem.Name
	for _, ch := range c.children {
		retag(ch, c.path+".")
	}
}

// parquetConvert is how a top-level column's values become data: the
// generic reader returns FLOAT16 as its two bytes and INT96 as three
// words.
type parquetConvert func(v any) (any, error)

// checkParquet refuses, naming the column, what the generic reader would
// read wrong (maps it does not recognise, FLOAT16 and INT96 inside nested
// columns, legacy list layouts readLegacy does not rebuild) or too large
// to hold (ParquetChunkCap), and returns the conversions the top-level
// columns need and the shapes of those readLegacy rebuilds.
func checkParquet(f *parquet.File) (map[string]parquetConvert, map[string]*levelShape, error) {
	md := f.Metadata()
	for _, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			if size := cc.MetaData.TotalUncompressedSize; size > ParquetChunkCap {
				return nil, nil, fmt.Errorf("column %s: a column chunk of %d MB uncompressed, over the %d MB a Parquet column chunk may take here",
					strings.Join(cc.MetaData.PathInSchema, "."), size>>20, ParquetChunkCap>>20)
			}
		}
	}
	root, err := parquetSchema(md.Schema)
	if err != nil {
		return nil, nil, err
	}
	conv := map[string]parquetConvert{}
	legacy := map[string]*levelShape{}
	for _, c := range root.children {
		if hasLegacyList(c) {
			s, err := legacyShape(c)
			if err != nil {
				return nil, nil, fmt.Errorf("column %s: a legacy LIST layout holding %v, which this reader does not read", c.path, err)
			}
			legacy[c.elem.Name] = s
			continue
		}
		if len(c.children) == 0 {
			if fn := leafConvert(c); fn != nil {
				conv[c.elem.Name] = fn
			}
		}
		if err := checkNode(c, len(c.children) == 0); err != nil {
			return nil, nil, err
		}
	}
	return conv, legacy, nil
}

func checkNode(c *parquetColumn, topLevel bool) error {
	if len(c.children) == 0 {
		if !topLevel && leafConvert(c) != nil {
			return fmt.Errorf("column %s: %s inside a nested column, which this reader does not convert", c.path, leafKind(c))
		}
		if p, ok := decimalPrecision(c); ok && p > 15 {
			return fmt.Errorf("column %s: a DECIMAL of precision %d, which a number here (float64, 15 digits) does not hold exactly", c.path, p)
		}
		return nil
	}
	switch {
	case c.annotated(deprecated.List, &format.ListType{}):
		// The one layout the generic reader reads right:
		// <group> (LIST) { repeated group <list> { <element> } }, the
		// repeated group not being the element itself (the legacy
		// layouts, elementIsRepeated, are rebuilt by readLegacy).
		r := c.children[0]
		if len(c.children) != 1 || !r.repeated() || elementIsRepeated(c, r) {
			return fmt.Errorf("column %s: a legacy LIST layout (two-level, or a repeated group that is the element), which this reader does not read", c.path)
		}
		return checkNode(r.children[0], false)
	case c.annotated(deprecated.Map, &format.MapType{}) || c.annotated(deprecated.MapKeyValue, &format.MapType{}):
		kv := c.children[0]
		if len(c.children) != 1 || !kv.repeated() || len(kv.children) != 2 || kv.children[0].elem.Name != "key" {
			return fmt.Errorf("column %s: a MAP whose layout is not repeated group key_value { key; value }, which this reader does not read", c.path)
		}
		if r, _ := kv.children[0].elem.RepetitionType.Get(); r != format.Required {
			return fmt.Errorf("column %s: a MAP whose keys may be null, which this reader does not read", c.path)
		}
		if len(kv.children[0].children) > 0 {
			return fmt.Errorf("column %s: a MAP whose keys are groups, which this reader does not read", c.path)
		}
		return checkNode(kv.children[1], false)
	}
	for _, ch := range c.children {
		if err := checkNode(ch, false); err != nil {
			return err
		}
	}
	return nil
}

func leafKind(c *parquetColumn) string {
	switch t, _ := c.elem.Type.Get(); {
	case t == format.Int96:
		return "an INT96 timestamp"
	case t == format.Int64:
		return "a TIMESTAMP"
	case t == format.Int32 && c.annotated(deprecated.Date, &format.DateType{}):
		return "a DATE"
	case t == format.Int32:
		return "an INT32 DECIMAL"
	case c.annotated(-1, &format.UUIDType{}):
		return "a UUID"
	}
	return "a FLOAT16"
}

// decimalPrecision is a DECIMAL column's precision.
func decimalPrecision(c *parquetColumn) (int, bool) {
	if d, ok := c.elem.LogicalType.Value.(*format.DecimalType); ok {
		return int(d.Precision), true
	}
	if v, ok := c.elem.ConvertedType.Get(); ok && v == deprecated.Decimal {
		p, _ := c.elem.Precision.Get()
		return int(p), true
	}
	return 0, false
}

func decimalScale(c *parquetColumn) int {
	if d, ok := c.elem.LogicalType.Value.(*format.DecimalType); ok {
		return int(d.Scale)
	}
	s, _ := c.elem.Scale.Get()
	return int(s)
}

func leafConvert(c *parquetColumn) parquetConvert {
	t, _ := c.elem.Type.Get()
	switch {
	case t == format.Int96:
		return int96Time
	case t == format.FixedLenByteArray && c.annotated(-1, &format.Float16Type{}):
		return float16Value
	}
	if t == format.Int32 && c.annotated(deprecated.Date, &format.DateType{}) {
		return dateValue
	}
	if t == format.Int64 {
		if unit, utc, ok := timestampUnit(c); ok {
			return func(v any) (any, error) { return timestampValue(v, unit, utc) }
		}
	}
	if t == format.FixedLenByteArray && c.annotated(-1, &format.UUIDType{}) {
		return uuidValue
	}
	if p, ok := decimalPrecision(c); ok && t == format.Int32 {
		// The generic reader divides in float32 (1003.858 reads as
		// 1003.85797...); up to 7 digits the unscaled integer is exact in
		// it and comes back by rounding.
		scale := math.Pow10(decimalScale(c))
		return func(v any) (any, error) {
			f, ok := v.(float32)
			if !ok {
				return nil, fmt.Errorf("an INT32 DECIMAL read as %T", v)
			}
			if p > 7 {
				return nil, fmt.Errorf("an INT32 DECIMAL of precision %d, which this reader reads through float32", p)
			}
			return math.Round(float64(f)*scale) / scale, nil
		}
	}
	return nil
}

// rowGroupBounds are a row group's row count and, per top-level text
// column, the least and greatest value its statistics record.
type rowGroupBounds struct {
	rows int64
	cols map[string]textBounds
}

type textBounds struct{ min, max []byte }

// check refuses a value outside the statistics the writer recorded: the
// generic reader has been seen to read a page it misparses as empty
// strings (lz4_raw_compressed_larger.parquet), a wrong value that nothing
// else would catch.
func (b textBounds) check(v any) error {
	s, ok := v.([]byte)
	if !ok {
		if str, isStr := v.(string); isStr {
			s = []byte(str)
		} else {
			return nil
		}
	}
	if bytes.Compare(s, b.min) < 0 || bytes.Compare(s, b.max) > 0 {
		return fmt.Errorf("read %q, outside the row group's statistics [%q, %q]: the Parquet reader misread this column", truncate(s), truncate(b.min), truncate(b.max))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// byteArrayBounds reads the statistics of the top-level, non-repeated
// BYTE_ARRAY columns (not DECIMAL: its order is signed), where the file
// declares the column order that min_value/max_value follow.
func byteArrayBounds(f *parquet.File) []rowGroupBounds {
	md := f.Metadata()
	out := make([]rowGroupBounds, len(md.RowGroups))
	root, err := parquetSchema(md.Schema)
	ordered := err == nil && len(md.ColumnOrders) > 0
	text := map[string]bool{}
	if ordered {
		for _, c := range root.children {
			t, _ := c.elem.Type.Get()
			_, dec := decimalPrecision(c)
			if len(c.children) == 0 && !c.repeated() && t == format.ByteArray && !dec {
				text[c.elem.Name] = true
			}
		}
	}
	for i, rg := range md.RowGroups {
		out[i] = rowGroupBounds{rows: rg.NumRows, cols: map[string]textBounds{}}
		for _, cc := range rg.Columns {
			p := cc.MetaData.PathInSchema
			st := cc.MetaData.Statistics
			if len(p) == 1 && text[p[0]] && len(st.MaxValue) > 0 {
				out[i].cols[p[0]] = textBounds{min: st.MinValue, max: st.MaxValue}
			}
		}
	}
	return out
}

// dateValue reads a DATE (days since 1970-01-01) as 2006-01-02.
func dateValue(v any) (any, error) {
	d, ok := v.(int32)
	if !ok {
		return nil, fmt.Errorf("a DATE read as %T", v)
	}
	return time.Unix(int64(d)*86400, 0).UTC().Format(time.DateOnly), nil
}

// timestampUnit is a TIMESTAMP column's unit (in nanoseconds) and whether
// its values are UTC instants (else local date-times, written without a
// zone).
func timestampUnit(c *parquetColumn) (unit int64, utc, ok bool) {
	if ts, isTS := c.elem.LogicalType.Value.(*format.TimestampType); isTS {
		switch ts.Unit.Value.(type) {
		case *format.MilliSeconds:
			return 1e6, ts.IsAdjustedToUTC, true
		case *format.MicroSeconds:
			return 1e3, ts.IsAdjustedToUTC, true
		case *format.NanoSeconds:
			return 1, ts.IsAdjustedToUTC, true
		}
		return 0, false, false
	}
	switch v, _ := c.elem.ConvertedType.Get(); {
	case c.elem.ConvertedType.Valid && v == deprecated.TimestampMillis:
		return 1e6, true, true
	case c.elem.ConvertedType.Valid && v == deprecated.TimestampMicros:
		return 1e3, true, true
	}
	return 0, false, false
}

// timestampValue reads a TIMESTAMP as RFC 3339 (UTC instants with Z,
// local date-times without a zone).
func timestampValue(v any, unit int64, utc bool) (any, error) {
	n, ok := v.(int64)
	if !ok {
		return nil, fmt.Errorf("a TIMESTAMP read as %T", v)
	}
	t := time.Unix(n/(1e9/unit), n%(1e9/unit)*unit).UTC()
	if utc {
		return t.Format(time.RFC3339Nano), nil
	}
	return t.Format("2006-01-02T15:04:05.999999999"), nil
}

// uuidValue reads a UUID (16 bytes) in its 8-4-4-4-12 hex form.
func uuidValue(v any) (any, error) {
	rv := reflect.ValueOf(v)
	if (rv.Kind() != reflect.Array && rv.Kind() != reflect.Slice) || rv.Len() != 16 || rv.Type().Elem().Kind() != reflect.Uint8 {
		return nil, fmt.Errorf("a UUID read as %T", v)
	}
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(rv.Index(i).Uint())
	}
	h := fmt.Sprintf("%x", b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// int96Time reads an INT96 timestamp (Impala, Spark): signed nanoseconds
// of the day and a signed Julian day number, as RFC 3339 in UTC. The sum
// is taken in int64 microseconds, wrapping as Spark's own reader does: a
// value Spark wrote beyond the nanosecond range (year 290000,
// int96_from_spark.md) reads back as Spark wrote it.
func int96Time(v any) (any, error) {
	x, ok := v.(deprecated.Int96)
	if !ok {
		return nil, fmt.Errorf("an INT96 read as %T", v)
	}
	nanos := int64(uint64(x[1])<<32 | uint64(x[0]))
	days := int64(int32(x[2])) - 2440588 // Julian day of 1970-01-01
	micros := days*86400_000_000 + nanos/1000
	t := time.UnixMicro(micros).Add(time.Duration(nanos % 1000)).UTC()
	return t.Format(time.RFC3339Nano), nil
}

// float16Value reads an IEEE 754 half-precision number (two bytes, little
// endian).
func float16Value(v any) (any, error) {
	b, ok := v.([]byte)
	if !ok || len(b) != 2 {
		return nil, fmt.Errorf("a FLOAT16 read as %T of %d bytes", v, len(b))
	}
	h := binary.LittleEndian.Uint16(b)
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24), nil
	case 0x1f:
		if frac != 0 {
			return math.NaN(), nil
		}
		return math.Inf(int(sign)), nil
	}
	return sign * math.Ldexp(1024+frac, exp-25), nil
}

func eachParquet(path string, r io.Reader, header func(Columns) error, fn func(Row) error) (err error) {
	br, ok := r.(*bytes.Reader)
	if !ok {
		data, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		br = bytes.NewReader(data)
	}
	n := 0
	defer func() {
		// The generic reader panics on some schemas; a file is refused,
		// not the process.
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: row %d: the Parquet reader failed: %v", path, n+1, p)
		}
	}()
	f, err := parquet.OpenFile(br, br.Size())
	if err != nil {
		return fmt.Errorf("%s: not a Parquet file: %w", path, err)
	}
	tolerateEmptyPages(f.Root())
	conv, legacyShapes, err := checkParquet(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	legacy := map[string][]any{}
	for col, s := range legacyShapes {
		vals, err := readLegacy(f, s)
		if err != nil {
			return fmt.Errorf("%s: column %s: %w", path, col, err)
		}
		if int64(len(vals)) != f.NumRows() {
			return fmt.Errorf("%s: column %s: %d values for %d rows", path, col, len(vals), f.NumRows())
		}
		legacy[col] = vals
	}
	bounds := byteArrayBounds(f)
	group, groupEnd := 0, int64(0)
	if len(bounds) > 0 {
		groupEnd = bounds[0].rows
	}
	var names []string
	rest := parquet.Group{} // the columns the generic reader reads
	for _, fld := range f.Schema().Fields() {
		names = append(names, fld.Name())
		if _, ok := legacy[fld.Name()]; !ok {
			rest[fld.Name()] = fld
		}
	}
	if err := header(Columns{Names: names}); err != nil {
		return err
	}
	if len(rest) == 0 {
		for n < int(f.NumRows()) {
			n++
			m := map[string]any{}
			for col, vals := range legacy {
				m[col] = vals[n-1]
			}
			if err := fn(Row{Line: n, Fields: m}); err != nil {
				return err
			}
		}
		return nil
	}
	var opts []parquet.ReaderOption
	if len(legacy) > 0 {
		// The generic reader cannot even be built on some legacy
		// layouts (a LIST over a repeated primitive panics): it reads the
		// other columns only.
		opts = append(opts, parquet.NewSchema(f.Schema().Name(), rest))
	}
	rd := parquet.NewGenericReader[any](f, opts...)
	defer rd.Close()
	buf := make([]any, 256)
	for {
		k, err := rd.Read(buf)
		for _, v := range buf[:k] {
			n++
			m, ok := v.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: row %d: not a record", path, n)
			}
			for int64(n) > groupEnd && group+1 < len(bounds) {
				group++
				groupEnd += bounds[group].rows
			}
			for col, vals := range legacy {
				m[col] = vals[n-1]
			}
			for col, v := range m {
				if _, ok := legacy[col]; ok {
					continue
				}
				if b, ok := bounds[group].cols[col]; ok && v != nil {
					if err := b.check(v); err != nil {
						return fmt.Errorf("%s: row %d: column %s: %w", path, n, col, err)
					}
				}
				if c := conv[col]; c != nil && v != nil {
					if m[col], err = c(v); err != nil {
						return fmt.Errorf("%s: row %d: column %s: %w", path, n, col, err)
					}
					continue
				}
				if m[col], err = normalize(reflect.ValueOf(v)); err != nil {
					return fmt.Errorf("%s: row %d: column %s: %w", path, n, col, err)
				}
			}
			if err := fn(Row{Line: n, Fields: m}); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: row %d: %w", path, n+1, err)
		}
	}
}

// normalize turns a Parquet value into the JSON decoder's types (numbers
// as float64, byte strings as strings, lists as []any, records and maps as
// map[string]any), so one mapping reads both. What has no such form is an
// error: an integer a float64 does not hold exactly (beyond 2^53), a map
// key that is not a string or a whole number, a type it does not know.
func normalize(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	if v.Type() == reflect.TypeOf(big.Float{}) {
		bf := v.Addr().Interface().(*big.Float)
		f, _ := bf.Float64()
		return f, nil
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil, nil
		}
		return normalize(v.Elem())
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := v.Int()
		if i > 1<<53 || i < -(1<<53) {
			return nil, fmt.Errorf("the integer %d is beyond 2^53, which a number here (float64) does not hold exactly", i)
		}
		return float64(i), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := v.Uint()
		if u > 1<<53 {
			return nil, fmt.Errorf("the integer %d is beyond 2^53, which a number here (float64) does not hold exactly", u)
		}
		return float64(u), nil
	case reflect.Float32, reflect.Float64:
		return v.Float(), nil
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Kind() == reflect.Array {
				b := make([]byte, v.Len())
				reflect.Copy(reflect.ValueOf(b), v)
				return string(b), nil
			}
			return string(v.Bytes()), nil
		}
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil, nil
		}
		out := make([]any, v.Len())
		for i := range out {
			e, err := normalize(v.Index(i))
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = e
		}
		return out, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			k, err := mapKey(it.Key())
			if err != nil {
				return nil, err
			}
			e, err := normalize(it.Value())
			if err != nil {
				return nil, fmt.Errorf("key %s: %w", k, err)
			}
			out[k] = e
		}
		return out, nil
	case reflect.Struct:
		return normalizeStruct(v)
	}
	return nil, fmt.Errorf("a value of Go type %s, which this reader does not convert", v.Type())
}

// normalizeStruct reads a group the generic reader built as a struct
// (inside a map's values): its fields by their Parquet names, and a
// nested MAP (one field key_value of key/value pairs) as a map.
func normalizeStruct(v reflect.Value) (any, error) {
	t := v.Type()
	name := func(i int) string {
		n, _, _ := strings.Cut(t.Field(i).Tag.Get("parquet"), ",")
		if n == "" {
			n = t.Field(i).Name
		}
		return n
	}
	if t.NumField() == 1 && (name(0) == "key_value" || name(0) == "map") && v.Field(0).Kind() == reflect.Slice {
		kv := v.Field(0)
		if kv.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, kv.Len())
		for i := range kv.Len() {
			e := kv.Index(i)
			if e.Kind() != reflect.Struct || e.NumField() != 2 {
				return nil, fmt.Errorf("a map entry of Go type %s, which this reader does not convert", e.Type())
			}
			k, err := mapKey(e.Field(0))
			if err != nil {
				return nil, err
			}
			val, err := normalize(e.Field(1))
			if err != nil {
				return nil, fmt.Errorf("key %s: %w", k, err)
			}
			out[k] = val
		}
		return out, nil
	}
	if t.NumField() == 1 && name(0) == "list" && v.Field(0).Kind() == reflect.Slice {
		// A LIST: its repeated group of one field, element.
		l := v.Field(0)
		if l.IsNil() {
			return []any{}, nil
		}
		out := make([]any, l.Len())
		for i := range l.Len() {
			e := l.Index(i)
			if e.Kind() != reflect.Struct || e.NumField() != 1 {
				return nil, fmt.Errorf("a list element of Go type %s, which this reader does not convert", e.Type())
			}
			x, err := normalize(e.Field(0))
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = x
		}
		return out, nil
	}
	out := make(map[string]any, t.NumField())
	for i := range t.NumField() {
		f, err := normalize(v.Field(i))
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", name(i), err)
		}
		out[name(i)] = f
	}
	return out, nil
}

func mapKey(k reflect.Value) (string, error) {
	for k.Kind() == reflect.Interface || k.Kind() == reflect.Pointer {
		if k.IsNil() {
			return "", errors.New("a null map key")
		}
		k = k.Elem()
	}
	switch k.Kind() {
	case reflect.String:
		return k.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(k.Uint(), 10), nil
	case reflect.Slice:
		if k.Type().Elem().Kind() == reflect.Uint8 {
			return string(k.Bytes()), nil
		}
	}
	return "", fmt.Errorf("a map key of Go type %s, which this reader does not convert", k.Type())
}
