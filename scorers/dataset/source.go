package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// File formats of a dataset (DatasetConfig.FileFormat); "" takes it from the
// name: .csv, .tsv, .parquet, and anything else JSONL.
const (
	FileJSONL   = "jsonl"
	FileCSV     = "csv"
	FileTSV     = "tsv"
	FileParquet = "parquet"
)

// Source names one dataset file.
type Source struct {
	// URI is a local path (relative ones resolve against BaseDir) or
	// scheme://... for a scheme an infra package registered (s3://, hf://).
	URI     string
	BaseDir string
	Format  string // FileJSONL, FileCSV, FileTSV, FileParquet or "" (from the name)
	// SHA256 pins the file's bytes as stored (before decompression); a
	// mismatch is an error. Required for hf:// sources. For a set (Config
	// and Split) it pins the set: see SetResolver.
	SHA256 string
	// Config and Split name a dataset's table on the Hub when URI names the
	// repository alone (hf://datasets/OWNER/NAME@REVISION): the source is
	// then the split's Parquet files, read in order as one table.
	Config, Split string
}

// IsSet reports whether the source names a configuration's split of a
// repository rather than one file.
func (s Source) IsSet() bool { return s.Config != "" || s.Split != "" }

// SetFile is one file of a set: Name (its URI) is what errors name, Path
// the local copy read.
type SetFile struct {
	Name, Path string
}

// SetResolver returns the local files of a repository's configuration and
// split, in order, once their contents match pin (a SHA-256 over the
// set). Without a pin it fetches them and refuses with the value to pin.
type SetResolver func(ctx context.Context, uri, config, split, pin string) ([]SetFile, error)

// Row is one record of a dataset file.
type Row struct {
	// Line is the 1-based line of the record in a JSONL or CSV/TSV file
	// (where the record starts), or its 1-based row number in a Parquet file.
	Line   int
	Fields map[string]any
}

// Opener opens a remote dataset file. pin is the configured SHA-256 (may
// be empty); an opener that fetches into a cache verifies it there.
type Opener func(ctx context.Context, uri, pin string) (io.ReadCloser, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

var setResolvers = map[string]SetResolver{}

// RegisterSetScheme makes scheme:// repositories readable by configuration
// and split (Source.Config, Source.Split) through resolve.
func RegisterSetScheme(scheme string, resolve SetResolver) {
	openersMu.Lock()
	defer openersMu.Unlock()
	setResolvers[scheme] = resolve
}

// RegisterScheme makes URIs starting with scheme:// readable through open.
// The infra packages register s3 and hf; the dataset package itself reads
// local files only.
func RegisterScheme(scheme string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = open
}

// Path returns the source's location as errors name it.
func (s Source) Path() string {
	if s.IsSet() {
		return strings.TrimSuffix(s.URI, "/") + "/" + s.Config + "/" + s.Split
	}
	if strings.Contains(s.URI, "://") || filepath.IsAbs(s.URI) || s.BaseDir == "" {
		return s.URI
	}
	return filepath.Join(s.BaseDir, s.URI)
}

// Name is the file name without compression and format extensions.
func (s Source) Name() string {
	if s.IsSet() {
		// NAME_CONFIG_SPLIT: the split's own name ("test") says too little.
		repo := strings.TrimSuffix(s.URI, "/")
		if p, err := ParseHFRepo(repo); err == nil {
			repo = p.Repo
		}
		return filepath.Base(strings.SplitN(repo, "@", 2)[0]) + "_" + s.Config + "_" + s.Split
	}
	base := filepath.Base(strings.SplitN(s.Path(), "?", 2)[0])
	base = trimCompression(base)
	for _, ext := range []string{".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

func trimCompression(name string) string {
	for _, ext := range []string{".gz", ".zst", ".zstd"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}

// FileFormat returns the file format, from Format or the name.
func (s Source) FileFormat() (string, error) {
	if s.IsSet() && s.Format != "" && s.Format != FileParquet {
		return "", fmt.Errorf("file_format: %q: a dataset named by config and split is the Hub's Parquet files", s.Format)
	}
	if s.IsSet() {
		return FileParquet, nil
	}
	switch s.Format {
	case FileJSONL, FileCSV, FileTSV, FileParquet:
		return s.Format, nil
	case "":
	default:
		return "", fmt.Errorf("file_format: %q is not jsonl, csv, tsv or parquet", s.Format)
	}
	name := strings.ToLower(trimCompression(strings.SplitN(s.Path(), "?", 2)[0]))
	switch filepath.Ext(name) {
	case ".csv":
		return FileCSV, nil
	case ".tsv":
		return FileTSV, nil
	case ".parquet":
		return FileParquet, nil
	}
	return FileJSONL, nil
}

func (s Source) open(ctx context.Context) (io.ReadCloser, error) {
	p := s.Path()
	if scheme, _, ok := strings.Cut(p, "://"); ok {
		openersMu.RLock()
		open := openers[scheme]
		openersMu.RUnlock()
		if open == nil {
			return nil, fmt.Errorf("%s: no reader for %s:// sources in this program", p, scheme)
		}
		return open(ctx, p, s.SHA256)
	}
	return os.Open(p)
}

// Each reads the source's records in order, calling fn with each; an error
// from fn (or header) stops the read and is returned as it is. Every other
// error names the file (and the line where there is one). For CSV, TSV and
// Parquet files, header (when not nil) is called first with the columns the
// file declares.
func Each(ctx context.Context, s Source, header func(Columns) error, fn func(Row) error) error {
	if header == nil {
		header = func(Columns) error { return nil }
	}
	format, err := s.FileFormat()
	if err != nil {
		return fmt.Errorf("%s: %w", s.Path(), err)
	}
	if s.IsSet() {
		return eachInSet(ctx, s, header, fn)
	}
	rc, err := Open(ctx, s)
	if err != nil {
		return err
	}
	defer rc.Close()
	return EachIn(s.Path(), format, rc, header, fn)
}

// EachIn is Each on decompressed bytes already open: path names them in
// errors, format is one of the File constants.
func EachIn(path, format string, r io.Reader, header func(Columns) error, fn func(Row) error) error {
	if header == nil {
		header = func(Columns) error { return nil }
	}
	switch format {
	case FileCSV:
		return eachCSV(path, r, ',', header, fn)
	case FileTSV:
		return eachCSV(path, r, '\t', header, fn)
	case FileParquet:
		return eachParquet(path, r, header, fn)
	}
	return eachJSONL(path, r, fn)
}

// Open opens the source for reading as a stream of its decompressed
// bytes, its pin (if any) checked before the first byte is returned: for
// readers of a line format of their own (the IF, NLG, MT and Safety
// presets).
func Open(ctx context.Context, s Source) (io.ReadCloser, error) {
	if s.IsSet() {
		return nil, fmt.Errorf("%s: a dataset named by config and split is several Parquet files, read as a table (a format with fields), not as one stream", s.Path())
	}
	rc, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	var r io.Reader = rc
	if s.SHA256 != "" {
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Path(), err)
		}
		if got := SHA256Hex(data); !strings.EqualFold(got, s.SHA256) {
			return nil, fmt.Errorf("%s: sha256 is %s, the config pins %s: the file changed", s.Path(), got, s.SHA256)
		}
		r, rc = bytes.NewReader(data), io.NopCloser(nil)
	}
	dr, closeFn, err := decompress(s.Path(), r)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return readCloser{dr, func() error { closeFn(); return rc.Close() }}, nil
}

// eachInSet reads a set's files in order as one table: a row's Line counts
// rows from the first file's first (so item ids stay unique across
// files); errors of a file's own name that file and its row.
func eachInSet(ctx context.Context, s Source, header func(Columns) error, fn func(Row) error) error {
	scheme, _, _ := strings.Cut(s.URI, "://")
	openersMu.RLock()
	resolve := setResolvers[scheme]
	openersMu.RUnlock()
	if resolve == nil {
		return fmt.Errorf("%s: config and split name a dataset of a repository; this program reads them for hf:// only", s.Path())
	}
	if s.Config == "" || s.Split == "" {
		return fmt.Errorf("%s: config and split are both required", s.Path())
	}
	files, err := resolve(ctx, s.URI, s.Config, s.Split, strings.ToLower(s.SHA256))
	if err != nil {
		return err
	}
	offset := 0
	for _, sf := range files {
		f, err := os.Open(sf.Path)
		if err != nil {
			return fmt.Errorf("%s: %w", sf.Name, err)
		}
		n := 0
		err = EachIn(sf.Name, FileParquet, f, header, func(r Row) error {
			n = r.Line
			r.Line += offset
			return fn(r)
		})
		f.Close()
		if err != nil {
			return err
		}
		offset += n
	}
	return nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// SHA256Hex is the lower-case hex SHA-256 of data.
func SHA256Hex(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func decompress(path string, r io.Reader) (io.Reader, func(), error) {
	name := strings.SplitN(path, "?", 2)[0]
	switch {
	case strings.HasSuffix(name, ".gz"):
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: not gzip: %w", path, err)
		}
		return gz, func() { gz.Close() }, nil
	case strings.HasSuffix(name, ".zst"), strings.HasSuffix(name, ".zstd"):
		zr, err := zstd.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: not zstd: %w", path, err)
		}
		return zr, zr.Close, nil
	}
	return r, func() {}, nil
}

// eachJSONL reads JSON Lines, or a JSON array of records (what pandas'
// to_json writes) when the file's first non-blank byte is "[".
func eachJSONL(path string, r io.Reader, fn func(Row) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	skipped := 0 // blank lines before the first record still count
	for {
		b, err := br.Peek(1)
		if err != nil || (b[0] != ' ' && b[0] != '\n' && b[0] != '\r' && b[0] != '\t') {
			break
		}
		if b[0] == '\n' {
			skipped++
		}
		br.ReadByte()
	}
	if b, err := br.Peek(1); err == nil && b[0] == '[' {
		return eachJSONArray(path, br, fn)
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := skipped
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if err := CheckJSON(text); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		var m map[string]any
		if err := json.Unmarshal(text, &m); err != nil {
			return fmt.Errorf("%s:%d: invalid JSON: %v", path, line, err)
		}
		if err := fn(Row{Line: line, Fields: m}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	return nil
}

func eachJSONArray(path string, r io.Reader, fn func(Row) error) error {
	dec := json.NewDecoder(r)
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
	for n := 1; dec.More(); n++ {
		var raw json.RawMessage // the bytes as written, for CheckJSON
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s: record %d: invalid JSON: %v", path, n, err)
		}
		if err := CheckJSON(raw); err != nil {
			return fmt.Errorf("%s: record %d: %w", path, n, err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%s: record %d: invalid JSON: %v", path, n, err)
		}
		if err := fn(Row{Line: n, Fields: m}); err != nil {
			return err
		}
	}
	return nil
}

// eachCSV reads a CSV or TSV file whose first record names the columns;
// every value is a string.
func eachCSV(path string, r io.Reader, comma rune, header func(Columns) error, fn func(Row) error) error {
	cr := csv.NewReader(r)
	cr.Comma = comma
	if comma == '\t' {
		cr.LazyQuotes = true // TSV files rarely quote; a stray quote is text
	}
	names, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s:1: no header row", path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(names) > 0 {
		names[0] = strings.TrimPrefix(names[0], "\ufeff")
	}
	seen := map[string]bool{}
	for _, h := range names {
		if h == "" || seen[h] {
			return fmt.Errorf("%s:1: header: column name %q is empty or repeated", path, h)
		}
		seen[h] = true
	}
	if err := header(Columns{Names: names, Line: 1}); err != nil {
		return err
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		m := make(map[string]any, len(names))
		for i, h := range names {
			m[h] = rec[i]
		}
		if err := fn(Row{Line: line, Fields: m}); err != nil {
			return err
		}
	}
}

// Columns is what a CSV, TSV or Parquet file declares its columns to be.
type Columns struct {
	Names []string
	Line  int // the header's line (CSV/TSV), 0 for Parquet
}
