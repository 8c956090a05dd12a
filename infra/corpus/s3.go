package corpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/glossobench/glossobench/infra/store"
)

// S3 corpora. A corpus entry
//
//	s3://bucket/prefix/?endpoint=http://127.0.0.1:7070&region=us-east-1&path_style=true&access_key_env=A&secret_key_env=B
//
// takes the query parameters of an S3 store URI (infra/store.Open) and names
// every object under the prefix, like a local directory: a prefix ending in
// "/" (or empty) is a folder, one without names that object or the folder of
// that name, never "prefix2/...". Objects whose path below the prefix has a
// segment starting with "." are skipped, as hidden local files are. Each
// object becomes a Source whose URI is s3://bucket/key with the entry's query
// (so any worker can open it from the URI alone; the query names credential
// variables, never their values) and whose ETag is the one listed.
//
// Objects are read with ranged GETs of S3ChunkBytes, each requiring the
// listed ETag (If-Match): a shard starts at its byte offset without reading
// what comes before and past its end fetches only small ranges (to finish
// its last document), and an object replaced during a run fails the screen instead of mixing two
// versions. A connection dropped mid-chunk is resumed from the byte reached.

// S3ChunkBytes is the length of one ranged GET.
var S3ChunkBytes int64 = 8 << 20

// S3TailBytes is the length of a ranged GET past the end a reader was
// opened for: documents are short next to a chunk.
var S3TailBytes int64 = 64 << 10

// s3BodyRetries is how many times in a row a response body that broke off
// without bringing a byte is re-requested before the read fails.
const s3BodyRetries = 5

// IsS3 reports whether a corpus entry or source URI names S3.
func IsS3(uri string) bool { return strings.HasPrefix(uri, "s3://") }

// s3Location is a parsed s3:// URI: where to connect, the bucket and the key
// (or prefix) as written.
type s3Location struct {
	cfg      store.S3Config
	bucket   string
	key      string
	rawQuery string
}

func parseS3Location(uri string) (s3Location, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return s3Location{}, fmt.Errorf("corpus %q: %w", uri, err)
	}
	// The options are those of a store URI; the path is a corpus key or
	// prefix, which need not be a valid store key (a trailing "/", say).
	opts := url.URL{Scheme: "s3", Host: u.Host, RawQuery: u.RawQuery}
	cfg, err := store.ParseS3URI(opts.String())
	if err != nil {
		return s3Location{}, fmt.Errorf("corpus %q: %w", redactQuery(uri), err)
	}
	return s3Location{cfg: cfg, bucket: u.Host, key: strings.TrimPrefix(u.Path, "/"), rawQuery: u.RawQuery}, nil
}

// redactQuery is uri without its query, for error messages about a URI that
// did not parse (its query might hold something that was not meant for logs).
func redactQuery(uri string) string {
	if i := strings.IndexByte(uri, '?'); i >= 0 {
		return uri[:i] + "?..."
	}
	return uri
}

func (l s3Location) objectURI(key string) string {
	u := url.URL{Scheme: "s3", Host: l.bucket, Path: "/" + key, RawQuery: l.rawQuery}
	return u.String()
}

// s3HTTPClient, when set, replaces the SDK's HTTP client (tests break
// response bodies with it).
var s3HTTPClient aws.HTTPClient

// s3Clients caches one client per connection setting (not per bucket).
var s3Clients struct {
	sync.Mutex
	m map[store.S3Config]*s3.Client
}

func s3Client(ctx context.Context, cfg store.S3Config) (*s3.Client, error) {
	cfg.Bucket, cfg.Prefix = "", ""
	s3Clients.Lock()
	defer s3Clients.Unlock()
	if c, ok := s3Clients.m[cfg]; ok {
		return c, nil
	}
	c, _, err := store.NewS3Client(ctx, cfg, func(o *s3.Options) {
		if s3HTTPClient != nil {
			o.HTTPClient = s3HTTPClient
		}
	})
	if err != nil {
		return nil, err
	}
	if s3Clients.m == nil {
		s3Clients.m = map[store.S3Config]*s3.Client{}
	}
	s3Clients.m[cfg] = c
	return c, nil
}

// ExpandS3 lists the objects a corpus entry names (see the S3 corpora note
// above), sorted by key. format and textField are as for NewSource.
func ExpandS3(ctx context.Context, uri, format, textField string) ([]Source, error) {
	loc, err := parseS3Location(uri)
	if err != nil {
		return nil, err
	}
	client, err := s3Client(ctx, loc.cfg)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", loc.objectURI(loc.key), err)
	}
	folder := loc.key == "" || strings.HasSuffix(loc.key, "/")
	type object struct {
		key, etag string
		size      int64
	}
	var objs []object
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(loc.bucket), Prefix: aws.String(loc.key)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("corpus %s: list: %w", loc.objectURI(loc.key), err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			rest := strings.TrimPrefix(key, loc.key)
			if !folder && rest != "" {
				if !strings.HasPrefix(rest, "/") {
					continue // "prefix2/..." is not under "prefix"
				}
				rest = rest[1:]
			}
			if strings.HasSuffix(key, "/") || hiddenPath(rest) {
				continue // folder markers and hidden files
			}
			objs = append(objs, object{key: key, etag: aws.ToString(o.ETag), size: aws.ToInt64(o.Size)})
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("corpus %s: no objects under this prefix", loc.objectURI(loc.key))
	}
	slices.SortFunc(objs, func(a, b object) int { return strings.Compare(a.key, b.key) })
	out := make([]Source, 0, len(objs))
	for _, o := range objs {
		s, err := NewSource(loc.objectURI(o.key), o.size, format, textField)
		if err != nil {
			return nil, err
		}
		s.ETag = o.etag
		out = append(out, s)
	}
	return out, nil
}

func hiddenPath(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// Expand resolves corpus entries to sources: local paths, globs and
// directories (ExpandLocal, sorted by path together) followed by the objects
// of each s3:// entry in the order given. A source named twice is kept once.
func Expand(ctx context.Context, entries []string, format, textField string) ([]Source, error) {
	var local, remote []string
	for _, e := range entries {
		if IsS3(e) {
			remote = append(remote, e)
		} else {
			local = append(local, e)
		}
	}
	var out []Source
	if len(local) > 0 {
		srcs, err := ExpandLocal(local, format, textField)
		if err != nil {
			return nil, err
		}
		out = srcs
	}
	seen := map[string]bool{}
	for _, s := range out {
		seen[s.URI] = true
	}
	for _, e := range remote {
		srcs, err := ExpandS3(ctx, e, format, textField)
		if err != nil {
			return nil, err
		}
		for _, s := range srcs {
			if !seen[s.URI] {
				seen[s.URI] = true
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// OpenS3 opens an s3:// source at offset. It reports the size src was
// listed with; every GET checks the object still has src.ETag and that size.
// The next chunk is fetched while the current one is read (two chunk
// buffers per reader), so the network and the screen overlap. Chunks end at
// end (when >= 0); past it, where a shard only finishes its last document,
// they are S3TailBytes long, so a shard fetches little that is not its own.
func OpenS3(ctx context.Context, src Source, offset, end int64) (io.ReadCloser, int64, error) {
	loc, err := parseS3Location(src.URI)
	if err != nil {
		return nil, 0, err
	}
	client, err := s3Client(ctx, loc.cfg)
	if err != nil {
		return nil, 0, err
	}
	etag, size := src.ETag, src.Size
	if etag == "" {
		// A source not from ExpandS3: learn its version and size first.
		head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(loc.bucket), Key: aws.String(loc.key)})
		if err != nil {
			return nil, 0, fmt.Errorf("head: %w", err)
		}
		etag, size = aws.ToString(head.ETag), aws.ToInt64(head.ContentLength)
	}
	fctx, cancel := context.WithCancel(ctx)
	r := &s3Reader{
		obj:    s3Object{client: client, bucket: loc.bucket, key: loc.key, etag: etag, size: size},
		pos:    offset,
		ctx:    fctx,
		cancel: cancel,
		chunks: make(chan s3Chunk, 1),
		free:   make(chan []byte, 2),
	}
	r.free <- nil // two buffers, allocated on first use
	r.free <- nil
	r.wg.Add(1)
	go r.fetch(fctx, offset, end)
	return r, size, nil
}

// s3Object is one listed version of an object. Its errors do not name it:
// the callers wrap them with the source URI.
type s3Object struct {
	client      *s3.Client
	bucket, key string
	etag        string
	size        int64
}

// s3Chunk is one fetched range, or the error that ended fetching.
type s3Chunk struct {
	data []byte
	err  error
}

// s3Reader returns the chunks its fetch goroutine reads ahead.
type s3Reader struct {
	obj    s3Object
	pos    int64  // next byte Read returns
	buf    []byte // the chunk being read
	cur    []byte // its unread rest
	err    error
	ctx    context.Context // the fetcher's
	cancel context.CancelFunc
	chunks chan s3Chunk
	free   chan []byte // buffers the fetcher may fill
	wg     sync.WaitGroup
}

func (r *s3Reader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.pos >= r.obj.size {
			return 0, io.EOF
		}
		if r.buf != nil {
			r.free <- r.buf[:0]
			r.buf = nil
		}
		c, ok := <-r.chunks
		switch {
		case !ok: // fetch stops early only when cancelled
			r.err = context.Cause(r.ctx)
		case c.err != nil:
			r.err = c.err
		default:
			r.buf, r.cur = c.data, c.data
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	r.pos += int64(n)
	return n, nil
}

func (r *s3Reader) Close() error {
	r.cancel()
	r.wg.Wait()
	return nil
}

// fetch reads the object from pos on in chunks of S3ChunkBytes up to end
// and of S3TailBytes after it.
func (r *s3Reader) fetch(ctx context.Context, pos, end int64) {
	defer r.wg.Done()
	defer close(r.chunks)
	for pos < r.obj.size {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-ctx.Done():
			return
		}
		n := max(S3ChunkBytes, 1)
		switch {
		case end < 0:
		case pos < end:
			n = min(n, end-pos)
		default:
			n = min(n, S3TailBytes)
		}
		n = min(n, r.obj.size-pos)
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		err := r.obj.readRange(ctx, buf, pos)
		select {
		case r.chunks <- s3Chunk{data: buf, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
		pos += n
	}
}

// readRange fills buf with the object's bytes from pos, re-requesting the
// rest when a response body breaks off.
func (o s3Object) readRange(ctx context.Context, buf []byte, pos int64) error {
	got, failures := 0, 0
	for got < len(buf) {
		from, last := pos+int64(got), pos+int64(len(buf))-1
		body, err := o.get(ctx, from, last)
		if err != nil {
			return err
		}
		n, err := io.ReadFull(body, buf[got:])
		body.Close()
		got += n
		if n > 0 {
			failures = 0 // only attempts that bring nothing count against the limit
		}
		if err != nil && got < len(buf) {
			if failures++; failures > s3BodyRetries || ctx.Err() != nil {
				return fmt.Errorf("reading at offset %d: %w", pos+int64(got), err)
			}
		}
	}
	return nil
}

// get requests bytes [from, last] of the listed version.
func (o s3Object) get(ctx context.Context, from, last int64) (io.ReadCloser, error) {
	out, err := o.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket:  aws.String(o.bucket),
		Key:     aws.String(o.key),
		Range:   aws.String(fmt.Sprintf("bytes=%d-%d", from, last)),
		IfMatch: aws.String(o.etag),
	})
	if err != nil {
		if s3PreconditionFailed(err) {
			return nil, fmt.Errorf("the object changed since the corpus was listed (ETag %s)", o.etag)
		}
		return nil, fmt.Errorf("get bytes %d-%d: %w", from, last, err)
	}
	start, total, ok := parseContentRange(aws.ToString(out.ContentRange))
	if !ok || start != from || total != o.size {
		out.Body.Close()
		return nil, fmt.Errorf("asked for bytes %d-%d of %d, got Content-Range %q (object changed?)", from, last, o.size, aws.ToString(out.ContentRange))
	}
	return out.Body, nil
}

// parseContentRange reads "bytes START-END/TOTAL".
func parseContentRange(v string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	span, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	first, _, found := strings.Cut(span, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(first, 10, 64)
	total, err2 := strconv.ParseInt(tot, 10, 64)
	return start, total, err1 == nil && err2 == nil
}

func s3PreconditionFailed(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "PreconditionFailed" {
		return true
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusPreconditionFailed
}
