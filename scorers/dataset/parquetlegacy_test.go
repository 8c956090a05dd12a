package dataset

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// listGroup annotates a group LIST, as the legacy writers did, whatever
// its layout (parquet-go itself writes only the standard one).
type listGroup struct{ parquet.Node }

func (n listGroup) Type() parquet.Type { return listType{n.Node.Type()} }

type listType struct{ parquet.Type }

func (listType) LogicalType() *format.LogicalType {
	return &format.LogicalType{Value: &format.ListType{}}
}

// TestParquetLegacyLists reads the layouts of LogicalTypes.md's
// backward-compatibility examples (one column l, written here with the
// repetition and definition levels the format gives each row) as the
// lists the rules say, and refuses, naming the column, the one it does
// not rebuild (rule 2, a repeated group of several fields).
func TestParquetLegacyLists(t *testing.T) {
	str := parquet.String()
	i32 := parquet.Int(32)
	val := func(v parquet.Value, r, d int) parquet.Value { return v.Level(r, d, 0) }
	s := func(x string) parquet.Value { return parquet.ByteArrayValue([]byte(x)) }
	n := func(x int32) parquet.Value { return parquet.Int32Value(x) }
	cases := []struct {
		name   string
		node   parquet.Node
		rows   []parquet.Row
		want   string // the column l of each row, as JSON
		refuse string
	}{{
		// Rule 1: optional group l (LIST) { repeated int32 element; }
		name: "rule 1",
		node: parquet.Optional(listGroup{parquet.Group{"element": parquet.Repeated(i32)}}),
		rows: []parquet.Row{{val(n(1), 0, 2), val(n(2), 1, 2)}, {val(parquet.NullValue(), 0, 0)}, {val(parquet.NullValue(), 0, 1)}},
		want: `[[1,2],null,[]]`,
	}, {
		// Rule 4: optional group l (LIST) { repeated group array { required binary str (STRING); } }
		name: "rule 4, array",
		node: parquet.Optional(listGroup{parquet.Group{"array": parquet.Repeated(parquet.Group{"str": str})}}),
		rows: []parquet.Row{{val(s("a"), 0, 2), val(s("b"), 1, 2)}, {val(parquet.NullValue(), 0, 1)}},
		want: `[[{"str":"a"},{"str":"b"}],[]]`,
	}, {
		// Rule 4: optional group l (LIST) { repeated group l_tuple { required binary str (STRING); } }
		name: "rule 4, l_tuple",
		node: parquet.Optional(listGroup{parquet.Group{"l_tuple": parquet.Repeated(parquet.Group{"str": str})}}),
		rows: []parquet.Row{{val(s("a"), 0, 2)}},
		want: `[[{"str":"a"}]]`,
	}, {
		// Rule 3 nested in rule 1: required group l (LIST) { repeated group array (LIST) { repeated int32 array; } },
		// old_list_structure.parquet's layout, with an empty inner list.
		name: "rule 3",
		node: listGroup{parquet.Group{"array": parquet.Repeated(listGroup{parquet.Group{"array": parquet.Repeated(i32)}})}},
		rows: []parquet.Row{{val(n(1), 0, 2), val(n(2), 2, 2), val(parquet.NullValue(), 1, 1), val(n(3), 1, 2)}, {val(parquet.NullValue(), 0, 0)}},
		want: `[[[1,2],[],[3]],[]]`,
	}, {
		// Rule 5, the repeated group not named list: optional group l (LIST) { repeated group element { optional binary str (STRING); } }
		name: "rule 5",
		node: parquet.Optional(listGroup{parquet.Group{"element": parquet.Repeated(parquet.Group{"str": parquet.Optional(str)})}}),
		rows: []parquet.Row{{val(s("a"), 0, 3), val(parquet.NullValue(), 1, 2)}, {val(parquet.NullValue(), 0, 0)}},
		want: `[["a",null],null]`,
	}, {
		// Rule 2: optional group l (LIST) { repeated group element { required binary str (STRING); required int32 num; } }
		name:   "rule 2",
		node:   parquet.Optional(listGroup{parquet.Group{"element": parquet.Repeated(parquet.Group{"str": str, "num": i32})}}),
		rows:   []parquet.Row{{parquet.Int32Value(1).Level(0, 2, 0), s("a").Level(0, 2, 1)}},
		refuse: "x.parquet: column l: a legacy LIST layout holding l.element: a record of 2 fields",
	}}
	for _, c := range cases {
		var b bytes.Buffer
		w := parquet.NewWriter(&b, parquet.NewSchema("m", parquet.Group{"l": c.node}))
		if _, err := w.WriteRows(c.rows); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []any
		err := EachIn("x.parquet", FileParquet, bytes.NewReader(b.Bytes()), nil, func(r Row) error {
			got = append(got, r.Fields["l"])
			return nil
		})
		if c.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), c.refuse) {
				t.Errorf("%s: read %v, error %v; want %q", c.name, got, err, c.refuse)
			}
			continue
		}
		js, _ := json.Marshal(got)
		if err != nil || string(js) != c.want {
			t.Errorf("%s: %s, error %v; want %s", c.name, js, err, c.want)
		}
	}
}

// TestParquetLegacyListBesideOthers: the other columns of a file with a
// legacy list read as before, row by row beside it.
func TestParquetLegacyListBesideOthers(t *testing.T) {
	// Columns sort by name: id (0), l (1), s (2).
	schema := parquet.NewSchema("m", parquet.Group{
		"id": parquet.Int(32),
		"l":  parquet.Optional(listGroup{parquet.Group{"element": parquet.Repeated(parquet.Int(32))}}),
		"s":  parquet.Optional(parquet.String()),
	})
	rows := []parquet.Row{
		{parquet.Int32Value(7).Level(0, 0, 0), parquet.Int32Value(1).Level(0, 2, 1), parquet.Int32Value(2).Level(1, 2, 1), parquet.ByteArrayValue([]byte("x")).Level(0, 1, 2)},
		{parquet.Int32Value(8).Level(0, 0, 0), parquet.NullValue().Level(0, 1, 1), parquet.NullValue().Level(0, 0, 2)},
	}
	var b bytes.Buffer
	w := parquet.NewWriter(&b, schema)
	if _, err := w.WriteRows(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	err := EachIn("x.parquet", FileParquet, bytes.NewReader(b.Bytes()), nil, func(r Row) error {
		got = append(got, r.Fields)
		return nil
	})
	js, _ := json.Marshal(got)
	if want := `[{"id":7,"l":[1,2],"s":"x"},{"id":8,"l":[],"s":null}]`; err != nil || string(js) != want {
		t.Errorf("%s, error %v; want %s", js, err, want)
	}
}
