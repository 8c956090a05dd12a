package activities

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/glossobench/glossobench/infra/store"
)

// encodeJSONL writes one JSON object per line.
func encodeJSONL[T any](rows []T) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// decodeJSONL reads one JSON object per line; name names the object in errors.
func decodeJSONL[T any](data []byte, name string) ([]T, error) {
	var rows []T
	err := scanJSONL(bytes.NewReader(data), name, func(v T) error {
		rows = append(rows, v)
		return nil
	})
	return rows, err
}

// eachJSONL calls fn with every object of the JSONL stored under key, read a
// line at a time, so an axis-sized object is never held whole.
func eachJSONL[T any](ctx context.Context, st store.Store, key string, fn func(T) error) error {
	r, err := st.Open(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	return scanJSONL(r, key, fn)
}

// scanJSONL decodes r a line at a time and calls fn with each object; errors
// name the object and the line.
func scanJSONL[T any](r io.Reader, name string, fn func(T) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return nil
}

// spool collects one JSONL object in a temporary file, so that writing an
// axis's items or item scores never needs them all in memory; commit stores
// it create-only (an identical earlier attempt's object counts as success,
// as with putOnce).
type spool struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
}

func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "glossobench-spool-*.jsonl")
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &spool{f: f, w: w, enc: enc}, nil
}

func (s *spool) add(v any) error { return s.enc.Encode(v) }

// commit stores the spooled object under key and removes the file.
func (s *spool) commit(ctx context.Context, st store.Store, key string) error {
	defer s.discard()
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("spooling %s: %w", key, err)
	}
	err := st.PutFile(ctx, key, s.f.Name())
	if errors.Is(err, store.ErrExists) {
		return nil
	}
	return err
}

// discard removes the file; committing or discarding twice is harmless.
func (s *spool) discard() {
	s.f.Close()
	os.Remove(s.f.Name())
}
