package runfiles

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers/dataset"
)

// The one JSONL codec of a run's files: one JSON object per line, blank
// lines skipped; errors name the file, the line and, where the content is at
// fault, the field.

// EncodeJSONL writes one JSON object per line, HTML left unescaped.
func EncodeJSONL[T any](rows []T) ([]byte, error) {
	var b bytes.Buffer
	enc := newEncoder(&b)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

func newEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// DecodeJSONL reads every object of data; name names the file in errors.
func DecodeJSONL[T any](name string, data []byte) ([]T, error) {
	var rows []T
	err := ScanJSONL(bytes.NewReader(data), name, func(_ int, v T) error {
		rows = append(rows, v)
		return nil
	})
	return rows, err
}

// ScanJSONL decodes r a line at a time and calls fn with each object and its
// line number; an error fn returns stops the scan and is returned as it is.
func ScanJSONL[T any](r io.Reader, name string, fn func(line int, v T) error) error {
	return scan(r, name, false, fn)
}

// ScanStrictJSONL is ScanJSONL for files others write (bundles, inputs): a
// field T does not have is an error naming the file, line and field.
func ScanStrictJSONL[T any](r io.Reader, name string, fn func(line int, v T) error) error {
	return scan(r, name, true, fn)
}

func scan[T any](r io.Reader, name string, strict bool, fn func(line int, v T) error) error {
	return EachLine(r, name, func(line int, text []byte) error {
		var v T
		if err := decodeLine(text, strict, &v); err != nil {
			return lineError(name, text, line, err)
		}
		return fn(line, v)
	})
}

// EachLine calls fn with every non-blank line of r, trimmed, and its line
// number (dataset.EachLine, the one line reader), so a reader that skips
// most lines (the viewer's) need not decode them.
func EachLine(r io.Reader, name string, fn func(line int, text []byte) error) error {
	return dataset.EachLine(r, name, fn)
}

func decodeLine(text []byte, strict bool, v any) error {
	if !strict {
		return json.Unmarshal(text, v)
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errMoreValues
	}
	return nil
}

var errMoreValues = errors.New("more than one JSON value on the line")

// EachJSONL calls fn with every object of the JSONL stored under key, read a
// line at a time, so an axis-sized object is never held whole.
func EachJSONL[T any](ctx context.Context, st store.Store, key string, fn func(T) error) error {
	r, err := st.Open(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	return ScanJSONL(r, key, func(_ int, v T) error { return fn(v) })
}

// DecodeJSON decodes one JSON document; errors name the file, the line and
// the field at fault.
func DecodeJSON(name string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return jsonError(name, data, 0, dec.InputOffset(), err)
	}
	if dec.More() {
		return fmt.Errorf("%s:%d: more than one JSON value", name, LineAt(data, dec.InputOffset()))
	}
	return nil
}

// lineError names the file, line and field of a line that does not decode.
func lineError(name string, text []byte, line int, err error) error {
	var se *json.SyntaxError
	if errors.Is(err, errMoreValues) || errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
		return fmt.Errorf("%s:%d: more than one JSON value on the line", name, line)
	}
	return jsonError(name, text, line, int64(len(text)), err)
}

// jsonError names the file, line and field of a decoding error. line is the
// line of data within the file for JSONL (0: data is the whole file).
func jsonError(name string, data []byte, line int, off int64, err error) error {
	at := func(off int64) int {
		if line > 0 {
			return line
		}
		return LineAt(data, off)
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("%s:%d: field %s: want %s, got %s", name, at(te.Offset), te.Field, te.Type, te.Value)
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: %s", name, at(se.Offset), se.Error())
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) == 0:
		return fmt.Errorf("%s: empty", name)
	}
	return fmt.Errorf("%s:%d: %s", name, at(off), strings.TrimPrefix(err.Error(), "json: "))
}

// LineAt is the 1-based line of byte offset off in data.
func LineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// Spool collects one JSONL object in a temporary file, so that writing an
// axis's items or item scores never needs them all in memory; Commit stores
// it create-only (an identical earlier attempt's object counts as success).
type Spool struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
}

// NewSpool starts a spool in the temporary directory.
func NewSpool() (*Spool, error) {
	f, err := os.CreateTemp("", "glossobench-spool-*.jsonl")
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	return &Spool{f: f, w: w, enc: newEncoder(w)}, nil
}

// Add appends one object.
func (s *Spool) Add(v any) error { return s.enc.Encode(v) }

// Commit stores the spooled object under key and removes the file.
func (s *Spool) Commit(ctx context.Context, st store.Store, key string) error {
	defer s.Discard()
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("spooling %s: %w", key, err)
	}
	err := st.PutFile(ctx, key, s.f.Name())
	if errors.Is(err, store.ErrExists) {
		return nil
	}
	return err
}

// Discard removes the file; committing or discarding twice is harmless.
func (s *Spool) Discard() {
	s.f.Close()
	os.Remove(s.f.Name())
}
