package dataset

import (
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// The generic reader misreads the legacy LIST layouts (old_list_structure:
// [[1, 2], [3, 4]] reads as [1 3]). A top-level column holding one is
// rebuilt here from its leaf's repetition and definition levels, reading
// its lists by LogicalTypes.md's backward-compatibility rules. Only a
// column with one leaf is: the levels of one leaf say the whole value.

// levelShape is how a column's values nest: a leaf, a list or a record of
// one field, each perhaps null.
type levelShape struct {
	kind     shapeKind
	nullable bool
	present  int         // the definition level at which the value is not null
	elemDef  int         // a list: the definition level at which it has an element
	rep      int         // a list: the repetition level of its next element
	field    string      // a record: its field's name
	child    *levelShape // a list's element, a record's field
	leaf     *parquetColumn
}

type shapeKind int

const (
	leafShape shapeKind = iota
	listShape
	recordShape
)

// hasLegacyList reports whether c holds a LIST whose repeated field is the
// element itself (rules 1-4 of the backward-compatibility rules).
func hasLegacyList(c *parquetColumn) bool {
	if c.annotated(deprecated.List, &format.ListType{}) && len(c.children) == 1 && c.children[0].repeated() && elementIsRepeated(c, c.children[0]) {
		return true
	}
	for _, ch := range c.children {
		if hasLegacyList(ch) {
			return true
		}
	}
	return false
}

// elementIsRepeated applies LogicalTypes.md's rules 1-4: the repeated
// field r of the LIST c is the element (required) when it is a primitive,
// a group of several fields, a group of one repeated field, or a group of
// one field named "array" or "<c>_tuple"; else (rule 5) its one field is.
func elementIsRepeated(c, r *parquetColumn) bool {
	return len(r.children) != 1 || r.children[0].repeated() || r.elem.Name == "array" || r.elem.Name == c.elem.Name+"_tuple"
}

// legacyShape is the shape of the top-level column c.
func legacyShape(c *parquetColumn) (*levelShape, error) {
	if c.repeated() {
		// A repeated field without a LIST annotation: a list of required
		// elements, never null.
		child, err := shapeOf(c, 1, 1, false)
		return &levelShape{kind: listShape, elemDef: 1, rep: 1, child: child}, err
	}
	if optional(c) {
		return shapeOf(c, 1, 0, true)
	}
	return shapeOf(c, 0, 0, false)
}

func optional(c *parquetColumn) bool {
	r, ok := c.elem.RepetitionType.Get()
	return ok && r == format.Optional
}

// shapeOf is the shape of c, whose own levels (its repetition counted)
// are def and rep.
func shapeOf(c *parquetColumn, def, rep int, nullable bool) (*levelShape, error) {
	s := &levelShape{nullable: nullable, present: def}
	switch {
	case len(c.children) == 0:
		if err := plainLeaf(c); err != nil {
			return nil, err
		}
		s.kind, s.leaf = leafShape, c
		return s, nil
	case c.annotated(deprecated.List, &format.ListType{}):
		if len(c.children) != 1 || !c.children[0].repeated() {
			return nil, fmt.Errorf("%s: a LIST whose one field is not repeated", c.path)
		}
		r := c.children[0]
		s.kind, s.elemDef, s.rep = listShape, def+1, rep+1
		var err error
		if elementIsRepeated(c, r) {
			s.child, err = shapeOf(r, def+1, rep+1, false)
		} else {
			e := r.children[0]
			d := def + 1
			if optional(e) {
				d++
			}
			s.child, err = shapeOf(e, d, rep+1, optional(e))
		}
		return s, err
	case c.annotated(deprecated.Map, &format.MapType{}) || c.annotated(deprecated.MapKeyValue, &format.MapType{}):
		return nil, fmt.Errorf("%s: a MAP", c.path)
	case len(c.children) != 1:
		return nil, fmt.Errorf("%s: a record of %d fields", c.path, len(c.children))
	}
	ch := c.children[0]
	s.kind, s.field = recordShape, ch.elem.Name
	var err error
	switch {
	case ch.repeated():
		child, e := shapeOf(ch, def+1, rep+1, false)
		s.child, err = &levelShape{kind: listShape, present: def, elemDef: def + 1, rep: rep + 1, child: child}, e
	case optional(ch):
		s.child, err = shapeOf(ch, def+1, rep, true)
	default:
		s.child, err = shapeOf(ch, def, rep, false)
	}
	return s, err
}

// plainLeaf accepts the leaves whose parquet.Value reads as the value
// itself: booleans, signed integers, floats and text.
func plainLeaf(c *parquetColumn) error {
	t, _ := c.elem.Type.Get()
	_, hasCT := c.elem.ConvertedType.Get()
	lt := c.elem.LogicalType.Value
	switch t {
	case format.Boolean, format.Float, format.Double:
		if !hasCT && lt == nil {
			return nil
		}
	case format.Int32, format.Int64:
		if it, ok := lt.(*format.IntType); ok && it.IsSigned {
			return nil
		}
		ct, _ := c.elem.ConvertedType.Get()
		if lt == nil && (!hasCT || ct == deprecated.Int8 || ct == deprecated.Int16 || ct == deprecated.Int32 || ct == deprecated.Int64) {
			return nil
		}
	case format.ByteArray:
		ct, _ := c.elem.ConvertedType.Get()
		switch lt.(type) {
		case nil, *format.StringType, *format.EnumType, *format.JsonType:
			if !hasCT || ct == deprecated.UTF8 || ct == deprecated.Enum || ct == deprecated.Json {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: a %s leaf with annotation %v", c.path, t, lt)
}

// legacyLeaf finds the one leaf under c.
func legacyLeaf(s *levelShape) *parquetColumn {
	for s.kind != leafShape {
		s = s.child
	}
	return s.leaf
}

// readLegacy reads the top-level column whose shape is s, one value a row.
func readLegacy(f *parquet.File, s *levelShape) ([]any, error) {
	leaf := legacyLeaf(s)
	col := f.Root()
	for _, name := range splitPath(leaf.path) {
		if col = col.Column(name); col == nil {
			return nil, fmt.Errorf("no column %s", leaf.path)
		}
	}
	var rows []any
	var record []parquet.Value
	flush := func() error {
		if len(record) == 0 {
			return nil
		}
		v, err := assemble(s, record)
		if err != nil {
			return fmt.Errorf("row %d: %w", len(rows)+1, err)
		}
		rows = append(rows, v)
		record = record[:0]
		return nil
	}
	buf := make([]parquet.Value, 256)
	for _, rg := range f.RowGroups() {
		pages := rg.ColumnChunks()[col.Index()].Pages()
		for {
			p, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return nil, err
			}
			vr := p.Values()
			for {
				k, err := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					if v.RepetitionLevel() == 0 {
						if err := flush(); err != nil {
							return nil, err
						}
					}
					record = append(record, v.Clone())
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					pages.Close()
					return nil, err
				}
			}
			parquet.Release(p)
		}
		pages.Close()
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := range len(p) {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// assemble builds one value of shape s from the leaf values (with their
// levels) that belong to it; a level that contradicts the shape is an
// error, not a guess.
func assemble(s *levelShape, vs []parquet.Value) (any, error) {
	if s.nullable && vs[0].DefinitionLevel() < s.present {
		if len(vs) != 1 {
			return nil, errors.New("a null followed by values at the same place")
		}
		return nil, nil
	}
	switch s.kind {
	case leafShape:
		if len(vs) != 1 || vs[0].IsNull() {
			return nil, fmt.Errorf("%d values, or a null, where one value belongs", len(vs))
		}
		return leafValue(vs[0])
	case recordShape:
		v, err := assemble(s.child, vs)
		if err != nil {
			return nil, err
		}
		return map[string]any{s.field: v}, nil
	}
	if vs[0].DefinitionLevel() < s.elemDef {
		if len(vs) != 1 {
			return nil, errors.New("an empty list followed by values")
		}
		return []any{}, nil
	}
	out := []any{}
	start := 0
	for i := 1; i <= len(vs); i++ {
		if i < len(vs) && vs[i].RepetitionLevel() > s.rep {
			continue
		}
		if i < len(vs) && vs[i].RepetitionLevel() < s.rep {
			return nil, fmt.Errorf("repetition level %d inside a list of level %d", vs[i].RepetitionLevel(), s.rep)
		}
		v, err := assemble(s.child, vs[start:i])
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", len(out), err)
		}
		out = append(out, v)
		start = i
	}
	return out, nil
}

func leafValue(v parquet.Value) (any, error) {
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean(), nil
	case parquet.Int32:
		return float64(v.Int32()), nil
	case parquet.Int64:
		return normalize(reflect.ValueOf(v.Int64()))
	case parquet.Float:
		return float64(v.Float()), nil
	case parquet.Double:
		return v.Double(), nil
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray()), nil
	}
	return nil, fmt.Errorf("a %s value, which this reader does not convert", v.Kind())
}
