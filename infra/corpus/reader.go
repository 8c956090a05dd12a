package corpus

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Corpus formats.
const (
	FormatText  = "text"  // documents are runs of non-empty lines separated by empty lines
	FormatLines = "lines" // every non-empty line is a document
	FormatJSONL = "jsonl" // every non-empty line is a JSON object; the document is its text field
)

// DefaultTextField is the JSONL field read when none is named.
const DefaultTextField = "text"

// Opener opens a source for reading from byte offset (of the stored,
// possibly compressed, object) and reports the object's total size as
// stored now. end is where the caller means to stop (< 0: the end of the
// object): it may read a little past end, so an Opener must serve those
// bytes too, but should not fetch far ahead of them. Open is the default:
// local files, and s3:// objects through ranged GETs (see ExpandS3).
type Opener func(ctx context.Context, src Source, offset, end int64) (rc io.ReadCloser, size int64, err error)

// Open opens an s3:// source with OpenS3 and anything else with OpenLocal.
func Open(ctx context.Context, src Source, offset, end int64) (io.ReadCloser, int64, error) {
	if IsS3(src.URI) {
		return OpenS3(ctx, src, offset, end)
	}
	return OpenLocal(ctx, src, offset, end)
}

// OpenLocal opens a local file; src.URI is its path. The page cache does
// the reading ahead, so end is not needed.
func OpenLocal(ctx context.Context, src Source, offset, _ int64) (io.ReadCloser, int64, error) {
	path := src.URI
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("%s: seek %d: %w", path, offset, err)
		}
	}
	return f, st.Size(), nil
}

// Source is one corpus file.
type Source struct {
	URI         string `json:"uri"`
	Size        int64  `json:"size"`                  // stored size in bytes
	ETag        string `json:"etag,omitempty"`        // S3 objects: the version listed, required of every ranged GET
	Format      string `json:"format"`                // text | lines | jsonl
	Compression string `json:"compression,omitempty"` // "" | gzip | zstd
	TextField   string `json:"text_field,omitempty"`  // jsonl only
}

// NewSource describes a corpus file. Compression comes from the name
// (.gz, .zst, .zstd); so does the format when format is empty: .jsonl,
// .ndjson and .json are JSONL, anything else is text.
func NewSource(uri string, size int64, format, textField string) (Source, error) {
	s := Source{URI: uri, Size: size, Format: format, TextField: textField}
	name := strings.ToLower(uri)
	if IsS3(uri) {
		name, _, _ = strings.Cut(name, "?") // the key, without the connection options
	}
	switch {
	case strings.HasSuffix(name, ".gz"):
		s.Compression, name = "gzip", strings.TrimSuffix(name, ".gz")
	case strings.HasSuffix(name, ".zst"):
		s.Compression, name = "zstd", strings.TrimSuffix(name, ".zst")
	case strings.HasSuffix(name, ".zstd"):
		s.Compression, name = "zstd", strings.TrimSuffix(name, ".zstd")
	}
	if s.Format == "" {
		switch filepath.Ext(name) {
		case ".jsonl", ".ndjson", ".json":
			s.Format = FormatJSONL
		default:
			s.Format = FormatText
		}
	}
	switch s.Format {
	case FormatText, FormatLines:
	case FormatJSONL:
		if s.TextField == "" {
			s.TextField = DefaultTextField
		}
	default:
		return s, fmt.Errorf("%s: unknown corpus format %q (want text, lines or jsonl)", uri, s.Format)
	}
	return s, nil
}

// ExpandLocal resolves local paths, globs and directories (walked
// recursively, hidden entries skipped) to sources, sorted by path.
func ExpandLocal(patterns []string, format, textField string) ([]Source, error) {
	seen := map[string]bool{}
	var paths []string
	add := func(p string) { // keep first spelling, drop repeats
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, pat := range patterns {
		matches, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("corpus %q: %w", pat, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("corpus %q: no such file", pat)
		}
		for _, m := range matches {
			st, err := os.Stat(m)
			if err != nil {
				return nil, fmt.Errorf("corpus %q: %w", m, err)
			}
			if !st.IsDir() {
				add(m)
				continue
			}
			err = filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if p != m && strings.HasPrefix(d.Name(), ".") {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if d.Type().IsRegular() {
					add(p)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("corpus %q: %w", m, err)
			}
		}
	}
	sort.Strings(paths)
	var out []Source
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("corpus %q: %w", p, err)
		}
		s, err := NewSource(p, st.Size(), format, textField)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Shard is a byte range of one source. It screens the documents that start
// in [Start, End); a document that starts inside runs to its end even past
// End. End < 0 means to the end of the stream. Compressed sources cannot be
// split, so they are one shard and offsets count decompressed bytes.
type Shard struct {
	Source Source `json:"source"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
}

func (s Shard) String() string {
	return fmt.Sprintf("%s[%d:%d]", s.Source.URI, s.Start, s.End)
}

// Plan splits sources into shards of about shardBytes (<= 0: one shard per
// file). Empty files get no shard.
func Plan(sources []Source, shardBytes int64) []Shard {
	var out []Shard
	for _, s := range sources {
		if s.Size == 0 {
			continue
		}
		if s.Compression != "" || shardBytes <= 0 || s.Size <= shardBytes {
			end := s.Size
			if s.Compression != "" {
				end = -1
			}
			out = append(out, Shard{Source: s, Start: 0, End: end})
			continue
		}
		for start := int64(0); start < s.Size; start += shardBytes {
			out = append(out, Shard{Source: s, Start: start, End: min(start+shardBytes, s.Size)})
		}
	}
	return out
}

// MinShardBytes is the smallest shard BalancedShardBytes cuts: below it the
// per-shard cost (an activity, a GET, a reader) starts to show.
const MinShardBytes = 16 << 20

// BalancedShardBytes is the shard size to give Plan so that workers
// parallel scans each get several shards (about four) of the splittable
// (uncompressed) bytes, never more than maxBytes nor less than
// MinShardBytes. One shard of maxBytes per file is badly balanced: with
// 256 MB shards a 315 MB file is cut into 256 and 59 MB, and two workers
// take as long as one does for 256 MB.
func BalancedShardBytes(sources []Source, maxBytes int64, workers int) int64 {
	if workers <= 1 || maxBytes <= 0 {
		return maxBytes
	}
	var splittable int64
	for _, s := range sources {
		if s.Compression == "" {
			splittable += s.Size
		}
	}
	return max(min(maxBytes, splittable/int64(4*workers)), min(maxBytes, MinShardBytes))
}

// openStream opens the decompressed stream of sh's source at offset from
// (in decompressed bytes), reading from the store only what is needed.
func openStream(ctx context.Context, open Opener, src Source, from, end int64) (io.Reader, func() error, error) {
	at := from
	if src.Compression != "" {
		at, end = 0, -1 // offsets count decompressed bytes
	}
	rc, size, err := open(ctx, src, at, end)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", src.URI, err)
	}
	// Shards were cut from the size listed when the run was planned; a file
	// that has grown or shrunk since would be screened inconsistently.
	if src.Size > 0 && size >= 0 && size != src.Size {
		rc.Close()
		return nil, nil, fmt.Errorf("%s: size is %d bytes, was %d when the corpus was listed (file changed?)", src.URI, size, src.Size)
	}
	if src.Compression == "" {
		return rc, rc.Close, nil
	}
	var r io.Reader
	closeAll := rc.Close
	switch src.Compression {
	case "gzip":
		zr, err := gzip.NewReader(bufio.NewReaderSize(rc, 1<<20))
		if err != nil {
			rc.Close()
			return nil, nil, fmt.Errorf("%s: gzip: %w", src.URI, err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(rc, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<31))
		if err != nil {
			rc.Close()
			return nil, nil, fmt.Errorf("%s: zstd: %w", src.URI, err)
		}
		r = zr
		closeAll = func() error { zr.Close(); return rc.Close() }
	default:
		rc.Close()
		return nil, nil, fmt.Errorf("%s: unknown compression %q", src.URI, src.Compression)
	}
	if from > 0 {
		// A compressed stream has no random access: decompress and discard.
		if n, err := io.CopyN(io.Discard, r, from); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("%s: skipping to offset %d (got %d): %w", src.URI, from, n, err)
		}
	}
	return r, closeAll, nil
}

// docReader splits a stream into documents. It starts reading three bytes
// before the first offset of interest: whether a line starts a document is
// decided by the line itself and at most the three bytes before it (an
// empty line is "\n" or "\r\n"), so a reader started anywhere agrees with
// one started at 0. That makes shard edges and resume offsets exact.
type docReader struct {
	br      *bufio.Reader
	format  string
	uri     string
	field   string // JSONL text field
	off     int64  // stream offset of the next byte br returns
	from    int64  // documents starting before from are skipped
	end     int64  // documents starting at or after end are not read (<0: none)
	maxDoc  int
	tail    [3]byte // last three bytes before off; '\n' before the stream start
	partial bool    // the first line read began before a line boundary

	line  []byte // scratch for lines longer than the buffer
	doc   []byte
	value []byte // decoded JSONL text field
	held  []byte // the empty line that ended a text document, not yet consumed
	heldS int64
}

// nextLine returns the next line (with its '\n' if any) and its start.
// The slice is valid until the next call.
func (d *docReader) nextLine() ([]byte, int64, error) {
	if d.held != nil {
		l, s := d.held, d.heldS
		d.held = nil
		return l, s, nil
	}
	start := d.off
	l, err := d.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		d.line = append(d.line[:0], l...)
		for err == bufio.ErrBufferFull {
			if len(d.line) > d.maxDoc {
				return nil, start, fmt.Errorf("%s: line at offset %d is longer than %d bytes", d.uri, start, d.maxDoc)
			}
			l, err = d.br.ReadSlice('\n')
			d.line = append(d.line, l...)
		}
		l = d.line
	}
	if err != nil && err != io.EOF {
		return nil, start, fmt.Errorf("%s: offset %d: %w", d.uri, start, err)
	}
	if len(l) == 0 {
		return nil, start, io.EOF
	}
	if len(l) > d.maxDoc {
		return nil, start, fmt.Errorf("%s: line at offset %d is longer than %d bytes", d.uri, start, d.maxDoc)
	}
	d.off += int64(len(l))
	return l, start, nil
}

// isEmptyLine: a line with nothing but its terminator.
func isEmptyLine(l []byte) bool {
	return len(l) == 0 || (len(l) == 1 && (l[0] == '\n' || l[0] == '\r')) || (len(l) == 2 && l[0] == '\r' && l[1] == '\n')
}

// prevLineEmpty reports, from the three bytes before a line start, whether
// the line before it was empty.
func prevLineEmpty(t [3]byte) bool {
	return t[2] == '\n' && (t[1] == '\n' || (t[1] == '\r' && t[0] == '\n'))
}

func (d *docReader) pushTail(l []byte) {
	switch {
	case len(l) >= 3:
		copy(d.tail[:], l[len(l)-3:])
	case len(l) == 2:
		d.tail = [3]byte{d.tail[2], l[0], l[1]}
	case len(l) == 1:
		d.tail = [3]byte{d.tail[1], d.tail[2], l[0]}
	}
}

// next returns the next document's raw text (for JSONL, the decoded text
// field), its start offset and the offset just past it. io.EOF ends the shard.
func (d *docReader) next() (doc []byte, start, end int64, err error) {
	for {
		l, s, err := d.nextLine()
		if err != nil {
			return nil, 0, 0, err
		}
		atLineStart := !d.partial && d.tail[2] == '\n'
		first := atLineStart && !isEmptyLine(l)
		if d.format == FormatText {
			first = first && prevLineEmpty(d.tail)
		}
		d.partial = false
		d.pushTail(l)
		if !first || s < d.from {
			continue
		}
		if d.end >= 0 && s >= d.end {
			return nil, 0, 0, io.EOF
		}
		switch d.format {
		case FormatLines:
			return l, s, s + int64(len(l)), nil
		case FormatJSONL:
			if s == 0 {
				l = bytes.TrimPrefix(l, []byte("\ufeff")) // a byte order mark
			}
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			v, found, err := appendJSONField(d.value[:0], l, []byte(d.field))
			if err != nil {
				return nil, 0, 0, fmt.Errorf("%s: line at offset %d: %w", d.uri, s, err)
			}
			if !found {
				return nil, 0, 0, fmt.Errorf("%s: line at offset %d: no string field %q", d.uri, s, d.field)
			}
			d.value = v
			return v, s, s + int64(len(l)), nil
		}
		// Text: gather lines up to the next empty line.
		d.doc = append(d.doc[:0], l...)
		e := s + int64(len(l))
		for {
			l2, s2, err := d.nextLine()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, 0, 0, err
			}
			if isEmptyLine(l2) {
				// Keep it for the tail bookkeeping of the next call.
				d.held, d.heldS = l2, s2
				break
			}
			d.pushTail(l2)
			d.doc = append(d.doc, l2...)
			e = s2 + int64(len(l2))
			if len(d.doc) > d.maxDoc {
				return nil, 0, 0, fmt.Errorf("%s: document at offset %d is longer than %d bytes (no empty line); use the lines format", d.uri, s, d.maxDoc)
			}
		}
		return d.doc, s, e, nil
	}
}

// newDocReader starts reading src's stream for documents starting in [from, end).
func newDocReader(ctx context.Context, open Opener, src Source, from, end int64, maxDoc int) (*docReader, func() error, error) {
	at := max(0, from-3)
	r, closer, err := openStream(ctx, open, src, at, end)
	if err != nil {
		return nil, nil, err
	}
	bufSize := 1 << 20
	if end >= 0 {
		// Small shards need no big buffer; long lines still work (nextLine).
		bufSize = int(min(int64(bufSize), max(4096, end-at+4096)))
	}
	d := &docReader{
		br:     bufio.NewReaderSize(r, bufSize),
		format: src.Format,
		uri:    src.URI,
		field:  src.TextField,
		off:    at,
		from:   from,
		end:    end,
		maxDoc: maxDoc,
		tail:   [3]byte{'\n', '\n', '\n'},
	}
	if at > 0 {
		d.tail = [3]byte{}
		d.partial = true
	}
	return d, closer, nil
}
