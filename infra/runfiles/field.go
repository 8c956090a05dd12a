package runfiles

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"

	"github.com/glossobench/glossobench/infra/store"
)

// EachJSONLField calls fn with the value of one top-level field of every
// object of the JSONL stored under key (T's zero value where an object has
// no such field): what EachJSONL gives for a struct of that one field
// (json:"field"), matched as encoding/json matches names.
//
// It decodes only that field. The other fields are stepped over by their
// quotes and brackets, not decoded: decoding them is most of a line's time
// when the field is a small part of it (a scores line's audit rows). So a
// line whose other fields hold a malformed value inside well-formed quotes
// and brackets (a bad number, literal or escape) is read here where
// EachJSONL refuses it. Every other line EachJSONL refuses, and every line
// that does not split plainly (an escaped key, the field named twice) or
// whose field does not decode, is decoded whole as EachJSONL decodes it,
// with EachJSONL's error.
func EachJSONLField[T any](ctx context.Context, st store.Store, key, field string, fn func(T) error) error {
	r, err := st.Open(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	return scanField(r, key, field, fn)
}

// scanField is EachJSONLField on r; name names the file in errors.
func scanField[T any](r io.Reader, name, field string, fn func(T) error) error {
	whole := reflect.StructOf([]reflect.StructField{{
		Name: "Field", Type: reflect.TypeFor[T](), Tag: reflect.StructTag(`json:"` + field + `"`),
	}})
	return EachLine(r, name, func(line int, text []byte) error {
		var v T
		if raw, ok := fieldValue(text, field); !ok || raw != nil && json.Unmarshal(raw, &v) != nil {
			w := reflect.New(whole)
			if err := decodeLine(text, false, w.Interface()); err != nil {
				return lineError(name, text, line, err)
			}
			v = w.Elem().Field(0).Interface().(T)
		}
		return fn(v)
	})
}

// fieldValue is the value of the top-level field name of the JSON object
// line (nil when it has none), and false when the line does not split
// plainly into keys and values or names the field more than once
// (encoding/json keeps the last value but refuses the line for an
// earlier one of the wrong type).
func fieldValue(line []byte, name string) (value []byte, ok bool) {
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return nil, false
	}
	i := skipSpace(line, 1)
	if line[i] == '}' {
		return nil, i == len(line)-1
	}
	for {
		if line[i] != '"' {
			return nil, false
		}
		end := stringEnd(line, i)
		if end < 0 {
			return nil, false
		}
		k := line[i+1 : end-1]
		if bytes.IndexByte(k, '\\') >= 0 {
			return nil, false // an escaped key: let encoding/json read it
		}
		i = skipSpace(line, end)
		if line[i] != ':' {
			return nil, false
		}
		i = skipSpace(line, i+1)
		end = valueEnd(line, i)
		if end <= i || end >= len(line) {
			return nil, false
		}
		if bytes.EqualFold(k, []byte(name)) {
			if value != nil {
				return nil, false
			}
			value = line[i:end]
		}
		i = skipSpace(line, end)
		switch {
		case line[i] == '}' && i == len(line)-1:
			return value, true
		case line[i] != ',':
			return nil, false
		}
		i = skipSpace(line, i+1)
	}
}

// skipSpace is the index of the first byte from i on that is not JSON
// white space; the line ends in '}', so it stays in the line.
func skipSpace(b []byte, i int) int {
	for i < len(b)-1 && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just after the string that opens at b[i], or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd is the index just after the value that starts at b[i]: its
// closing bracket, or the ',' or '}' that ends a number or literal; -1 when
// its brackets do not close in the line.
func valueEnd(b []byte, i int) int {
	var awaited [16]byte
	open := awaited[:0] // the closing brackets awaited, innermost last
	for j := i; j < len(b); j++ {
		switch c := b[j]; c {
		case '"':
			e := stringEnd(b, j)
			if e < 0 {
				return -1
			}
			if len(open) == 0 {
				return e
			}
			j = e - 1
		case '{', '[':
			open = append(open, c+2) // '}' and ']' are two past '{' and '['
		case '}', ']':
			if len(open) == 0 {
				return j
			}
			if open[len(open)-1] != c {
				return -1
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				return j + 1
			}
		case ',':
			if len(open) == 0 {
				return j
			}
		}
	}
	return -1
}
