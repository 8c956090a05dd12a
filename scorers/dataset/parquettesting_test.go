package dataset

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// parquetWant is what reading one parquet-testing file must give: a
// refusal holding the text refuse, or rows of which the listed ones hold
// the listed columns (JSON, as the rows would marshal).
type parquetWant struct {
	refuse string
	rows   int
	check  map[int]string // 0-based row -> JSON object of some of its columns
}

// TestParquetTestingFiles reads every file of apache/parquet-testing's
// data/ kept in testdata/parquet-testing (SOURCE says which and why the
// others are not): each is read with the values the repository describes,
// or refused with an error naming the file and saying why; never a wrong
// value, never a panic.
func TestParquetTestingFiles(t *testing.T) {
	const dir = "../../testdata/parquet-testing"
	encrypted := parquetWant{refuse: "no DecryptionConfig"}
	int96 := func(micros ...int64) string {
		// int96_from_spark.md: the values as microseconds since the epoch.
		var s []string
		for _, m := range micros {
			s = append(s, `"`+time.UnixMicro(m).UTC().Format(time.RFC3339Nano)+`"`)
		}
		return strings.Join(s, ",")
	}
	wants := map[string]parquetWant{
		"alltypes_dictionary.parquet":                    {rows: 2, check: map[int]string{1: `{"id":1,"bool_col":false,"tinyint_col":1,"bigint_col":10,"float_col":1.100000023841858,"double_col":10.1,"date_string_col":"01/01/09","string_col":"1","timestamp_col":"2009-01-01T00:01:00Z"}`}},
		"alltypes_plain.parquet":                         {rows: 8, check: map[int]string{0: `{"id":4,"bool_col":true,"timestamp_col":"2009-03-01T00:00:00Z"}`}},
		"alltypes_plain.snappy.parquet":                  {rows: 2, check: map[int]string{0: `{"id":6,"timestamp_col":"2009-04-01T00:00:00Z"}`}},
		"binary.parquet":                                 {rows: 12, check: map[int]string{11: `{"foo":"\u000b"}`}},
		"binary_truncated_min_max.parquet":               {rows: 12},
		"byte_array_decimal.parquet":                     {rows: 24, check: map[int]string{0: `{"value":1}`, 23: `{"value":24}`}},
		"byte_stream_split.zstd.parquet":                 {rows: 300},
		"byte_stream_split_extended.gzip.parquet":        {rows: 200},
		"column_chunk_key_value_metadata.parquet":        {refuse: "not a Parquet file"},
		"concatenated_gzip_members.parquet":              {rows: 513, check: map[int]string{512: `{"long_col":513}`}},
		"data_index_bloom_encoding_stats.parquet":        {rows: 14},
		"data_index_bloom_encoding_with_length.parquet":  {rows: 14},
		"datapage_v1-corrupt-checksum.parquet":           {refuse: "checksum mismatch"},
		"datapage_v1-snappy-compressed-checksum.parquet": {rows: 5120},
		"datapage_v1-uncompressed-checksum.parquet":      {rows: 5120},
		"datapage_v2.snappy.parquet":                     {rows: 5, check: map[int]string{0: `{"a":"abc","b":1,"c":2,"d":true,"e":[1,2,3]}`, 1: `{"e":null}`}},
		// README.md: a FLOAT column, one row, the value null, its DataPage
		// v2 holding no data to decompress.
		"datapage_v2_empty_datapage.snappy.parquet":    {rows: 1, check: map[int]string{0: `{"value":null}`}},
		"delta_binary_packed.parquet":                  {refuse: "column bitwidth0: the integer 6374628540732951412 is beyond 2^53"},
		"delta_byte_array.parquet":                     {rows: 1000},
		"delta_encoding_optional_column.parquet":       {rows: 100},
		"delta_encoding_required_column.parquet":       {rows: 100},
		"delta_length_byte_array.parquet":              {rows: 1000},
		"dict-page-offset-zero.parquet":                {rows: 39},
		"encrypt_columns_and_footer.parquet.encrypted": encrypted, "encrypt_columns_and_footer_aad.parquet.encrypted": encrypted,
		"encrypt_columns_and_footer_bloom_filter.parquet.encrypted": encrypted, "encrypt_columns_and_footer_ctr.parquet.encrypted": encrypted,
		"encrypt_columns_and_footer_disable_aad_storage.parquet.encrypted": encrypted, "external_key_material_java.parquet.encrypted": encrypted,
		"uniform_encryption.parquet.encrypted":               encrypted,
		"encrypt_columns_plaintext_footer.parquet.encrypted": {refuse: "signed footer but no DecryptionConfig"},
		"fixed_length_byte_array.parquet":                    {rows: 1000},
		"fixed_length_decimal.parquet":                       {refuse: "column value: a DECIMAL of precision 25"},
		"fixed_length_decimal_legacy.parquet":                {rows: 24, check: map[int]string{0: `{"value":1}`, 23: `{"value":24}`}},
		// README.md "Float16 files": [None, 1, -2, NaN, 0, -1, -0, 2] and
		// [None, 0, NaN] (NaN as JSON cannot say it: checked below).
		"float16_nonzeros_and_nans.parquet": {rows: 8, check: map[int]string{0: `{"x":null}`, 1: `{"x":1}`, 2: `{"x":-2}`, 4: `{"x":0}`, 5: `{"x":-1}`, 6: `{"x":-0}`, 7: `{"x":2}`}},
		"float16_zeros_and_nans.parquet":    {rows: 3, check: map[int]string{0: `{"x":null}`, 1: `{"x":0}`}},
		"floating_orders_nan_count.parquet": {rows: 50},
		"hadoop_lz4_compressed.parquet":     {refuse: "unsupported compression codec: LZ4"},
		"incorrect_map_schema.parquet":      {refuse: "column my_map: a MAP whose keys may be null"},
		"int32_decimal.parquet":             {rows: 24, check: map[int]string{0: `{"value":1}`, 23: `{"value":24}`}},
		"int32_with_null_pages.parquet":     {rows: 1000},
		"int64_decimal.parquet":             {rows: 24, check: map[int]string{0: `{"value":1}`, 23: `{"value":24}`}},
		"int96_from_spark.parquet": {rows: 6, check: map[int]string{0: `{"a":` + int96(1704141296123456) + `}`, 1: `{"a":` + int96(1704070800000000) + `}`,
			2: `{"a":` + int96(253402225200000000) + `}`, 3: `{"a":` + int96(1735599600000000) + `}`, 4: `{"a":null}`, 5: `{"a":` + int96(9089380393200000000) + `}`}},
		// A 2 GB string column chunk in 4 KB of Brotli.
		"large_string_map.brotli.parquet": {refuse: "column arr.key_value.key: a column chunk of 2048 MB uncompressed, over the 256 MB"},
		"list_columns.parquet": {rows: 3, check: map[int]string{0: `{"int64_list":[1,2,3],"utf8_list":["abc","efg","hij"]}`,
			1: `{"int64_list":[null,1],"utf8_list":null}`, 2: `{"int64_list":[4],"utf8_list":["efg",null,"hij","xyz"]}`}},
		"lz4_raw_compressed.parquet": {rows: 4, check: map[int]string{0: `{"c0":1593604800,"c1":"abc","v11":42}`, 1: `{"v11":7.7}`}},
		// parquet-go v0.32 reads this column as empty strings (its page
		// holds 100,000 offsets for 10,000 values); the row group's
		// statistics reveal it.
		"lz4_raw_compressed_larger.parquet": {refuse: `column a: read "", outside the row group's statistics`},
		"map_no_value.parquet":              {refuse: "column my_map_no_v: a MAP whose layout is not"},
		"nan_in_stats.parquet":              {rows: 2, check: map[int]string{0: `{"x":1}`}},
		"nation.dict-malformed.parquet":     {refuse: "unexpected EOF"},
		"nested_lists.snappy.parquet":       {rows: 3, check: map[int]string{0: `{"a":[[["a","b"],["c"]],[null,["d"]]],"b":1}`}},
		"nested_maps.snappy.parquet": {rows: 6, check: map[int]string{0: `{"a":{"a":{"1":true,"2":false}},"b":1,"c":1}`,
			2: `{"a":{"c":null},"b":1,"c":1}`}},
		"nested_structs.rust.parquet":       {refuse: "column ul_observation_date.min: a TIMESTAMP inside a nested column"},
		"non_hadoop_lz4_compressed.parquet": {refuse: "unsupported compression codec: LZ4"},
		"nonnullable.impala.parquet": {rows: 1, check: map[int]string{0: `{"ID":8,"Int_Array":[-1],"int_array_array":[[-1,-2],[]],"Int_Map":{"k1":-1},
			"int_map_array":[{},{"k1":1},{},{}],"nested_Struct":{"a":-1,"B":[-1],"c":{"D":[[{"e":-1,"f":"nonnullable"}]]},"G":{}}}`}},
		// Impala's nullable table: testdata/datasets/functional (the first
		// two rows).
		"nullable.impala.parquet": {rows: 7, check: map[int]string{
			0: `{"id":1,"int_array":[1,2,3],"int_array_Array":[[1,2],[3,4]],"int_map":{"k1":1,"k2":100},"int_Map_Array":[{"k1":1}],
				"nested_struct":{"A":1,"b":[1],"C":{"d":[[{"E":10,"F":"aaa"},{"E":-10,"F":"bbb"}],[{"E":11,"F":"c"}]]},"g":{"foo":{"H":{"i":[1.1]}}}}}`,
			1: `{"id":2,"int_array":[null,1,2,null,3,null],"int_array_Array":[[null,1,2,null],[3,null,4],[],null],"int_map":{"k1":2,"k2":null},
				"int_Map_Array":[{"k3":null,"k1":1},null,{}]}`}},
		"null_list.parquet":    {rows: 1, check: map[int]string{0: `{"emptylist":[]}`}},
		"nulls.snappy.parquet": {rows: 8, check: map[int]string{0: `{"b_struct":{"b_c_int":null}}`}},
		// old_list_structure.md: LIST<LIST<INT32>> in the legacy two-level
		// layout, one row [[1, 2], [3, 4]].
		"old_list_structure.parquet":               {rows: 1, check: map[int]string{0: `{"a":[[1,2],[3,4]]}`}},
		"page_v2_empty_compressed.parquet":         {rows: 10, check: map[int]string{0: `{"integer_column":null}`}},
		"plain-dict-uncompressed-checksum.parquet": {rows: 1000},
		"repeated_no_annotation.parquet":           {rows: 6, check: map[int]string{0: `{"id":1,"phoneNumbers":null}`, 2: `{"id":3,"phoneNumbers":{"phone":[]}}`}},
		// README.md "REPEATED primitive fields with no LIST annotation".
		"repeated_primitive_no_list.parquet": {rows: 4, check: map[int]string{0: `{"Int32_list":[0,1,2,3],"String_list":["foo","zero","one","two"],
			"group_of_lists":{"Int32_list_in_group":[0,1,2,3],"String_list_in_group":["foo","zero","one","two"]}}`,
			1: `{"Int32_list":[],"String_list":["three"]}`}},
		"rle-dict-snappy-checksum.parquet":               {rows: 1000},
		"rle-dict-uncompressed-corrupt-checksum.parquet": {refuse: "checksum mismatch"},
		"rle_boolean_encoding.parquet":                   {rows: 68, check: map[int]string{0: `{"datatype_boolean":true}`, 1: `{"datatype_boolean":false}`, 2: `{"datatype_boolean":null}`}},
		"single_nan.parquet":                             {rows: 1},
		"sort_columns.parquet":                           {rows: 6, check: map[int]string{0: `{"a":null,"b":"a"}`, 1: `{"a":2,"b":"b"}`}},
		"unknown-logical-type.parquet":                   {rows: 3, check: map[int]string{0: `{"column with known type":"known string 1","column with unknown type":"unknown string 1"}`}},
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet*"))
	if err != nil || len(files) < 60 {
		t.Fatalf("%d files in %s (%v)", len(files), dir, err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		want, ok := wants[name]
		if !ok {
			t.Errorf("%s: no expectation: say what reading it must give", name)
			continue
		}
		delete(wants, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rows []map[string]any
		err = EachIn(path, FileParquet, bytes.NewReader(data), nil, func(r Row) error {
			rows = append(rows, r.Fields)
			return nil
		})
		if want.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), path+": ") || !strings.Contains(err.Error(), want.refuse) {
				t.Errorf("%s: %d rows, error %v; want a refusal naming the file and %q", name, len(rows), err, want.refuse)
			}
			continue
		}
		if err != nil || len(rows) != want.rows {
			t.Errorf("%s: %d rows, error %v; want %d rows", name, len(rows), err, want.rows)
			continue
		}
		for i, r := range rows {
			if err := jsonTyped(r); err != "" {
				t.Errorf("%s: row %d: %s", name, i+1, err)
				break
			}
		}
		for i, js := range want.check {
			var exp map[string]any
			if err := json.Unmarshal([]byte(js), &exp); err != nil {
				t.Fatalf("%s: bad expectation: %v", name, err)
			}
			for col, v := range exp {
				got, _ := json.Marshal(rows[i][col])
				wantJS, _ := json.Marshal(v)
				if string(got) != string(wantJS) || (v == nil) != (rows[i][col] == nil) {
					t.Errorf("%s: row %d: %s = %s, want %s", name, i+1, col, got, wantJS)
				}
				if f, ok := v.(float64); ok && f == 0 && math.Signbit(f) != math.Signbit(rows[i][col].(float64)) {
					t.Errorf("%s: row %d: %s = %v, want %v", name, i+1, col, rows[i][col], v)
				}
			}
		}
		switch name {
		case "float16_nonzeros_and_nans.parquet", "float16_zeros_and_nans.parquet":
			k := map[string]int{"float16_nonzeros_and_nans.parquet": 3, "float16_zeros_and_nans.parquet": 2}[name]
			if f, ok := rows[k]["x"].(float64); !ok || !math.IsNaN(f) {
				t.Errorf("%s: row %d: x = %v, want NaN", name, k+1, rows[k]["x"])
			}
		case "byte_stream_split_extended.gzip.parquet":
			// Each type twice, PLAIN and BYTE_STREAM_SPLIT: the same values.
			for i, r := range rows {
				for col, v := range r {
					if base, ok := strings.CutSuffix(col, "_plain"); ok {
						if a, b := Text(v), Text(r[base+"_byte_stream_split"]); a != b {
							t.Errorf("%s: row %d: %s = %s, %s_byte_stream_split = %s", name, i+1, col, a, base, b)
						}
					}
				}
			}
			// float16 from README.md's pyarrow dump of the first values.
			if f, _ := rows[0]["float16_plain"].(float64); f != 10.3046875 {
				t.Errorf("%s: float16_plain = %v, want 10.3046875", name, rows[0]["float16_plain"])
			}
		case "delta_byte_array.parquet", "delta_encoding_optional_column.parquet", "delta_encoding_required_column.parquet":
			compareExpectCSV(t, filepath.Join(dir, strings.TrimSuffix(name, ".parquet")+"_expect.csv"), rows)
		}
	}
	for name := range wants {
		t.Errorf("%s: expected but not in %s", name, dir)
	}
}

// jsonTyped reports a value that is not what the JSON decoder gives: a Go
// pointer, a byte slice, an integer type, a typed map.
func jsonTyped(v any) string {
	switch x := v.(type) {
	case nil, string, float64, bool:
		return ""
	case []any:
		for _, e := range x {
			if s := jsonTyped(e); s != "" {
				return s
			}
		}
		return ""
	case map[string]any:
		for _, e := range x {
			if s := jsonTyped(e); s != "" {
				return s
			}
		}
		return ""
	}
	return fmt.Sprintf("a value of Go type %T", v)
}

// compareExpectCSV checks every row against the repository's CSV of the
// file's values (an empty field is a null), column by column in order.
func compareExpectCSV(t *testing.T, path string, rows []map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs)-1 != len(rows) {
		t.Fatalf("%s: %d rows, the file read %d", path, len(recs)-1, len(rows))
	}
	clean := func(s string) string { return strings.Trim(strings.TrimSpace(s), ":") }
	cols := map[string]string{}
	for k := range rows[0] {
		cols[clean(k)] = k
	}
	bad := 0
	for i, rec := range recs[1:] {
		for j, h := range recs[0] {
			col, ok := cols[clean(h)]
			if !ok {
				t.Fatalf("%s: column %q not in the file (%v)", path, h, slices.Sorted(func(yield func(string) bool) {
					for k := range cols {
						if !yield(k) {
							return
						}
					}
				}))
			}
			got := rows[i][col]
			if (rec[j] == "") != (got == nil) || (got != nil && Text(got) != rec[j]) {
				if bad++; bad < 5 {
					t.Errorf("%s: row %d: %s = %q, want %q", path, i+1, h, Text(got), rec[j])
				}
			}
		}
	}
}

// TestParquetMemoryIsBounded: refusing large_string_map.brotli.parquet (a
// 2 GB column chunk in 4 KB) allocates little, not the chunk.
func TestParquetMemoryIsBounded(t *testing.T) {
	path := "../../testdata/parquet-testing/large_string_map.brotli.parquet"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = EachIn(path, FileParquet, bytes.NewReader(data), nil, func(Row) error { return nil })
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("read, want a refusal")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 500<<20 {
		t.Errorf("allocated %d MB, over 500 MB", alloc>>20)
	}
}
